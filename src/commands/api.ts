import {Args, Flags} from '@oclif/core'

import {BaseCommand} from '../cli/base-command.js'
import {usageError} from '../cli/exit-codes.js'
import {keyValues, readData} from '../cli/schema-flags.js'
import type {HttpMethod} from '@payapp/sdk/transport'

const METHODS: readonly HttpMethod[] = ['GET', 'POST', 'PATCH', 'DELETE', 'PUT']
// The SDK's DOOR_PREFIX, restated so this command loads no schemas (zod) before it runs.
type Door = 'app' | 'store' | 'merchant'
const PREFIX: Record<Door, string> = {app: '/v1/app', store: '/v1/store', merchant: '/v1'}

/** PATH relative to the API, or absolute under `/v1/app`, `/v1/store` or `/v1` (which then picks the API). */
function resolveApiPath(raw: string, chosen: Door | undefined): {door: Door; path: string} {
  if (/^[a-z][a-z\d+.-]*:\/\//i.test(raw)) {
    throw usageError('PATH is a path such as /products, not a URL: the base URL comes from --base-url or the profile', 'PATH')
  }
  const path = raw.startsWith('/') ? raw : `/${raw}`
  const absolute = /^\/v1\/(app|store)(?=\/|\?|$)(.*)$/.exec(path)
  if (absolute) {
    const door = absolute[1] as Door
    if (chosen && chosen !== door) throw usageError(`--${chosen} sends to ${PREFIX[chosen]}, but PATH starts with /v1/${door}`, `--${chosen}`)
    return {door, path: absolute[2] === '' ? '/' : absolute[2].startsWith('?') ? `/${absolute[2]}` : absolute[2]}
  }
  const merchantPath = /^\/v1(\/.*)$/.exec(path)
  if (merchantPath) {
    if (chosen && chosen !== 'merchant') throw usageError(`--${chosen} sends to ${PREFIX[chosen]}, but PATH starts with /v1 (the merchant API)`, `--${chosen}`)
    return {door: 'merchant', path: merchantPath[1]!}
  }
  if (path === '/v1') throw usageError('PATH must be relative to the API (/products), or start with /v1/app, /v1/store or /v1/<resource>', 'PATH')
  return {door: chosen ?? 'app', path}
}

export default class Api extends BaseCommand<typeof Api> {
  static override summary = 'Send a request to the App API (or the store API with --store, the merchant API with --merchant) and print the JSON response.'
  static override description = `Uses the profile's credentials, retries and idempotency keys exactly like the SDK: the installation token for /v1/app, the secret key with --store for /v1/store and with --merchant for the merchant API (/v1). PATH is relative to the API (/products); /v1/app/..., /v1/store/... and /v1/... (merchant) are accepted too. POST and PATCH get a fresh Idempotency-Key unless --idempotency-key is given.`

  static override examples = [
    '<%= config.bin %> api GET /products --query limit=5',
    '<%= config.bin %> api post /products --data \'{"name": "Tee", "price": {"currency": "eur", "unit_amount": 2500}}\'',
    '<%= config.bin %> api PATCH /products/prod_123 --data @product.json --idempotency-key rename-42',
    '<%= config.bin %> api GET /store --store',
    '<%= config.bin %> api GET /v1/checkout/sessions --query status=open',
    'echo \'{"value": "XL"}\' | <%= config.bin %> api POST /v1/app/options/GROUP_ID/values --data -',
  ]

  static override args = {
    method: Args.string({required: true, description: `HTTP method: ${METHODS.join(', ')} (any case)`}),
    path: Args.string({required: true, description: 'Path relative to the API, e.g. /products; or /v1/app/... or /v1/store/...'}),
  }

  static override flags = {
    // dataFlag's own help promises flags that override the body; this command has none.
    data: Flags.string({char: 'd', description: 'Request body as JSON, @file.json, or - for stdin.'}),
    query: Flags.string({char: 'q', multiple: true, multipleNonGreedy: true, description: 'Query parameter key=value (repeatable).'}),
    'idempotency-key': Flags.string({description: 'Idempotency-Key for POST and PATCH (default: a fresh one per call, reused on retries).'}),
    store: Flags.boolean({description: 'Call the store API (/v1/store) with the secret key instead of the App API with the installation token.', exclusive: ['merchant']}),
    merchant: Flags.boolean({description: 'Call the merchant API (/v1) with the secret key instead of the App API with the installation token.', exclusive: ['store']}),
  }

  async run() {
    const {args, flags} = this
    const method = args.method.toUpperCase() as HttpMethod
    if (!METHODS.includes(method)) throw usageError(`METHOD must be one of ${METHODS.join(', ')}, not ${JSON.stringify(args.method)}`, 'METHOD')
    const {door, path} = resolveApiPath(args.path, flags.store ? 'store' : flags.merchant ? 'merchant' : undefined)
    if (flags.data !== undefined && method === 'GET') throw usageError('A GET request has no body: pass --query key=value instead of --data', '--data')
    const query = keyValues('query', flags.query)
    const body = flags.data === undefined ? undefined : await readData(flags.data)

    const ctx = await this.context()
    const credential = await this.resolveCredential(door === 'app' ? 'token' : 'secret_key', ctx)
    const {Transport} = await import('@payapp/sdk/transport')
    // Configured as the base command configures every SDK client, so --max-retries, --timeout, retry lines and keys behave the same.
    const transport = new Transport({
      baseUrl: ctx.baseUrl.replace(/\/+$/, '').replace(/\/v1(\/(app|store))?$/, '') + PREFIX[door],
      authorization: `Bearer ${credential}`,
      ...this.clientOptions(),
    })
    const res = await transport.request({method, path, query, body, idempotencyKey: flags['idempotency-key']})
    return this.render(res.data, (data) => {
      if (data !== undefined) this.log(JSON.stringify(data, null, 2))
    })
  }

}
