/**
 * Build step of scripts/build-cli.js: rewrites a module so that each top-level `const` whose value is computed
 * (a zod schema, a registry) is computed when first read, not at import. `const price = z.looseObject(…)`
 * becomes `let price$v; const price$ = () => (price$v ??= z.looseObject(…))`, every read of `price` in the
 * module becomes `price$()`, and `price` is exported as that function (`lazy` lists such exports, which the
 * caller turns back into values with getters). Values are still made once, so identity (registries, `===`)
 * is as before; only the time they are made changes. Functions, literals and every other statement stay as
 * they are. Scopes come from eslint-scope, so a local that shadows a top-level name is left alone.
 */
import {Parser} from 'acorn'
import {analyze} from 'eslint-scope'

const EAGER_INITS = new Set(['ArrowFunctionExpression', 'FunctionExpression', 'Literal', 'TemplateLiteral', 'ClassExpression'])

/** `code`: an ES module in plain JavaScript. Returns the rewritten module and the names it exports as functions. */
export function lazyBindings(code) {
  const ast = Parser.parse(code, {ecmaVersion: 'latest', sourceType: 'module', ranges: true})
  const scope = analyze(ast, {ecmaVersion: 2022, sourceType: 'module'}).scopes.find((s) => s.type === 'module')
  // Top-level `const x = <computed>` (one declarator, a plain name): made lazy.
  const lazy = new Map()
  for (const statement of ast.body) {
    if (statement.type !== 'VariableDeclaration' || statement.kind !== 'const' || statement.declarations.length !== 1) continue
    const [declarator] = statement.declarations
    if (declarator.id.type !== 'Identifier' || !declarator.init || EAGER_INITS.has(declarator.init.type)) continue
    lazy.set(declarator.id.name, {statement, init: declarator.init})
  }
  const edits = []
  for (const [name, {statement, init}] of lazy) {
    edits.push({start: statement.start, end: init.start, text: `let ${name}$v; const ${name}$ = () => (${name}$v ??= (`})
    edits.push({start: init.end, end: statement.end, text: '));'})
    const variable = scope.set.get(name)
    for (const ref of variable.references) {
      if (ref.init) continue
      edits.push({start: ref.identifier.start, end: ref.identifier.end, text: `${name}$()`, identifier: ref.identifier})
    }
  }
  // `{price}` must become `{price: price$()}`, and `export {price}` exports the function under the same name.
  const lazyExports = []
  const visit = (node) => {
    if (!node || typeof node.type !== 'string') return
    if (node.type === 'Property' && node.shorthand && node.value.type === 'Identifier') {
      const edit = edits.find((e) => e.identifier === node.value)
      if (edit) edit.text = `${node.key.name}: ${edit.text}`
    }
    if (node.type === 'ExportSpecifier' && lazy.has(node.local.name)) {
      // The whole specifier (`a` or `a as b`) is rewritten, in place of the edit of its local name if there is one.
      const edit = edits.find((e) => e.identifier === node.local)
      const exported = node.exported.name
      if (edit) Object.assign(edit, {start: node.start, end: node.end, text: `${node.local.name}$ as ${exported}`})
      else edits.push({start: node.start, end: node.end, text: `${node.local.name}$ as ${exported}`})
      lazyExports.push(exported)
    }
    for (const [key, value] of Object.entries(node)) {
      if (key === 'parent') continue
      if (Array.isArray(value)) for (const child of value) visit(child)
      else if (value && typeof value.type === 'string') visit(value)
    }
  }
  visit(ast)
  if (ast.body.some((s) => s.type === 'ExportNamedDeclaration' && s.declaration?.type === 'VariableDeclaration')) {
    throw new Error('lazyBindings expects exports as one `export {…}` list (esbuild’s output), not `export const`')
  }
  let out = code
  for (const edit of edits.sort((a, b) => b.start - a.start)) out = out.slice(0, edit.start) + edit.text + out.slice(edit.end)
  return {code: out, lazy: lazyExports}
}
