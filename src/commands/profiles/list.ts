import {BaseCommand} from '../../cli/base-command.js'
import {DEFAULTS, ENVS, profileNames} from '../../cli/config.js'
import {CREDENTIAL_KINDS, mask} from '../../cli/credentials.js'
import {table} from '../../cli/output.js'

export default class ProfilesList extends BaseCommand<typeof ProfilesList> {
  static override summary = 'List profiles with their base URL, environment and masked credentials; * marks the current one.'
  static override examples = ['<%= config.bin %> profiles list', '<%= config.bin %> profiles list --json']

  async run() {
    const [config, {profile: current}, stored] = await Promise.all([this.loadConfig(), this.context(), this.credentialStore().list()])
    const names = [...new Set([...profileNames(config), ...stored.map((c) => c.profile)])].sort()
    // Masked under --json too: secrets are never printed in full.
    const secret = (name: string, env: string, kind: string) =>
      mask(stored.find((c) => c.profile === name && c.env === env && c.kind === kind)?.secret) || null
    const profiles = names.map((name) => ({
      name, current: name === current, base_url: config.profiles[name]?.base_url ?? DEFAULTS.baseUrl, env: config.profiles[name]?.env ?? DEFAULTS.env,
      credentials: {
        live: {token: secret(name, 'live', 'token'), secret_key: secret(name, 'live', 'secret_key')},
        test: {token: secret(name, 'test', 'token'), secret_key: secret(name, 'test', 'secret_key')},
      },
    }))
    const credentialColumns = ENVS.flatMap((env) => CREDENTIAL_KINDS.map((kind) => ({
      key: `${env} ${kind}`, get: (p: (typeof profiles)[number]) => p.credentials[env][kind] ?? '-',
    })))
    return this.render({current_profile: current, profiles}, (data) => this.log(table(data.profiles, [
      {key: '', get: (p) => (p.current ? '*' : '')}, 'name', 'env', {key: 'base_url', header: 'BASE URL'}, ...credentialColumns,
    ])))
  }
}
