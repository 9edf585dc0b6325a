/**
 * `payapp listen`: a relay on 127.0.0.1 that the gateway delivers webhooks to, forwarding each one to
 * the developer's app with the same raw body and signature header, so the app verifies it exactly as it
 * would a delivery from the platform.
 *
 * It loses nothing across gaps: a ledger kept per profile, environment and merchant (in the config dir)
 * remembers up to which event of the gateway's log everything was forwarded (the cursor) and which later
 * events were; on start, and when its endpoint had to be registered again, the events logged since the
 * cursor that were not forwarded are fetched from the admin API and forwarded oldest first, signed with
 * listen's secret, each once. A redelivery of a delivery the app already accepted (the gateway stopped
 * before it heard the answer) is answered for the app and not forwarded again; a second delivery of an
 * event (a `duplicate` fault rule) is forwarded, as the platform would send it.
 */
import {mkdir, readFile} from 'node:fs/promises'
import {createServer, type IncomingMessage, type Server} from 'node:http'
import type {AddressInfo} from 'node:net'
import {join} from 'node:path'

import {DELIVERY_ID_HEADER, matchesEventType, SIGNATURE_HEADER, signWebhookPayload} from '@payapp/sdk/webhooks-node'

import {writePrivateFile} from '../config.js'
import {date} from '../output.js'

/** Below the gateway's 15 s delivery timeout, so a slow app is reported here rather than there. */
const FORWARD_TIMEOUT_MS = 10_000
/** The relay's path: marks an endpoint as one `listen` registered, so a later run can find it if stale. */
export const RELAY_PATH = '/payapp-listen/webhooks'
/** How often `listen` checks that the gateway is still there. */
export const HEALTH_INTERVAL_MS = 2000
/** Events per page when reading the log to catch up. */
const PAGE = 1000

/** One delivery as relayed: what the gateway sent and what the app answered. */
export interface RelayedEvent {
  /** ISO-8601 wall-clock time the relay received it. */
  received: string
  /** The event's time on the gateway clock (Unix seconds), which a test clock may have moved. */
  created: number | null
  id: string | null
  type: string | null
  /** The app's HTTP status; null when it could not be reached (see `error`). */
  status: number | null
  error?: string
  /** Forwarded by a catch-up from the event log, not delivered by the gateway. */
  caught_up?: true
}

export interface Relay {
  url: string
  /** Holds deliveries until `release` (while a catch-up forwards older events first). */
  hold(): void
  release(): void
  close(): Promise<void>
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => resolve(Buffer.concat(chunks)))
    req.on('error', reject)
  })
}

function describe(err: unknown): string {
  const e = err as {name?: string; message?: string; cause?: {code?: string}}
  if (e?.name === 'TimeoutError') return `timeout after ${FORWARD_TIMEOUT_MS / 1000} s`
  return e?.cause?.code ?? e?.message ?? String(err)
}

const ok = (status: number | null) => status !== null && status >= 200 && status < 300

/** What the relay and a catch-up forward: the raw body with its signature, to the app, once. */
async function forward(forwardTo: string, body: Buffer | string, headers: Record<string, string>): Promise<{status: number | null; error?: string}> {
  try {
    const answer = await fetch(forwardTo, {method: 'POST', headers, body, redirect: 'manual', signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS)})
    await answer.body?.cancel().catch(() => {})
    return {status: answer.status}
  } catch (err) {
    return {status: null, error: describe(err)}
  }
}

function eventFields(body: Buffer | string): {id: string | null; type: string | null; created: number | null} {
  try {
    const event = JSON.parse(body.toString()) as {id?: unknown; type?: unknown; created?: unknown}
    return {
      id: typeof event.id === 'string' ? event.id : null,
      type: typeof event.type === 'string' ? event.type : null,
      created: typeof event.created === 'number' ? event.created : null,
    }
  } catch {
    // Not JSON: still forwarded untouched; the app decides what it is.
    return {id: null, type: null, created: null}
  }
}

/** Persisted by the ledger: where the log was last fully forwarded, and what was forwarded after it. */
interface LedgerState {
  gateway: string
  /** The newest event id up to which every selected event was forwarded; null: from the log's start. */
  cursor: string | null
  forwarded: string[]
}

/**
 * What `listen` has forwarded: per profile, environment and merchant, in `<config dir>/listen/`. Only
 * events the app accepted (2xx) count as forwarded.
 */
