import {Flags} from '@oclif/core'

import {BaseCommand} from '../cli/base-command.js'
import {DOOR_PREFIX, type Door} from '@payapp/sdk/endpoints'

const DOORS = Object.keys(DOOR_PREFIX) as Door[]

export default class OpenApi extends BaseCommand<typeof OpenApi> {
  static override summary = 'Print or write the OpenAPI 3.1 document of the platform, generated from the SDK\'s model.'
  static override description = `Every path and method of the chosen API (or all), with parameters, request bodies, responses and their errors, security schemes and scopes, plus a webhooks section with each event type. Prism, Postman, Redocly and code generators (openapi-typescript) read it. Without --output the document goes to stdout.`
  static override examples = [
    '<%= config.bin %> openapi > openapi.json',
    '<%= config.bin %> openapi --door app -o app-api.json',
    '<%= config.bin %> openapi -o openapi.json --base-url https://api.example.test',
  ]

  static override flags = {
    door: Flags.option({options: [...DOORS, 'all'] as const, default: 'all' as const, description: 'Which API to describe.'})(),
    output: Flags.string({char: 'o', description: 'Write the document to this file instead of stdout.'}),
  }

  async run() {
    const [{openapiDocument}, {writeFile}] = await Promise.all([import('@payapp/sdk/openapi'), import('node:fs/promises')])
    const door = this.flags.door
    const doc = openapiDocument({doors: door === 'all' ? DOORS : [door], serverUrl: this.flags['base-url']})
    const text = JSON.stringify(doc, null, 2) + '\n'
    if (!this.flags.output) {
      // The document is the output, --json or not.
      if (!this.jsonEnabled()) process.stdout.write(text)
      return doc
    }
    await writeFile(this.flags.output, text)
    const summary = {file: this.flags.output, paths: Object.keys(doc.paths as object).length, webhooks: Object.keys(doc.webhooks as object).length}
    return this.render(summary, (s) => this.log(`Wrote ${s.file}: ${s.paths} paths, ${s.webhooks} event types`))
  }
}
