import {Args, Flags} from '@oclif/core'

import {AdminCommand} from '../../../cli/admin-command.js'
import {usageError} from '../../../cli/exit-codes.js'
import {adminFlags, clockFlags, clockMerchant, describeClock} from '../../../cli/services/gateway-admin.js'

const UNITS: Record<string, number> = {s: 1, m: 60, h: 3600, d: 86_400, w: 7 * 86_400}

/** `30d`, `12h`, `90m`, `45s`, `2w` or plain seconds, as seconds. */
export function parseDuration(text: string): number {
  const m = /^(\d+)([smhdw]?)$/.exec(text.trim())
  if (!m) throw usageError(`Not a duration: "${text}" (use e.g. 30d, 12h, 90m, 45s, 2w, or seconds)`, 'duration')
  return Number(m[1]) * UNITS[m[2] || 's']
}

export default class GatewayClockAdvance extends AdminCommand<typeof GatewayClockAdvance> {
  static override summary = "Move a running gateway's test clock forward; returns once everything due has happened."
  static override description = `Renewals, dunning retries, trial reminders, expiries and webhook delivery attempts due up to the new time run in time order before the command returns, each stamped with its own moment on the clock. There is no cap on the jump: a year of monthly renewals is 12 invoices. Each merchant has its own clock: this moves the profile's merchant's (--merchant, PAYAPP_MERCHANT), leaving other merchants' work where it was; with --all, or no merchant configured, every clock moves.`
  static override examples = [
    '<%= config.bin %> gateway clock advance 30d',
    '<%= config.bin %> gateway clock advance 36h --json',
    '<%= config.bin %> gateway clock advance --to 2027-01-01T00:00:00Z',
    '<%= config.bin %> gateway clock advance 1d --all',
  ]
  static override args = {duration: Args.string({description: 'How far: 30d, 12h, 90m, 45s, 2w, or seconds'})}
  static override flags = {
    'admin-key': adminFlags['admin-key'],
    ...clockFlags,
    to: Flags.string({description: 'Move to this moment instead (ISO 8601 or Unix seconds); never backwards.'}),
  }

  async run() {
    const {duration} = this.args
    const {to} = this.flags
    if ((duration === undefined) === (to === undefined)) throw usageError('Give a duration (e.g. 30d) or --to <time>, not both', 'duration')
    let target: number | undefined
    if (to !== undefined) {
      target = /^\d+$/.test(to) ? Number(to) : Math.floor(Date.parse(to) / 1000)
      if (!Number.isFinite(target)) throw usageError(`--to: not a time: "${to}"`, '--to')
    }
    const seconds = duration === undefined ? undefined : parseDuration(duration)
    const admin = await this.admin()
    const merchant = await clockMerchant(this.flags.all, () => this.configuredMerchant())
    const spin = this.spinner('Advancing the clock')
    const clock = target === undefined ? await admin.clock.advance(seconds!, {merchant}) : await admin.clock.advanceTo(target, {merchant})
    spin.stop()
    return this.render(clock, (c) => this.log(`${describeClock(c)}; ${c.jobs_run ?? 0} scheduled job(s) ran`))
  }
}
