import {BaseCommand} from '../../cli/base-command.js'
import {table} from '../../cli/output.js'
import {bodyFromFlags, flagsFromSchema} from '../../cli/schema-flags.js'
import {fraudWarningColumns} from '../../cli/services/commerce-view.js'
import {endpoints} from '@payapp/sdk/endpoints'

// Keyset-paginated: one page per call, the next one with --starting-after the last id.
const filters = flagsFromSchema(endpoints['fraudWarnings.list'].query)

export default class FraudWarningsList extends BaseCommand<typeof FraudWarningsList> {
  static override endpoint = 'fraudWarnings.list' as const
  static override summary = endpoints['fraudWarnings.list'].summary + ' (merchant API, secret key); one page, --starting-after for the next.'
  static override examples = ['<%= config.bin %> fraud-warnings list --status open', '<%= config.bin %> fraud-warnings list --limit 100 --starting-after 0b5e2f4c-6d1a-4b8e-9f3a-2c7d8e9f0a1b --json']
  static override flags = {...filters.flags}

  async run() {
    const query = await bodyFromFlags(filters, this.flags)
    const page = await (await this.merchantClient()).fraudWarnings.list(query)
    return this.render(page, (p) => this.log(table(p.data, fraudWarningColumns)))
  }
}
