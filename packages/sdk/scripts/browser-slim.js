/**
 * What the browser build (dist/browser, tsc's modules) leaves out that a page has no use for, so an app's bundler
 * can drop it (test/runtimes/browser.test.ts keeps the page's bundle within its gzipped budget; README.md records it):
 *
 * - Request schemas. A client validates responses, never what it sends (the gateway does), so the browser's endpoint
 *   table names no `body` or `query` schema, and each schema module's top-level schema is built in a pure IIFE:
 *   a bundler drops the ones nothing reaches (esbuild keeps a bare `z.object(…)` call, in case it had effects).
 * - Documentation: schema `.describe()` texts and the endpoint table's summaries, which feed the CLI's help and the
 *   OpenAPI document. Both stay in the Node and deep-path builds (`@payapp/sdk/openapi`, `@payapp/sdk/schemas/…`).
 *
 * Text edits located with acorn; each counts its edits and fails the build when it finds none (the code it edits
 * changed shape).
 */
import {Parser} from 'acorn'

const parse = (code) => Parser.parse(code, {ecmaVersion: 'latest', sourceType: 'module'})

/** Applies [start, end, text] edits (non-overlapping) to code. */
function applyEdits(code, edits) {
  let out = code
  for (const [start, end, text] of [...edits].sort((a, b) => b[0] - a[0])) out = out.slice(0, start) + text + out.slice(end)
  return out
}

/** Every node of a tree, depth first. */
function* nodes(node) {
  if (!node || typeof node.type !== 'string') return
  yield node
  for (const value of Object.values(node)) {
    if (Array.isArray(value)) for (const child of value) yield* nodes(child)
    else if (value && typeof value === 'object' && typeof value.type === 'string') yield* nodes(value)
  }
}

const isText = (node) => node?.type === 'Literal' ? typeof node.value === 'string' : node?.type === 'TemplateLiteral' && node.expressions.length === 0

function need(count, what, file) {
  if (count === 0) throw new Error(`${file}: found no ${what} to leave out of the browser build; update scripts/browser-slim.js`)
  return count
}

/** A schema module: `.describe('…')` calls removed, each top-level schema built in a pure IIFE. */
export function slimSchemaModule(code, file) {
  const ast = parse(code)
  const edits = []
  for (const node of nodes(ast)) {
    if (node.type === 'CallExpression' && node.callee.type === 'MemberExpression' && node.callee.property.name === 'describe' && node.arguments.length === 1 && isText(node.arguments[0])) {
      edits.push([node.callee.object.end, node.end, ''])
    }
  }
  need(edits.length, '.describe() texts', file)
  let wrapped = 0
  for (let statement of ast.body) {
    if (statement.type === 'ExportNamedDeclaration' && statement.declaration) statement = statement.declaration
    if (statement.type !== 'VariableDeclaration') continue
    for (const {init} of statement.declarations) {
      if (init?.type !== 'CallExpression') continue
      edits.push([init.start, init.start, '/* @__PURE__ */ (() => '], [init.end, init.end, ')()'])
      wrapped++
    }
  }
  need(wrapped, 'top-level schemas', file)
  // A describe() inside a wrapped initializer shares no position with the wrapper's edits (those sit at its ends).
  return applyEdits(code, edits)
}

/**
 * endpoints.js: the rows' request schemas (`write()`'s body, `list()`'s query, `body:`/`query:` properties) become
 * `undefined` and their summaries `''`; the response schemas, paths, doors and the rest stay.
 */
export function slimEndpointTable(code, file) {
  const ast = parse(code)
  const edits = []
  let bodies = 0
  let summaries = 0
  // The argument positions of the row helpers: [request schema, summary].
  const HELPERS = {get: [undefined, 3], list: [5, 3], write: [3, 5]}
  for (const node of nodes(ast)) {
    if (node.type === 'CallExpression' && node.callee.type === 'Identifier' && Object.hasOwn(HELPERS, node.callee.name)) {
      const [request, summary] = HELPERS[node.callee.name]
      const schema = request === undefined ? undefined : node.arguments[request]
      if (schema?.type === 'ArrowFunctionExpression') {
        edits.push([schema.start, schema.end, 'undefined'])
        bodies++
      }
      const text = node.arguments[summary]
      if (isText(text)) {
        edits.push([text.start, text.end, "''"])
        summaries++
      }
    } else if (node.type === 'Property' && !node.computed && ['body', 'query'].includes(node.key.name) && node.value.type === 'ArrowFunctionExpression') {
      edits.push([node.value.start, node.value.end, 'undefined'])
      bodies++
    } else if (node.type === 'Property' && !node.computed && node.key.name === 'summary' && isText(node.value)) {
      edits.push([node.value.start, node.value.end, "''"])
      summaries++
    }
  }
  need(bodies, 'request schemas', file)
  need(summaries, 'summaries', file)
  return applyEdits(code, edits)
}
