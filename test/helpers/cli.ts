/**
 * Runs the real CLI (`bin/run.js`, the built dist/) as a child process, the way a user or CI does:
 * no TTY, a private config directory, the file credential store, and env vars for the rest.
 */
import {execFileSync, spawn, type ChildProcess} from 'node:child_process'
import {existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {createInterface} from 'node:readline'
import {fileURLToPath} from 'node:url'

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
export const BIN = join(ROOT, 'bin', 'run.js')

export interface CliResult {
  code: number
  stdout: string
  stderr: string
  /** stdout parsed as JSON (throws with the output when it is not). */
  json<T = any>(): T
}

export interface CliOptions {
  env?: Record<string, string | undefined>
  input?: string
  /** A config dir to share between runs (login then use); a fresh one by default. */
  home?: string
  timeoutMs?: number
}

export function tempHome(): string {
  return mkdtempSync(join(tmpdir(), 'payapp-cli-'))
}

/** The environment `runCli` gives a child process, for processes that must share its config dir. */
export function cliEnv(home: string, extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: Record<string, string | undefined> = {
    PATH: process.env.PATH,
    HOME: home,
    XDG_CONFIG_HOME: join(home, 'config'),
    XDG_DATA_HOME: join(home, 'data'),
    XDG_CACHE_HOME: join(home, 'cache'),
    PAYAPP_KEYCHAIN: 'off',
    NO_COLOR: '1',
    // The run's temporary directory (root-hooks.ts), removed with it.
    TMPDIR: process.env.TMPDIR,
    ...extra,
  }
  for (const key of Object.keys(env)) if (env[key] === undefined) delete env[key]
  return env as NodeJS.ProcessEnv
}

export interface CliProcess {
  child: ChildProcess
  /** stderr so far. */
  stderr(): string
  /** Resolves with the first stdout line. */
  firstLine: Promise<string>
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>
}

/** Starts a long-running command (`gateway start`, `listen`) as a child process sharing `home`. */
export function startCli(args: string[], home: string, env: Record<string, string | undefined> = {}): CliProcess {
  const child = spawn(process.execPath, [BIN, ...args], {cwd: ROOT, env: cliEnv(home, env), stdio: ['ignore', 'pipe', 'pipe']})
  let stderr = ''
  child.stderr!.on('data', (d) => (stderr += d))
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  const firstLine = new Promise<string>((resolve, reject) => {
    createInterface({input: child.stdout!}).once('line', resolve)
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited ${code} before its first line: ${stderr}`)))
  })
  firstLine.catch(() => {})
  return {
    child,
    stderr: () => stderr,
    firstLine,
    stop() {
      if (child.exitCode === null) child.kill('SIGTERM')
      return exited
    },
  }
}

export function runCli(args: string[], opts: CliOptions = {}): Promise<CliResult> {
  const env = cliEnv(opts.home ?? tempHome(), opts.env)
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {cwd: ROOT, env, stdio: ['pipe', 'pipe', 'pipe']})
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 30_000)
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({
        code: code ?? -1,
        stdout,
        stderr,
        json() {
          try {
            return JSON.parse(stdout)
          } catch {
            throw new Error(`stdout is not JSON (exit ${code}):\n${stdout}\nstderr:\n${stderr}`)
          }
        },
      })
    })
    child.stdin.end(opts.input ?? '')
  })
}

export interface GatewayProcess {
  child: ChildProcess
  url: string
  adminKey: string
}

/**
 * `payapp gateway start --port 0 --json …args` as its own process, resolved once its first stdout line
 * (url, admin key) is printed: for tests that kill it or pass it start-up flags.
 */
export function startGatewayProcess(args: string[], home = tempHome()): Promise<GatewayProcess> {
  const child = spawn(process.execPath, [BIN, 'gateway', 'start', '--port', '0', '--json', ...args], {
    cwd: ROOT,
    env: {PATH: process.env.PATH, HOME: home, XDG_CONFIG_HOME: join(home, 'config'), PAYAPP_KEYCHAIN: 'off'},
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  return new Promise((resolve, reject) => {
    let out = ''
    child.stdout!.on('data', (d) => {
      out += d
      const nl = out.indexOf('\n')
      if (nl >= 0) {
        const info = JSON.parse(out.slice(0, nl))
        resolve({child, url: info.url, adminKey: info.admin_key})
      }
    })
    child.on('exit', (code) => reject(new Error(`gateway exited ${code}: ${out}`)))
  })
}

/** Runs any program (npm, a generated app's scripts) to its end: exit code and stdout+stderr together. */
export function runProcess(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv, timeoutMs = 240_000): Promise<{code: number; output: string}> {
  return new Promise((done, fail) => {
    const child = spawn(cmd, args, {cwd, env, stdio: ['ignore', 'pipe', 'pipe']})
    let output = ''
    child.stdout.on('data', (d) => (output += d))
    child.stderr.on('data', (d) => (output += d))
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.on('error', fail)
    child.on('close', (code) => {
      clearTimeout(timer)
      done({code: code ?? -1, output})
    })
  })
}

/**
 * The installed packages in `dir`'s tree whose install scripts its package.json's `allowScripts` does not cover
 * (`npm install-scripts ls --json`): npm 11.16+ warns of them at every install and npm 12 skips their scripts, so a
 * native module such as better-sqlite3 is left unbuilt. Skips the test with an npm that has no such policy.
 */
export async function pendingInstallScripts(test: Mocha.Context, dir: string, env: NodeJS.ProcessEnv = process.env): Promise<string[]> {
  const {code, output} = await runProcess('npm', ['install-scripts', 'ls', '--json'], dir, {...env, npm_config_update_notifier: 'false'}, 60_000)
  if (code !== 0 && /Unknown command/i.test(output)) test.skip()
  if (code !== 0) throw new Error(`npm install-scripts ls exited ${code}: ${output}`)
  const listed = JSON.parse(output.slice(output.indexOf('{'))) as {allowScripts: Array<{changes: Array<{key: string; change: string}>}>}
  return listed.allowScripts.flatMap((p) => p.changes.filter((c) => c.change === 'pending').map((c) => c.key))
}

/**
 * A scratch folder for a suite that installs the built package (test/install/): its `before` hook fails at once when
 * dist/ is not built and makes the folder, its `after` hook removes it. Returns the folder's path, once made.
 */
export function installScratch(prefix: string): () => string {
  let dir = ''
  before(function () {
    if (!existsSync(join(ROOT, 'dist', 'testing', 'index.js'))) throw new Error('dist/ is not built: run npm run build')
    dir = mkdtempSync(join(tmpdir(), prefix))
  })
  after(() => dir && rmSync(dir, {recursive: true, force: true}))
  return () => dir
}

/** The environment for a generated app's npm runs: a private config, no keychain, none of the developer's PAYAPP_* settings. */
export function appEnv(home: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {...process.env, XDG_CONFIG_HOME: join(home, 'config'), XDG_DATA_HOME: join(home, 'data'), PAYAPP_KEYCHAIN: 'off', NO_COLOR: '1'}
  for (const key of Object.keys(env)) if (key.startsWith('PAYAPP_') && key !== 'PAYAPP_KEYCHAIN') delete env[key]
  return env
}

/**
 * A folder with this checkout's build of better-sqlite3's native module, packed as the prebuilt binary npm users
 * download: pass it as `npm_config_better_sqlite3_local_prebuilds` and an offline install of payapp (or an app
 * that depends on it) takes it from there (prebuild-install) instead of compiling for minutes.
 */
export function localSqlitePrebuilds(dir: string): string {
  const sqlite = JSON.parse(readFileSync(join(ROOT, 'node_modules', 'better-sqlite3', 'package.json'), 'utf8'))
  const prebuilds = join(dir, 'prebuilds')
  mkdirSync(prebuilds, {recursive: true})
  const name = `better-sqlite3-v${sqlite.version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`
  execFileSync('tar', ['-czf', join(prebuilds, name), '-C', join(ROOT, 'node_modules', 'better-sqlite3'), 'build/Release/better_sqlite3.node'])
  return prebuilds
}
