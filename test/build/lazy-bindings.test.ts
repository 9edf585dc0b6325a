import {expect} from 'chai'
import fc from 'fast-check'

import {lazyBindings} from '../../packages/sdk/scripts/lazy-bindings.js'

/** Evaluates an ES module's text (no imports) and returns its namespace. */
const evaluate = async (code: string): Promise<Record<string, unknown>> => import(`data:text/javascript;base64,${Buffer.from(code).toString('base64')}`)

/** `lazy` exports are functions that make the value: read them as the bundle's getters do. */
const values = (ns: Record<string, unknown>, lazy: string[]) => Object.fromEntries(Object.keys(ns).map((k) => [k, lazy.includes(k) ? (ns[k] as () => unknown)() : ns[k]]))

describe('lazyBindings (packages/sdk/scripts/lazy-bindings.js)', () => {
  it('makes a computed top-level const a function that computes it on first read, once', async () => {
    const {code, lazy} = lazyBindings(
      'globalThis.made = [];\nconst price = (globalThis.made.push("price"), {amount: 1});\nconst product = {price};\nfunction priceOf() { return price }\nexport {price, product, priceOf};\n',
    )
    expect(lazy).to.have.members(['price', 'product'])
    expect(code).to.include('let price$v; const price$ = () => (price$v ??= (')
    const ns = await evaluate(code)
    const made = (globalThis as {made?: string[]}).made!
    expect(made, 'nothing computed at import').to.deep.equal([])
    const price = (ns.price as () => unknown)()
    expect(made).to.deep.equal(['price'])
    expect((ns.price as () => unknown)(), 'same object on every read').to.equal(price)
    expect((ns.product as () => {price: unknown})().price, 'a shorthand property reads the same value').to.equal(price)
    expect((ns.priceOf as () => unknown)(), 'a function stays a function, its reads go through the getter').to.equal(price)
    expect(made).to.deep.equal(['price'])
  })

  it('leaves functions, literals, classes, let/var, destructuring and multi-declarator consts as they were', () => {
    const source = [
      'const f = () => 1;',
      'const g = function () { return 2 };',
      'const n = 3;',
      'const t = `x`;',
      'const C = class {};',
      'let l = [1];',
      'var v = [2];',
      'const {a, b} = {a: 1, b: 2};',
      'const p = [1], q = [2];',
      'export {f, g, n, t, C, l, v, a, b, p, q};',
      '',
    ].join('\n')
    const {code, lazy} = lazyBindings(source)
    expect(code).to.equal(source)
    expect(lazy).to.deep.equal([])
  })

  it('leaves a local that shadows a lazy name, property keys and member names alone', () => {
    const {code} = lazyBindings('const x = [1];\nfunction f(x) { return x }\nconst o = {x: 1};\nconst y = o.x + x.length;\nexport {f, y};\n')
    expect(code).to.include('function f(x) { return x }')
    expect(code).to.include('{x: 1}')
    expect(code).to.include('o$().x + x$().length')
  })

  it('exports a renamed lazy const under its exported name', async () => {
    const {code, lazy} = lazyBindings('const inner = [42];\nexport {inner as outer};\n')
    expect(lazy).to.deep.equal(['outer'])
    expect(code).to.include('inner$ as outer')
    expect(values(await evaluate(code), lazy)).to.deep.equal({outer: [42]})
  })

  it('refuses `export const` (it expects esbuild’s one export list)', () => {
    expect(() => lazyBindings('export const a = [1];\n')).to.throw(/expects exports as one `export \{…\}` list/)
  })

  it('gives every export the value the original module gives it, for generated chains of consts', async () => {
    // Each const is a literal, or an array / object / call over earlier consts (by name or shorthand).
    const module = fc.integer({min: 1, max: 8}).chain((size) =>
      fc.tuple(
        ...Array.from({length: size}, (_, i) =>
          i === 0
            ? fc.constant('[0]')
            : fc.oneof(
                fc.integer({min: 0, max: 9}).map(String),
                fc.subarray(Array.from({length: i}, (_, j) => `c${j}`), {minLength: 1}).map((refs) => `[${refs.join(', ')}]`),
                fc.subarray(Array.from({length: i}, (_, j) => `c${j}`), {minLength: 1}).map((refs) => `({${refs.join(', ')}})`),
                fc.constantFrom(...Array.from({length: i}, (_, j) => `JSON.stringify(c${j})`)),
              ),
        ),
      ),
    )
    await fc.assert(
      fc.asyncProperty(module, async (inits) => {
        const names = inits.map((_, i) => `c${i}`)
        const source = `${inits.map((init, i) => `const c${i} = ${init};`).join('\n')}\nexport {${names.join(', ')}};\n`
        const {code, lazy} = lazyBindings(source)
        expect(values(await evaluate(code), lazy)).to.deep.equal(values(await evaluate(source), []))
      }),
      {numRuns: 60},
    )
  })
})
