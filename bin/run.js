#!/usr/bin/env node
// `payapp --version` is what scripts and version checks run most: answer it without loading oclif
// (same text oclif prints), so it costs little more than starting node. Everything else goes to oclif,
// from the CLI bundle (scripts/build-cli.js) loaded with V8's code cache (src/cli/bundle-loader.ts).
const args = process.argv.slice(2)
if (args.length === 1 && args[0] === '--version') {
  const {readFileSync} = await import('node:fs')
  const {version} = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
  process.stdout.write(`payapp/${version} ${process.platform}-${process.arch} node-${process.version}\n`)
} else {
  const {loadCli} = await import('../dist/cli/bundle-loader.js')
  await loadCli().run(import.meta.url)
}
