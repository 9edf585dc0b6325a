/** Runs the app with its settings from the environment (see README.md). */
import {createApp} from './app.js'

const {PAYAPP_TOKEN: token, PAYAPP_WEBHOOK_SECRET: secret, PAYAPP_BASE_URL: baseUrl = 'http://127.0.0.1:4242', PORT = '3000'} = process.env

const missing = Object.entries({PAYAPP_TOKEN: token, PAYAPP_WEBHOOK_SECRET: secret})
  .filter(([, value]) => !value)
  .map(([name]) => name)
if (missing.length > 0) {
  console.error(`Missing ${missing.join(' and ')}: see README.md`)
  process.exit(1)
}

const server = createApp({
  token,
  baseUrl,
  // Comma-separated: the old and the new secret while one is being rotated.
  webhookSecret: secret.split(',').map((s) => s.trim()),
  onEvent: (event) => console.log(`${new Date().toISOString()} ${event.type} ${event.id}`),
})

server.listen(Number(PORT), () => {
  console.log(`Listening on http://localhost:${server.address().port} (platform: ${baseUrl})`)
  console.log('  GET  /catalogue   POST /webhooks   GET  /events')
})

for (const signal of ['SIGINT', 'SIGTERM']) {
  // Finish requests in flight, then exit.
  process.once(signal, () => server.close(() => process.exit(0)))
}
