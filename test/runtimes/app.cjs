// A CommonJS app: require('@payapp/sdk') (the package's CommonJS build), the same scenario.
// eslint-disable-next-line @typescript-eslint/no-require-imports -- what this file tests is require()
const sdk = require('@payapp/sdk')

const config = JSON.parse(process.env.PAYAPP_SCENARIO)
import('./scenario.mjs')
  .then(({scenario}) => scenario(sdk, config))
  .then((out) => {
    out.webhook.sync = sdk.verifyWebhook(config.webhook.body, config.webhook.header, config.webhook.secret).id
    console.log(JSON.stringify(out))
  })
