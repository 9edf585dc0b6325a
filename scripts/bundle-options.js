/**
 * What the build's two bundles share (scripts/build-cli.js: dist/bundle/payapp.cjs; scripts/build-gateway.js:
 * dist/bundle/gateway.cjs): esbuild's options and the ASCII output that src/startup/code-cache.cts reads as latin1
 * and compiles with V8's code cache. (zod's 59 other locales were left out too: that bought about 1 ms per CLI
 * call and per gateway start, scripts/bench/startup-layers.js, so they stay.)
 */
import {mkdirSync, writeFileSync} from 'node:fs'
import {dirname} from 'node:path'

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
  legalComments: 'none',
  // Code that finds files from its own module (the SDK's package.json) does so from the bundle's place.
  define: {'import.meta.url': '__payappImportMetaUrl'},
  banner: {js: 'var __payappImportMetaUrl = require("url").pathToFileURL(__filename).href;'},
  write: false,
  logLevel: 'warning',
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
