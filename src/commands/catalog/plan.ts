import {Args, Flags} from '@oclif/core'

import {CatalogCommand, catalogFlags, catalogRetryFlag} from '../../cli/catalog-command.js'
import {planTable} from '../../cli/services/catalog/view.js'

export default class CatalogPlan extends CatalogCommand<typeof CatalogPlan> {
  static override summary = 'Show what `catalog apply` would change to make the platform match FILE.'
  static override description = `Per object: create, update (with the changed fields), replace (a price whose amount, currency or interval changed; a variant whose option combination changed), archive, delete, unchanged, left (in the store but not the file; --prune removes it) or blocked (a removal the platform's guards refuse).
With --json: {changes: [{action, kind, key, fields?, reason?}], summary: {create, update, replace, archive, delete, unchanged, left, blocked}}.`
  static override examples = ['<%= config.bin %> catalog plan catalog.yaml', '<%= config.bin %> catalog plan catalog.csv --prune --json', 'cat catalog.yaml | <%= config.bin %> catalog plan -']

  static override args = {file: Args.string({required: true, description: 'Catalogue file (.yaml, .yml, .json, .csv), or - for YAML/JSON on stdin.'})}
  static override flags = {
    prune: Flags.boolean({description: 'Plan to archive products and delete variants that are not in the file.'}),
    ...catalogFlags,
    ...catalogRetryFlag,
  }

  async run() {
    const {planCatalog} = await import('../../cli/services/catalog/index.js')
    const {catalog, baseDir, format} = await this.readCatalog(this.args.file)
    const plan = await planCatalog(await this.catalogClient(), catalog, {prune: this.flags.prune, baseDir, concurrency: this.flags.concurrency, csv: format === 'csv'})
    return this.render({changes: plan.changes, summary: plan.summary}, (out) => this.log(planTable(out)))
  }
}
