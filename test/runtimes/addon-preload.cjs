// node --require this: `better-sqlite3` (and its package.json, which the gateway's bundle resolves to find the addon)
// resolve to the copy in PAYAPP_TEST_ADDON_MODULES, built for the running Node by runtimes.ts's ensureAddon, as an
// app's own node_modules would hold it after `npm install` on that Node.
/* eslint-disable @typescript-eslint/no-require-imports -- loaded by node --require, before any ES module */
const Module = require('node:module')
const {join} = require('node:path')

const modules = process.env.PAYAPP_TEST_ADDON_MODULES
const resolve = Module._resolveFilename
Module._resolveFilename = function (request, ...rest) {
  const own = request === 'better-sqlite3' || request.startsWith('better-sqlite3/')
  return resolve.call(this, own ? join(modules, request) : request, ...rest)
}
