import {BaseCommand} from '../../cli/base-command.js'
import {table} from '../../cli/output.js'
import {bodyFromFlags, flagsFromSchema} from '../../cli/schema-flags.js'
import {analyticsColumns, analyticsHeading} from '../../cli/services/commerce-view.js'
import {endpoints} from '@payapp/sdk/endpoints'

const query = flagsFromSchema(endpoints['analytics.summary'].query)

export default class AnalyticsSummary extends BaseCommand<typeof AnalyticsSummary> {
  static override endpoint = 'analytics.summary' as const
  static override summary = endpoints['analytics.summary'].summary + ', per currency.'
  static override examples = ['<%= config.bin %> analytics summary', '<%= config.bin %> analytics summary --days 7 --env live --json']
  static override flags = {...query.flags}

  async run() {
    const client = await this.appClient()
    const summary = await client.analytics.summary(await bodyFromFlags(query, this.flags))
    return this.render(summary, (s) => this.log(`${analyticsHeading(s)}\n\n${s.currencies.length ? table(s.currencies, analyticsColumns) : 'No payments in this window.'}`))
  }
}
