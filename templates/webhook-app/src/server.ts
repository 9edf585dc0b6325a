/** Runs the app with its settings from the environment (see README.md and .env.example). */
import {createApp} from './app.js'
import {SUBSCRIBED_EVENTS} from './handlers.js'

const env = process.env
const missing = ['PAYAPP_TOKEN', 'PAYAPP_WEBHOOK_SECRET'].filter((name) => !env[name])
if (missing.length > 0) {
  console.error(`Missing ${missing.join(' and ')}: copy .env.example to .env and fill it in (see README.md)`)
  process.exit(1)
}
const baseUrl = env.PAYAPP_BASE_URL ?? 'http://127.0.0.1:4242'

const app = await createApp({
  token: env.PAYAPP_TOKEN!,
  baseUrl,
  // Comma-separated: the old and the new secret while one is being rotated.
  webhookSecret: env.PAYAPP_WEBHOOK_SECRET!.split(',').map((s) => s.trim()),
  inboxFile: env.PAYAPP_INBOX ?? '.data/inbox.jsonl',
  actions: {
    fulfil: (order) => console.log(`fulfil order ${order.id}: ${order.quantity} × ${order.name} for ${order.customer?.email ?? 'a buyer'}`),
    orderChanged: (order) => console.log(`order ${order.id} is now ${order.status}`),
    review: (warning) => console.log(`fraud warning ${String(warning.id)}: review the payment`),
  },
})

app.server.listen(Number(env.PORT ?? 3000), () => {
  const address = app.server.address()
  const port = typeof address === 'object' && address ? address.port : env.PORT
  console.log(`Listening on http://localhost:${port} (platform: ${baseUrl})`)
  console.log(`  POST /webhooks (handles ${SUBSCRIBED_EVENTS.join(', ')})   GET /events`)
})

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  // Stop taking events, let the ones in flight finish, then exit; pending ones resume at the next start.
  process.once(signal, () => void app.close().then(() => process.exit(0)))
}
