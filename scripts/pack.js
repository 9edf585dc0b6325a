#!/usr/bin/env node
/**
 * `npm run pack [-- DIR]`: the release step while nothing is on the npm registry. Writes the tarballs of
 * payapp and @payapp/sdk, as just built, to DIR (default ./packed), and prints how to install them. An app
 * or a CI job installs both (`npm install ./packed/payapp-sdk-*.tgz ./packed/payapp-*.tgz`); `payapp init`
 * copies the same two into a new app's vendor/.
 */
import {join, relative, resolve} from 'node:path'
import {fileURLToPath} from 'node:url'

import {pack} from '../dist/cli/services/pack.js'

const ROOT = join(fileURLToPath(import.meta.url), '..', '..')
const destination = resolve(process.argv[2] ?? join(ROOT, 'packed'))
const tarballs = await pack(ROOT, destination)
const rel = relative(process.cwd(), destination)
const shown = rel.startsWith('..') ? destination : rel || '.'
console.log(`Wrote ${shown}/${tarballs.sdk} and ${shown}/${tarballs.payapp}`)
console.log(`Install both (payapp needs its SDK, which is not on the registry either):\n  npm install ${shown}/${tarballs.sdk} ${shown}/${tarballs.payapp}`)
