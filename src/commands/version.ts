import {BaseCommand, globalFlags} from '../cli/base-command.js'

export default class Version extends BaseCommand<typeof Version> {
  static override summary = 'Show the payapp version, with the Node.js version and platform (the same as --version).'
  static override examples = ['<%= config.bin %> version', '<%= config.bin %> version --json']
  static override baseFlags = globalFlags()

  async run() {
    const {version, platform, arch} = this.config
    const result = {version, node: process.version, platform, arch}
    return this.render(result, () => this.log(`payapp/${version} ${platform}-${arch} node-${process.version}`))
  }
}
