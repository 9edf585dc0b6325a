#!/usr/bin/env node
// `payapp --version` is what scripts and version checks run most: answer it without loading oclif
// (same text oclif prints), so it costs little more than starting node (28 ms CPU less than through oclif,
// scripts/bench/startup-layers.js). Everything else goes to oclif,
// from the CLI bundle (scripts/build-cli.js) loaded with V8's code cache (src/cli/bundle-loader.cts).
// CommonJS (bin/package.json), so a CLI call never starts Node's ES module loader.
const {join} = require('node:path')

const args = process.argv.slice(2)
if (args.length === 1 && args[0] === '--version') {
  const {version} = require('../package.json')
  process.stdout.write(`payapp/${version} ${process.platform}-${process.arch} node-${process.version}\n`)
} else {
  // The package root, where oclif reads package.json (not bin/, whose package.json only sets the module type).
  require('../dist/cli/bundle-loader.cjs').loadCli().run(join(__dirname, '..'))
}
