/**
 * Command factories for the skeletons commands repeat: a write (create or update) of one endpoint with
 * its body as flags derived from the schema, and a list of one endpoint. A command file then holds only
 * what differs: the endpoint, its examples, its path arguments and how its result reads.
 */
import type {Command, Interfaces} from '@oclif/core'

import type {AppClient} from '@payapp/sdk/client'
import {endpoints, pathParams, type EndpointId, type ResultOf} from '@payapp/sdk/endpoints'
import type {Page} from '@payapp/sdk/pagination'
import {BaseCommand} from './base-command.js'
import {collect, listFlags, type ListFlagValues, moreHint, pageParams} from './list.js'
import type {Spinner} from './output.js'
import {bodyFromFlags, dataFlag, type DerivedFlags, flagsFromSchema, idempotencyKeyFlag} from './schema-flags.js'

type AnyArg = Interfaces.Arg<any>
type AnyFlag = Interfaces.Flag<any>

/** Endpoints that take a JSON body. */
type WriteId = {[Id in EndpointId]: (typeof endpoints)[Id] extends {body: object} ? Id : never}[EndpointId]
type ListId = {[Id in EndpointId]: (typeof endpoints)[Id] extends {list: true} ? Id : never}[EndpointId]

/** What a write command may do between reading its flags and sending the body (resolve names, upload a file). */
export interface PrepareContext {
  body: Record<string, unknown>
  flags: Record<string, any>
  args: Record<string, string>
  client: AppClient
  spinner(text: string): Spinner
}

interface CommandText {
  /** Endpoints that are the same operation by another door or method (e.g. the merchant API's POST update), which this command covers too. */
  also?: readonly EndpointId[]
  /** Default: the endpoint's summary and a full stop. */
  summary?: string
  description?: string
  examples: string[]
  /** One per `{param}` of the endpoint's path, in the path's order. */
  args?: Record<string, AnyArg>
}

export interface WriteCommandSpec<Id extends WriteId> extends CommandText {
  endpoint: Id
  /** Body fields the command takes in its own way (e.g. variant `options` by name). Immutable fields are left out by the schema. */
  exclude?: readonly string[]
  /** Adjusts the derived flags (an alias, a description). */
  adjust?: (derived: DerivedFlags) => void
  /** The command's own flags, shown before the derived ones. */
  flags?: Record<string, AnyFlag>
  /** Flags the body needs beyond the schema's required fields, by rules on other fields (e.g. a raw amount needs a customer); checked like them, before any request. */
  requires?: (body: Record<string, unknown>) => string[]
  prepare?: (ctx: PrepareContext) => Promise<void>
  /** Human output; may read more (e.g. a product's prices for their amounts): it runs only without --json. */
  render: (result: ResultOf<Id>, client: AppClient) => string | Promise<string>
}

/** Calls an endpoint by id on whichever client serves it (the factories are generic over the id). */
type Caller = {call: (id: EndpointId, args: object) => Promise<unknown> & AsyncIterable<unknown>}

/** What every factory's command shares: its client (the endpoint's door) and the endpoint's path values. */
abstract class EndpointCommand extends BaseCommand<typeof Command> {
  protected async clientFor(id: EndpointId): Promise<Caller & AppClient> {
    const doors = endpoints[id].doors as readonly string[]
    const client = doors.includes('app') ? await this.appClient() : doors.includes('store') ? await this.storeClient() : await this.merchantClient()
    return client as unknown as Caller & AppClient
  }

  /** The path's `{param}`s from the command's arguments, in order. */
  protected pathValues(id: EndpointId): Record<string, string> {
    const args = this.args as Record<string, string>
    const names = Object.keys((this.ctor as typeof Command).args ?? {})
    return Object.fromEntries(pathParams(endpoints[id].path).map((param, i) => [param, args[names[i]!]!]))
  }
}

/** Sets a factory command's endpoint, texts, arguments and flags (oclif reads them as statics). */
function declare<C extends typeof Command>(command: C, spec: CommandText & {endpoint: EndpointId}, flags: Record<string, AnyFlag>): typeof Command {
  return Object.assign(command, {
    endpoint: spec.also ? [spec.endpoint, ...spec.also] : spec.endpoint,
    summary: spec.summary ?? `${endpoints[spec.endpoint].summary}.`,
    description: spec.description,
    examples: spec.examples,
    args: spec.args ?? {},
    flags,
  })
}

