/**
 * Every endpoint of the table (src/sdk/endpoints.ts) has exactly one CLI command and one SDK method.
 * It iterates the table, so an endpoint added later fails here until its command and method exist.
 */
import {readdirSync} from 'node:fs'
import {join, relative} from 'node:path'
import {fileURLToPath} from 'node:url'

import {expect} from 'chai'

import {AppClient, MerchantClient, StoreClient} from '@payapp/sdk/client'
import {endpoints, type EndpointId} from '@payapp/sdk/endpoints'

const COMMANDS = fileURLToPath(new URL('../../src/commands', import.meta.url))

function files(dir: string): string[] {
  return readdirSync(dir, {withFileTypes: true}).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []))
}

/** Method paths (`products.prices.create`) by the endpoint they call, over every client's namespaces. */
function sdkMethods(): Map<EndpointId, Set<string>> {
  const found = new Map<EndpointId, Set<string>>()
  const walk = (tree: Record<string, unknown>, prefix: string) => {
    for (const [name, value] of Object.entries(tree)) {
      const id = typeof value === 'function' ? (value as {endpoint?: EndpointId}).endpoint : undefined
      if (id) found.set(id, (found.get(id) ?? new Set()).add(prefix + name))
      else if (value && typeof value === 'object' && !(value instanceof Function)) walk(value as Record<string, unknown>, `${prefix}${name}.`)
    }
  }
  const opts = {baseUrl: 'http://127.0.0.1:1'}
  for (const client of [new AppClient({...opts, token: 't'}), new StoreClient({...opts, secretKey: 'k'}), new MerchantClient({...opts, secretKey: 'k'})]) {
    walk(client as unknown as Record<string, unknown>, '')
  }
  return found
}

describe('every endpoint has one CLI command and one SDK method', function () {
  this.timeout(60_000)

  it('one command per endpoint (commands declare it as `static endpoint`, the factories do so themselves)', async function () {
    const byEndpoint = new Map<string, string[]>()
    for (const file of files(COMMANDS)) {
      const command = (await import(file)).default as {endpoint?: string | string[]}
      const id = relative(COMMANDS, file).replace(/\.ts$/, '').replace(/\/index$/, '').split('/').join(' ')
      for (const endpoint of [command.endpoint ?? []].flat()) byEndpoint.set(endpoint, [...(byEndpoint.get(endpoint) ?? []), id])
    }
    for (const id of byEndpoint.keys()) expect(Object.keys(endpoints), `a command names an unknown endpoint ${id}`).to.include(id)
    const problems = Object.keys(endpoints)
      .map((id) => [id, byEndpoint.get(id) ?? []] as const)
      .filter(([, commands]) => commands.length !== 1)
      .map(([id, commands]) => `${id}: ${commands.length === 0 ? 'no command' : `${commands.join(', ')}`}`)
    expect(problems, 'endpoints without exactly one command').to.deep.equal([])
  })

  it('one SDK method per endpoint (the same method on each client its doors serve)', function () {
    const methods = sdkMethods()
    const problems = Object.keys(endpoints)
      .map((id) => [id, [...(methods.get(id as EndpointId) ?? [])]] as const)
      .filter(([, paths]) => paths.length !== 1)
      .map(([id, paths]) => `${id}: ${paths.length === 0 ? 'no method' : paths.join(', ')}`)
    expect(problems, 'endpoints without exactly one SDK method').to.deep.equal([])
  })
})
