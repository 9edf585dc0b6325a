// A Cloudflare Worker (workerd, nodejs_compat): runs the scenario for each POST, its config as the body.
import * as sdk from '@payapp/sdk'

import {scenario} from './scenario.mjs'

export default {
  async fetch(request) {
    try {
      return Response.json(await scenario(sdk, await request.json()))
    } catch (err) {
      return Response.json({failed: String(err?.stack ?? err)}, {status: 500})
    }
  },
}
