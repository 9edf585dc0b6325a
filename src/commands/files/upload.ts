import {Args, Flags} from '@oclif/core'

import {BaseCommand} from '../../cli/base-command.js'
import {endpoints} from '@payapp/sdk/endpoints'

export default class FilesUpload extends BaseCommand<typeof FilesUpload> {
  static override endpoint = 'files.create' as const
  static override summary = 'Upload a file (at most 5 MB) and print its storage path, for --images or --image-path.'
  static override description = `${endpoints['files.create'].summary}. Only the storage path goes to stdout, so it can be captured: IMG=$(payapp files upload tee.png).`
  static override examples = [
    '<%= config.bin %> files upload ./tee.png',
    '<%= config.bin %> products create --name Tee --images "$(<%= config.bin %> files upload ./tee.png)"',
    '<%= config.bin %> files upload ./manual.pdf --json',
  ]

  static override args = {path: Args.string({required: true, description: 'File to upload'})}
  static override flags = {
    filename: Flags.string({description: 'Name to store it under (default: the file name).'}),
    'content-type': Flags.string({description: 'Content type (default: from the extension or the bytes).'}),
  }

  async run() {
    const client = await this.appClient()
    const file = await client.files.upload(this.args.path, {filename: this.flags.filename, contentType: this.flags['content-type']})
    return this.render(file, (f) => {
      this.log(f.path)
      this.logToStderr(`Uploaded ${f.filename} (${f.size} bytes, ${f.content_type}) as ${f.id}`)
    })
  }
}
