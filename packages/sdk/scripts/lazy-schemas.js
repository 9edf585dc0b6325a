/**
 * The esbuild plugin that builds the SDK's schemas when first read, for every bundle that holds them: the SDK's
 * own published builds (scripts/build.js here), the CLI's bundle and the gateway's (scripts/build-cli.js,
 * scripts/build-gateway.js at the repository's root).
 *
 * The schema modules build their zod objects at import, and the endpoint table names all of them. In a bundle,
 * each such module's top-level `const`s become lazy (lazy-bindings.js: still made once, so registries and
 * identity are as before), and every import of the module gets a small CommonJS module whose exports are getters
 * over them; the module itself is evaluated on the first read. So `products list` builds `product` and what it
 * is made of, not the request schemas, nor the commerce, billing or admin ones. The endpoint table reads its
 * schemas lazily too (src/endpoints.ts). In the CLI's bundle this buys 13 ms CPU per `products list` (Node 20,
 * scripts/bench/startup-layers.js).
 */
import {readFile} from 'node:fs/promises'
import {basename, dirname, join, relative} from 'node:path'
import {fileURLToPath} from 'node:url'

import {build as esbuild, transform as esbuildTransform} from 'esbuild'

import {lazyBindings} from './lazy-bindings.js'

const SDK_SRC = join(dirname(fileURLToPath(import.meta.url)), '..', 'src')
/** The schema modules (not schemas/index.ts, which only re-exports them). */
export const SCHEMA_MODULES = ['common', 'catalog', 'commerce', 'billing', 'admin'].map((name) => join(SDK_SRC, 'schemas', `${name}.ts`))

/** `modules`: the absolute paths of the modules made lazy; `root`: the folder esbuild's paths are relative to. */
export function lazySchemas({modules = SCHEMA_MODULES, root = join(SDK_SRC, '..')} = {}) {
  const names = [...new Set(modules.map((path) => basename(path, '.ts')))].map((name) => name.replace(/[-]/g, '\\-'))
  const importFilter = new RegExp(`(${['schemas', ...names].join('|')})(\\.[jt]s)?$`)
  const isLazy = (path) => modules.includes(path)
  return {
    name: 'lazy-schemas',
    setup(build) {
      const transformed = new Map()
      const transform = async (path) => {
        if (!transformed.has(path)) {
          const {code} = await esbuildTransform(await readFile(path, 'utf8'), {loader: 'ts', format: 'esm', sourcefile: path})
          transformed.set(path, lazyBindings(code))
        }
        return transformed.get(path)
      }
      build.onResolve({filter: importFilter}, async (args) => {
        if (args.pluginData === 'lazy-schemas') return undefined
        // The getters' own `require`: the real module.
        if (args.namespace === 'lazy-schema') return {path: join(args.resolveDir, args.path)}
        const {path, errors} = await build.resolve(args.path, {kind: args.kind, importer: args.importer, resolveDir: args.resolveDir, pluginData: 'lazy-schemas'})
        return errors.length === 0 && isLazy(path) ? {path: relative(root, path), namespace: 'lazy-schema'} : undefined
      })
      build.onLoad({filter: /\.ts$/}, async (args) =>
        args.namespace === 'file' && isLazy(args.path) ? {contents: (await transform(args.path)).code, loader: 'js', resolveDir: dirname(args.path)} : undefined,
      )
      build.onLoad({filter: /.*/, namespace: 'lazy-schema'}, async (args) => {
        const path = join(root, args.path)
        const {metafile} = await esbuild({entryPoints: [path], write: false, metafile: true, format: 'esm', logLevel: 'silent'})
        const exported = Object.values(metafile.outputs)[0].exports
        const {lazy} = await transform(path)
        const contents =
          `let real; const load = () => (real ??= require(${JSON.stringify(`./${basename(path)}`)}));\n` +
          `Object.defineProperty(exports, '__esModule', {value: true});\n` +
          `for (const name of ${JSON.stringify(exported.filter((name) => !lazy.includes(name)))}) Object.defineProperty(exports, name, {enumerable: true, get: () => load()[name]});\n` +
          `for (const name of ${JSON.stringify(lazy)}) Object.defineProperty(exports, name, {enumerable: true, get: () => load()[name]()});\n`
        return {contents, loader: 'js', resolveDir: dirname(path)}
      })
    },
  }
}
