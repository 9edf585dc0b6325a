import {BaseCommand} from '../../cli/base-command.js'

export default class CatalogSchema extends BaseCommand<typeof CatalogSchema> {
  static override summary = 'Print the catalogue file format as JSON Schema.'
  static override description = 'For editors (YAML language server: # yaml-language-server: $schema=…) and CI linters. The fields are those of the API\'s create schemas.'
  static override examples = ['<%= config.bin %> catalog schema > catalog.schema.json']

  async run() {
    const {catalogJsonSchema} = await import('../../cli/services/catalog/schema.js')
    const schema = catalogJsonSchema()
    if (!this.jsonEnabled()) process.stdout.write(JSON.stringify(schema, null, 2) + '\n')
    return schema
  }
}
