// An AWS Lambda handler written as an ES module and bundled to CommonJS, as many Lambda builds do
// (esbuild --bundle --platform=node --format=cjs): no import.meta.url is left for the SDK to need.
import * as sdk from '@payapp/sdk'

import {scenario} from './scenario.mjs'

export const handler = async (event) => scenario(sdk, event)
