/**
 * What the runtime matrix runs in every runtime, against a real gateway: a list call that pages, an
 * idempotent create, a typed error and webhook verification. Plain JavaScript, so each runtime runs it
 * as an app would (no TypeScript loader); it takes the SDK module as the app imported it.
 */
export async function scenario(sdk, {baseUrl, token, idempotencyKey, webhook}) {
  const app = new sdk.AppClient({baseUrl, token})
  const out = {version: sdk.SDK_VERSION}

  const first = await app.products.list({limit: 2})
  const names = []
  for await (const product of app.products.list({limit: 2})) names.push(product.name)
  out.list = {firstPage: first.data.length, hasMore: first.has_more, all: names.length}

  const a = await app.products.create({name: 'Runtime mug'}, {idempotencyKey})
  const b = await app.products.create({name: 'Runtime mug'}, {idempotencyKey})
  out.create = {sameId: a.id === b.id, id: a.id}

  try {
    await app.products.retrieve('prod_missing')
    out.error = {thrown: false}
  } catch (err) {
    out.error = {notFound: err instanceof sdk.NotFoundError, payapp: err instanceof sdk.PayappError, code: err.code, status: err.statusCode, requestId: typeof err.requestId === 'string'}
  }

  const event = await sdk.verifyWebhookAsync(webhook.body, webhook.header, webhook.secret)
  out.webhook = {id: event.id}
  try {
    await sdk.verifyWebhookAsync(webhook.body.replace('}', ' }'), webhook.header, webhook.secret)
    out.webhook.tamperedRefused = false
  } catch (err) {
    out.webhook.tamperedRefused = err instanceof sdk.SignatureVerificationError && err.code === 'signature_mismatch'
  }
  return out
}
