#!/usr/bin/env node
// `payapp --version` is what scripts and version checks run most: answer it without loading oclif
// (same text oclif prints), so it costs little more than starting node. Everything else goes to oclif,
// from the CLI bundle (scripts/build-cli.js) loaded with V8's code cache (src/cli/bundle-loader.cts).
import {createRequire} from 'node:module'

const require = createRequire(import.meta.url)
const args = process.argv.slice(2)
if (args.length === 1 && args[0] === '--version') {
  const {version} = require('../package.json')
  process.stdout.write(`payapp/${version} ${process.platform}-${process.arch} node-${process.version}\n`)
} else {
  await require('../dist/cli/bundle-loader.cjs').loadCli().run(import.meta.url)
}