export class Ledger {
  /** Deliveries the app accepted in this run, by the gateway's delivery id. */
  private readonly deliveries = new Set<string>()
  /** Events a catch-up forwarded in this run: the gateway's delivery of the same event is not forwarded again. */
  private readonly caughtUp = new Set<string>()
  private readonly forwarded: Set<string>
  private saving: Promise<void> = Promise.resolve()
  private dirty = false

  private constructor(
    private readonly dir: string,
    private readonly file: string,
    private state: LedgerState | undefined,
  ) {
    this.forwarded = new Set(state?.forwarded ?? [])
  }

  static async open(configDir: string, key: {profile: string; env: string; merchant: string}): Promise<Ledger> {
    const dir = join(configDir, 'listen')
    const file = `${key.profile}.${key.env}.${key.merchant}.json`.replace(/[^\w.-]/g, '_')
    let state: LedgerState | undefined
    try {
      state = JSON.parse(await readFile(join(dir, file), 'utf8')) as LedgerState
    } catch {
      state = undefined
    }
    return new Ledger(dir, file, state)
  }

  /** Whether an earlier run left a cursor to catch up from. */
  get started(): boolean {
    return this.state !== undefined
  }

  get cursor(): string | null {
    return this.state?.cursor ?? null
  }

  /** Starts over at `cursor` (first run, `--no-catch-up`, or a gateway whose log lacks the old cursor). */
  reset(gateway: string, cursor: string | null): void {
    this.state = {gateway, cursor, forwarded: []}
    this.forwarded.clear()
    this.save()
  }

  has(eventId: string): boolean {
    return this.forwarded.has(eventId)
  }

  /** Whether a delivery needs no forwarding: the app accepted it already, or a catch-up forwarded its event. */
  alreadyForwarded(deliveryId: string | undefined, eventId: string | null): boolean {
    return (deliveryId !== undefined && this.deliveries.has(deliveryId)) || (eventId !== null && this.caughtUp.has(eventId))
  }

  record(eventId: string | null, via: {delivery?: string; caughtUp?: boolean}): void {
    if (via.delivery !== undefined) this.deliveries.add(via.delivery)
    if (eventId === null) return
    if (via.caughtUp) this.caughtUp.add(eventId)
    this.forwarded.add(eventId)
    this.save()
  }

  /** Moves the cursor over `events` (oldest first) while each is forwarded or not selected; answers whether it moved. */
  advance(events: ReadonlyArray<{id: string; type: string}>, patterns: readonly string[]): boolean {
    if (!this.state) return false
    let moved = false
    for (const event of events) {
      if (patterns.some((p) => matchesEventType(p, event.type)) && !this.forwarded.has(event.id)) break
      this.state.cursor = event.id
      this.forwarded.delete(event.id)
      moved = true
    }
    if (moved) this.save()
    return moved
  }

  /** Writes the ledger soon (one write at a time, the last state wins). */
  save(): void {
    if (this.dirty) return
    this.dirty = true
    this.saving = this.saving.then(async () => {
      this.dirty = false
      if (!this.state) return
      await mkdir(this.dir, {recursive: true, mode: 0o700})
      await writePrivateFile(this.dir, this.file, JSON.stringify({...this.state, forwarded: [...this.forwarded]}) + '\n')
    })
    this.saving = this.saving.catch(() => {})
  }

  flush(): Promise<void> {
    return this.saving
  }
}

/**
 * Starts the relay on 127.0.0.1 (a free port); `onEvent` is called once per delivery forwarded, after the
 * app answered. A delivery the ledger says needs no forwarding is answered 200 here.
 */
