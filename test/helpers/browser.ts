/**
 * A real Chromium for the gateway's HTML pages: Debian's `chromium` (installed by .ci/run) driven by
 * playwright-core. Screenshots go to test-artifacts/screenshots/ (README: "Test artefacts"), which CI
 * keeps. Without a chromium on PATH the suite is skipped locally, and fails under CI.
 */
import {execFileSync} from 'node:child_process'
import {mkdirSync} from 'node:fs'
import {createServer, type RequestListener} from 'node:http'
import type {AddressInfo} from 'node:net'
import {join} from 'node:path'

import {chromium, type Browser, type Page} from 'playwright-core'

export const SCREENSHOT_DIR = join(process.cwd(), 'test-artifacts', 'screenshots')

export function chromiumPath(): string | undefined {
  if (process.env.PAYAPP_CHROMIUM) return process.env.PAYAPP_CHROMIUM
  for (const name of ['chromium', 'chromium-browser']) {
    try {
      return execFileSync('which', [name], {encoding: 'utf8'}).trim() || undefined
    } catch {
      // not this name
    }
  }
  return undefined
}

export async function launchBrowser(ctx: Mocha.Context): Promise<Browser | undefined> {
  const executablePath = chromiumPath()
  if (!executablePath) {
    if (process.env.CI) throw new Error('chromium is not installed: .ci/run installs it with apt-get install chromium')
    ctx.skip()
    return undefined
  }
  mkdirSync(SCREENSHOT_DIR, {recursive: true})
  // --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
  return chromium.launch({executablePath, args: ['--no-sandbox', '--disable-dev-shm-usage']})
}

export async function screenshot(page: Page, name: string): Promise<string> {
  const path = join(SCREENSHOT_DIR, `${name}.png`)
  await page.screenshot({path, fullPage: true})
  return path
}

/** A second local web server: another port on 127.0.0.1 is another origin than the gateway. */
export async function startSite(handler: RequestListener): Promise<{url: string; close(): Promise<void>}> {
  const server = createServer(handler)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const {port} = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
