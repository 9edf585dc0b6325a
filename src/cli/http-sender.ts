/**
 * The CLI's sender, injected as the SDK's `fetch` option: one node:http(s) request on the keep-alive global
 * agent per attempt. Every rule (retries, keys, timeouts, errors) stays in the SDK's transport; this only
 * moves bytes. Node's fetch (undici) costs a `catalog apply` more CPU per request, on cores the gateway
 * often shares (docs/architecture.md, "HTTP": numbers and decision). PAYAPP_HTTP_CLIENT=fetch uses the
 * runtime's fetch instead (the benchmark's comparison).
 */
import type {Fetch} from '@payapp/sdk/transport'

// Loaded by the first request, not at start-up: most commands' time is start-up.
let http: typeof import('node:http') | undefined
let https: typeof import('node:https') | undefined

/**
 * Answers as plain objects: touching Node's `Response` or `Headers` loads undici, tens of ms of every
 * command's start-up.
 */
export const httpSender: Fetch = async (url, init) => {
  const target = new URL(url)
  const client = target.protocol === 'https:' ? (https ??= await import('node:https')) : (http ??= await import('node:http'))
  const body = init.body as string | Uint8Array | undefined
  const signal = init.signal ?? undefined
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortError(signal))
    // The signal is watched here, not passed as `request`'s `signal` option: Node then ties it to the
    // request's stream (addAbortSignal and end-of-stream listeners), ~5% of a read-heavy `catalog apply`'s CPU.
    const req = client.request(target, {method: init.method, headers: init.headers as Record<string, string>})
    const onAbort = () => req.destroy(abortError(signal!))
    signal?.addEventListener('abort', onAbort, {once: true})
    const fail = (error: Error) => {
      signal?.removeEventListener('abort', onAbort)
      reject(error)
    }
    req.on('error', fail)
    req.once('response', (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('error', fail)
      res.once('end', () => {
        signal?.removeEventListener('abort', onAbort)
        const text = Buffer.concat(chunks).toString('utf8')
        resolve({
          status: res.statusCode ?? 0,
          headers: {
            forEach(callback) {
              for (const [name, value] of Object.entries(res.headers)) if (value !== undefined) callback(Array.isArray(value) ? value.join(', ') : value, name)
            },
          },
          text: async () => text,
        })
      })
    })
    req.end(body === undefined ? undefined : typeof body === 'string' ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength))
  })
}

/** What Node's `signal` option rejects with: an AbortError carrying the signal's reason. */
function abortError(signal: AbortSignal): Error {
  return Object.assign(new Error('The operation was aborted', {cause: signal.reason}), {name: 'AbortError', code: 'ABORT_ERR'})
}

/** The `fetch` option of every client the CLI makes. */
export function cliFetch(): Fetch | undefined {
  return process.env.PAYAPP_HTTP_CLIENT === 'fetch' ? undefined : httpSender
}