/** A create or update command: body from flags and `--data`, required fields checked locally, `--idempotency-key`. */
export function writeCommand<Id extends WriteId>(spec: WriteCommandSpec<Id>): typeof Command {
  const derived = flagsFromSchema(endpoints[spec.endpoint].body, {exclude: spec.exclude})
  spec.adjust?.(derived)

  class WriteCommand extends EndpointCommand {
    async run() {
      // Before any client: a missing required field fails without a request (and without a credential lookup).
      const body = await this.requestBody(derived, spec.requires ?? [])
      const client = await this.clientFor(spec.endpoint)
      await spec.prepare?.({body, flags: this.flags, args: this.args as Record<string, string>, client, spinner: (text) => this.spinner(text)})
      const result = (await client.call(spec.endpoint, {params: this.pathValues(spec.endpoint), body, ...this.requestOptions()})) as ResultOf<Id>
      const text = this.jsonEnabled() ? '' : await spec.render(result, client)
      return this.render(result, () => this.log(text))
    }
  }
  return declare(WriteCommand, spec, {...spec.flags, ...derived.flags, data: dataFlag, 'idempotency-key': idempotencyKeyFlag})
}

export interface ObjectCommandSpec<Id extends EndpointId> extends CommandText {
  endpoint: Id
  /** Human output; may read more (e.g. a product's prices for their amounts): it runs only without --json. */
  render: (result: ResultOf<Id>, client: AppClient) => string | Promise<string>
}

/** A command of one object by its id (get, archive, delete, expire): the path's ids as arguments, no body. */
export function objectCommand<Id extends EndpointId>(spec: ObjectCommandSpec<Id>): typeof Command {
  class ObjectCommand extends EndpointCommand {
    async run() {
      const client = await this.clientFor(spec.endpoint)
      const result = (await client.call(spec.endpoint, {params: this.pathValues(spec.endpoint)})) as ResultOf<Id>
      const text = this.jsonEnabled() ? '' : await spec.render(result, client)
      return this.render(result, () => this.log(text))
    }
  }
  return declare(ObjectCommand, spec, {})
}

export interface ListCommandSpec<Id extends ListId> extends CommandText {
  endpoint: Id
  /** Filters of the endpoint's query schema become flags. */
  filters?: boolean
  /** The page as a table (or any text) for human output. */
  render: (rows: ReadonlyArray<ResultOf<Id>>) => string
  /** Names the items in the "more exist" hint on stderr, e.g. `option groups`; no hint without it. */
  noun?: string
  /** The command's own flags beyond the page and filter flags (e.g. a cursor), shown after them… */
  flags?: Record<string, AnyFlag>
  /** …and the query parameters they add. */
  query?: (flags: Record<string, any>) => Record<string, unknown>
}

/** A list command: `--limit`, `--offset`, `--all` (and the endpoint's filters); `--json` prints the list envelope. */
export function listCommand<Id extends ListId>(spec: ListCommandSpec<Id>): typeof Command {
  const def = endpoints[spec.endpoint] as (typeof endpoints)[ListId] & {query?: Parameters<typeof flagsFromSchema>[0]}
  const filters = spec.filters && def.query ? flagsFromSchema(def.query) : undefined

  class ListCommand extends EndpointCommand {
    async run() {
      const flags = this.flags as ListFlagValues
      const query = filters ? await bodyFromFlags(filters, this.flags as Record<string, unknown>) : {}
      const client = await this.clientFor(spec.endpoint)
      const own = spec.query?.(this.flags) ?? {}
      const list = client.call(spec.endpoint, {params: this.pathValues(spec.endpoint), query: {...pageParams(flags), ...own, ...query}})
      const page = (await collect(list as never, flags)) as Page<ResultOf<Id>>
      return this.render(page, (p) => {
        this.log(spec.render(p.data))
        const hint = spec.noun && moreHint(p, flags, spec.noun)
        if (hint) this.logToStderr(hint)
      })
    }
  }
  return declare(ListCommand, spec, {...listFlags, ...filters?.flags, ...spec.flags})
}
