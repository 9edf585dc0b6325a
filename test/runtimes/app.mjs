// An ES module app (Node, Deno, Bun): imports the built @payapp/sdk by its name and prints the scenario's results.
import * as sdk from '@payapp/sdk'

import {scenario} from './scenario.mjs'

const config = JSON.parse(globalThis.Deno ? globalThis.Deno.env.get('PAYAPP_SCENARIO') : process.env.PAYAPP_SCENARIO)
const out = await scenario(sdk, config)
// The synchronous form, where the runtime has node:crypto.
out.webhook.sync = sdk.verifyWebhook(config.webhook.body, config.webhook.header, config.webhook.secret).id
console.log(JSON.stringify(out))
