/**
 * What the build's two bundles share (scripts/build-cli.js: dist/bundle/payapp.cjs; scripts/build-gateway.js:
 * dist/bundle/gateway.cjs): esbuild's options, zod with its English locale only, and the ASCII output that
 * src/startup/code-cache.cts reads as latin1 and compiles with V8's code cache.
 */
import {mkdirSync, writeFileSync} from 'node:fs'
import {createRequire} from 'node:module'
import {dirname, join} from 'node:path'

import {without} from './dependency-patches.js'

/** One CommonJS file for Node 20, the SDK from its TypeScript sources, kept in memory for writeAscii. */
export const BUNDLE_OPTIONS = {
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  // @payapp/sdk (a workspace link) from its TypeScript sources, as src/ imported it before it became a package.
  conditions: ['payapp-source'],
  minifyWhitespace: true,
  minifySyntax: true,
  // A third fewer bytes (the CLI's 1.37 MB to 0.98, the gateway's 1.68 to 1.19) to read and copy into a string on every
  // start (scripts/bench/startup-layers.js minified-identifiers, gateway-minified-identifiers). No class or function keeps
  // its own name, so names users see are literals (lint refuses new.target.name and constructor.name in src/ and the
  // SDK; scripts/build-cli.js checks that the errors' names are in the bundle).
  minifyIdentifiers: !without.has('minified-identifiers'),
  legalComments: 'none',
  // Code that finds files from its own module (the SDK's package.json) does so from the bundle's place.
  define: {'import.meta.url': '__payappImportMetaUrl'},
  banner: {js: 'var __payappImportMetaUrl = require("url").pathToFileURL(__filename).href;'},
  write: false,
  logLevel: 'warning',
}

/**
 * zod's 60 locales left out: the CLI and the gateway speak English, the one locale zod configures itself.
 * It relies on zod's layout (classic/ and core/ import `../locales/index.js`): if no such import was redirected,
 * zod changed and the build fails rather than silently bundle the locales again. In the CLI's bundle one of the small
 * layers of scripts/dependency-patches.js (0 to 2.7 ms alone); the gateway's bundle keeps every locale (1 ms a start).
 */
export const zodEnglishOnly = {
  name: 'zod-english-only',
  setup(build) {
    if (without.has('zod-english-only')) return
    const locales = dirname(createRequire(import.meta.url).resolve('zod/v4/locales/en.js'))
    let redirected = 0
    build.onResolve({filter: /^\.\.\/locales\/index\.js$/}, (args) => {
      if (!/[\\/]zod[\\/]v4[\\/](classic|core)$/.test(args.resolveDir)) return undefined
      redirected++
      return {path: 'zod-locales', namespace: 'zod-english-only'}
    })
    build.onLoad({filter: /.*/, namespace: 'zod-english-only'}, () => ({
      contents: `export {default as en} from ${JSON.stringify(join(locales, 'en.js'))}`,
      resolveDir: locales,
      loader: 'js',
    }))
    build.onEnd((result) =>
      result.errors.length === 0 && redirected === 0 ? {errors: [{text: "zod-english-only: zod's `../locales/index.js` import is gone (zod's layout changed); update the plugin"}]} : undefined,
    )
  },
}

/**
 * Writes a bundle in ASCII: non-ASCII characters (esbuild leaves a few in strings and regular expressions) as
 * `\uXXXX`, which means the same in strings, templates and regular expressions, so the loader reads it as latin1,
 * 2–3× faster than decoding UTF-8.
 */
export function writeAscii(file, text) {
  mkdirSync(dirname(file), {recursive: true})
  const ascii = text.replace(/[\u0080-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`)
  writeFileSync(file, ascii)
  return ascii
}
