import {Flags} from '@oclif/core'

import {BaseCommand} from '../../cli/base-command.js'
import {collect, listFlags, pageParams} from '../../cli/list.js'
import {table} from '../../cli/output.js'
import {bodyFromFlags, flagsFromSchema} from '../../cli/schema-flags.js'
import {sessionColumns} from '../../cli/services/commerce-view.js'
import {endpoints} from '@payapp/sdk/endpoints'

const filters = flagsFromSchema(endpoints['checkoutSessions.list'].query!)

export default class SessionsList extends BaseCommand<typeof SessionsList> {
  static override endpoint = 'checkoutSessions.list' as const
  static override summary = endpoints['checkoutSessions.list'].summary + ' (merchant API).'
  static override examples = ['<%= config.bin %> sessions list --status open', '<%= config.bin %> sessions list --starting-after cs_123 --limit 10 --json']
  static override flags = {
    ...listFlags,
    ...filters.flags,
    'starting-after': Flags.string({description: 'Cursor: list sessions older than this session id.', exclusive: ['offset']}),
  }

  async run() {
    const client = await this.merchantClient()
    const query = await bodyFromFlags(filters, this.flags)
    const cursor = this.flags['starting-after'] ? {starting_after: this.flags['starting-after']} : {}
    const page = await collect(client.checkout.sessions.list({...pageParams(this.flags), ...cursor, ...query}), this.flags)
    return this.render(page, (p) => this.log(table(p.data, sessionColumns)))
  }
}