export async function startRelay(forwardTo: string, ledger: Ledger, onEvent: (event: RelayedEvent) => void): Promise<Relay> {
  let held: Promise<void> | undefined
  let release = () => {}
  const server: Server = createServer((req, res) => {
    // Only deliveries are forwarded; anything else (a liveness probe of a later `listen`) is answered here.
    if (req.method !== 'POST') return void res.writeHead(405, {allow: 'POST'}).end()
    void (async () => {
      const body = await readBody(req)
      await held
      const fields = eventFields(body)
      const delivery = req.headers[DELIVERY_ID_HEADER.toLowerCase()]
      const deliveryId = typeof delivery === 'string' ? delivery : undefined
      if (ledger.alreadyForwarded(deliveryId, fields.id)) return void res.writeHead(200).end()
      const headers: Record<string, string> = {'content-type': req.headers['content-type'] ?? 'application/json'}
      const signature = req.headers[SIGNATURE_HEADER.toLowerCase()]
      if (typeof signature === 'string') headers[SIGNATURE_HEADER] = signature
      if (typeof req.headers['user-agent'] === 'string') headers['user-agent'] = req.headers['user-agent']
      const received = new Date().toISOString()
      const answer = await forward(forwardTo, body, headers)
      if (ok(answer.status)) ledger.record(fields.id, {delivery: deliveryId})
      // The gateway sees the app's own status, so its retries follow the app's answers.
      res.writeHead(answer.status ?? 502).end()
      onEvent({received, ...fields, ...answer})
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500).end()
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve())
  })
  const {port} = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}${RELAY_PATH}`,
    hold() {
      held ??= new Promise<void>((resolve) => (release = resolve))
    },
    release() {
      release()
      held = undefined
    },
    close: () =>
      new Promise<void>((resolve) => {
        release()
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}

/**
 * The line `listen` prints per event: `2026-05-01 12:00:00 UTC checkout.session.completed evt_… → 200`, the
 * time being the event's on the gateway clock (the CLI's one date format).
 */
export function eventLine(e: RelayedEvent): string {
  const at = e.created ?? Date.parse(e.received) / 1000
  return `${date(at)} ${e.type ?? '(unknown type)'} ${e.id ?? '(no id)'} → ${e.status ?? `error: ${e.error}`}${e.caught_up ? ' (caught up)' : ''}`
}

/** What `listen` needs of the admin API's webhook endpoints. */
export interface EndpointAdmin {
  list(merchant: string): Promise<{data: Array<{id: string; url: string; secret: string; previous_secrets_expire?: number[]}>}>
  delete(id: string): Promise<unknown>
}

/** What `listen` needs of the admin API's event log. */
export interface EventLog {
  list(query: {merchant: string; env: 'live' | 'test'; since?: string; order?: 'asc' | 'desc'; limit?: number}): Promise<{data: Array<{id: string; type: string; created: number}>; has_more: boolean}>
}

/** Whether a relay of an earlier `listen` still answers (a live one says 405 to a GET). */
async function relayAlive(url: string): Promise<boolean> {
  try {
    await fetch(url, {signal: AbortSignal.timeout(1000)})
    return true
  } catch {
    return false
  }
}

const isRelay = (url: string) => /^http:\/\/127\.0\.0\.1:\d+\/payapp-listen\//.test(url)

/**
 * Deletes the endpoints of earlier `listen` runs whose relay is gone (killed without Ctrl-C, or the
 * terminal closed), so the gateway stops retrying deliveries nobody receives. Returns their ids.
 */
export async function removeStaleEndpoints(endpoints: EndpointAdmin, merchant: string): Promise<string[]> {
  const mine = (await endpoints.list(merchant)).data.filter((e) => isRelay(e.url))
  const stale: string[] = []
  for (const endpoint of mine) {
    if (await relayAlive(endpoint.url)) continue
    await endpoints.delete(endpoint.id)
    stale.push(endpoint.id)
  }
  return stale
}

/** The endpoints of `listen` runs whose relay answers (for `listen --rotate-secret`). */
export async function runningEndpoints(endpoints: EndpointAdmin, merchant: string): Promise<string[]> {
  const mine = (await endpoints.list(merchant)).data.filter((e) => isRelay(e.url))
  const alive = await Promise.all(mine.map(async (e) => ((await relayAlive(e.url)) ? e.id : undefined)))
  return alive.filter((id): id is string => id !== undefined)
}

/** Every event of the log after `since` (or from its start), oldest first, page by page. */
async function* eventsSince(log: EventLog, scope: {merchant: string; env: 'live' | 'test'}, since: string | null) {
  let from = since ?? undefined
  for (;;) {
    const page = await log.list({...scope, since: from, order: 'asc', limit: PAGE})
    yield page.data
    if (!page.has_more || page.data.length === 0) return
    from = page.data.at(-1)!.id
  }
}

/** The newest event id of the log, or null when it is empty. */
export async function newestEvent(log: EventLog, scope: {merchant: string; env: 'live' | 'test'}): Promise<string | null> {
  return (await log.list({...scope, limit: 1})).data[0]?.id ?? null
}

export interface CatchUpOptions {
  log: EventLog
  scope: {merchant: string; env: 'live' | 'test'}
  ledger: Ledger
  patterns: readonly string[]
  forwardTo: string
  /** The secrets to sign with (newest first), as the gateway would. */
  secrets: () => readonly string[]
  onEvent: (event: RelayedEvent) => void
  /** Replays from here (an event id, or a time), forwarded or not; default: the ledger's cursor, skipping what was forwarded. */
  since?: string
}

/**
 * Forwards the selected events logged since the ledger's cursor (or `since`) that were not forwarded,
 * oldest first, each signed as a delivery; moves the cursor over what is done. Answers how many it forwarded.
 */
export async function catchUp(opts: CatchUpOptions): Promise<number> {
  const {ledger, patterns} = opts
  const replay = opts.since !== undefined
  let forwarded = 0
  for await (const page of eventsSince(opts.log, opts.scope, replay ? opts.since! : ledger.cursor)) {
    for (const event of page) {
      if (!patterns.some((p) => matchesEventType(p, event.type))) continue
      if (!replay && ledger.has(event.id)) continue
      const body = JSON.stringify(event)
      const signed = signWebhookPayload(body, opts.secrets())
      const received = new Date().toISOString()
      const answer = await forward(opts.forwardTo, body, {'content-type': 'application/json', [SIGNATURE_HEADER]: signed.header, 'user-agent': 'payapp-listen'})
      if (ok(answer.status)) {
        ledger.record(event.id, {caughtUp: true})
        forwarded += 1
      }
      opts.onEvent({received, created: event.created, id: event.id, type: event.type, ...answer, caught_up: true})
    }
    if (!replay) ledger.advance(page, patterns)
  }
  return forwarded
}

/** Moves the ledger's cursor over what was forwarded since, so the next run reads less of the log. */
export async function settle(log: EventLog, scope: {merchant: string; env: 'live' | 'test'}, ledger: Ledger, patterns: readonly string[]): Promise<void> {
  for await (const page of eventsSince(log, scope, ledger.cursor)) {
    ledger.advance(page, patterns)
    if (ledger.cursor !== page.at(-1)?.id) return
  }
}

export interface Watch {
  stop(): void
}

/** An error of the admin API that waiting will not cure: the key is refused, or the merchant is gone. */
export interface WatchFailure {
  kind: 'credentials' | 'merchant'
  message: string
}

const statusOf = (error: unknown) => (error as {statusCode?: number})?.statusCode

/**
 * Checks every `intervalMs` that the gateway still holds `endpointId`: says so once when the gateway
 * stops answering, and when it answers again without the endpoint (a restart with a fresh database, a
 * reset), calls `reRegister` and reports the new id. A gateway that refuses the admin key (restarted with
 * other credentials) or no longer knows the merchant is reported at once through `fail`, with what to do.
 * `onTick` runs after each successful check. Never throws.
 */
export function watchGateway(opts: {
  endpoints: EndpointAdmin
  merchant: string
  endpointId: () => string
  reRegister: () => Promise<string>
  say: (line: string) => void
  fail: (failure: WatchFailure) => void
  onTick?: (endpoint: {secret: string; previous_secrets_expire?: number[]}) => Promise<void>
  baseUrl: string
  intervalMs?: number
}): Watch {
  let up = true
  let busy = false
  const timer = setInterval(() => {
    if (busy) return
    busy = true
    void (async () => {
      try {
        const mine = (await opts.endpoints.list(opts.merchant)).data.find((e) => e.id === opts.endpointId())
        if (!up) opts.say(`The gateway at ${opts.baseUrl} is back.`)
        up = true
        if (!mine) {
          const id = await opts.reRegister()
          opts.say(`Registered webhook endpoint ${id} again (same signing secret); forwarding resumes.`)
        } else await opts.onTick?.(mine)
      } catch (error) {
        if (statusOf(error) === 401) {
          return opts.fail({
            kind: 'credentials',
            message: `The gateway at ${opts.baseUrl} answers but refuses listen's admin key: it was restarted with other credentials (a fresh in-memory database?). Run listen again with its new admin key (PAYAPP_ADMIN_KEY or --admin-key; "gateway start --json" prints it) and a merchant it has.`,
          })
        }
        if (statusOf(error) === 404) {
          return opts.fail({
            kind: 'merchant',
            message: `The gateway at ${opts.baseUrl} no longer has merchant ${opts.merchant} (restarted with a fresh database?). Run listen again with --merchant of a merchant it has (e.g. after "gateway start --seed").`,
          })
        }
        if (up) opts.say(`Lost the gateway at ${opts.baseUrl} (${(error as Error).message.split('\n')[0]}); waiting for it to come back…`)
        up = false
      } finally {
        busy = false
      }
    })()
  }, opts.intervalMs ?? HEALTH_INTERVAL_MS)
  timer.unref()
  return {stop: () => clearInterval(timer)}
}
