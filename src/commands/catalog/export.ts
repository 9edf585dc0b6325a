import {writeFile} from 'node:fs/promises'

import {Flags} from '@oclif/core'

import {CatalogCommand, catalogFlags, catalogRetryFlag} from '../../cli/catalog-command.js'

export default class CatalogExport extends CatalogCommand<typeof CatalogExport> {
  static override summary = 'Write the current catalogue as a catalogue file (YAML, JSON or CSV).'
  static override description = 'Every active product with its active prices, option groups and variants. Planning the output against the same store shows no change. Products and prices made outside a catalogue are keyed by their ids. Only what differs from the defaults is written (so `export | diff - catalog.yaml` is useful in review); --full writes every field.'
  static override examples = ['<%= config.bin %> catalog export -o catalog.yaml', '<%= config.bin %> catalog export --format csv > catalog.csv', '<%= config.bin %> catalog export --env live --door store --format json', '<%= config.bin %> catalog export | diff - catalog.yaml', '<%= config.bin %> catalog export --full -o full.yaml']

  static override flags = {
    format: Flags.option({options: ['yaml', 'json', 'csv'] as const, description: 'Format. Default: from the -o file extension, else yaml.'})(),
    output: Flags.string({char: 'o', description: 'Write to this file instead of stdout.'}),
    full: Flags.boolean({description: 'Write every field, defaults included (by default only what differs from them, so the output diffs against its source).'}),
    door: catalogFlags.door,
    concurrency: catalogFlags.concurrency,
    ...catalogRetryFlag,
  }

  async run() {
    const {exportCatalog, formatOf, serializeCatalog} = await import('../../cli/services/catalog/index.js')
    const catalog = await exportCatalog(await this.catalogClient(), {concurrency: this.flags.concurrency, full: this.flags.full})
    if (this.jsonEnabled()) return catalog
    const format = this.flags.format ?? (this.flags.output ? formatOf(this.flags.output) : 'yaml')
    const text = serializeCatalog(catalog, format, this.flags.full)
    if (this.flags.output) {
      await writeFile(this.flags.output, text)
      this.logToStderr(`Wrote ${catalog.products.length} products to ${this.flags.output}`)
    } else process.stdout.write(text)
    return undefined
  }
}
