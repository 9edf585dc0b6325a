/**
 * `payapp init`'s work, without oclif: validate the name, pick the template, render every file in
 * memory, then write. Files ending `.hbs` go through handlebars (strict: a missing variable is an
 * error), everything else is copied byte for byte.
 */
import {mkdir, readdir, readFile, stat, writeFile} from 'node:fs/promises'
import {homedir} from 'node:os'
import {dirname, join, relative, resolve, sep} from 'node:path'
import {fileURLToPath} from 'node:url'

import Handlebars from 'handlebars'

import {CliError, ExitCode, usageError} from '../exit-codes.js'

/** `<package root>/templates`, found from this module in both src/ (tsx) and dist/. */
export const TEMPLATES_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'templates')

export interface ScaffoldOptions {
  /** npm package name of the new app. */
  name: string
  /** A directory under `templatesDir`, or a path (`./my-template`, `/abs/dir`) to a folder of template files. */
  template: string
  /** Target directory (created if missing). */
  dir: string
  /** Write into a non-empty directory, overwriting the template's files there. */
  force?: boolean
  /** Extra handlebars variables; `name` is always set. */
  variables?: Record<string, unknown>
  templatesDir?: string
  /** Render everything and report the files, but write nothing. */
  dryRun?: boolean
}

export interface ScaffoldResult {
  name: string
  dir: string
  template: string
  /** Written (or, with dryRun, would-be-written) files, relative to `dir`, `/`-separated, sorted. */
  files: string[]
  dry_run: boolean
}

const NAME_PART = /^[a-z0-9][a-z0-9._-]*$/
// Names npm itself refuses, plus the one that would make the app depend on itself.
const RESERVED_NAMES = new Set(['node_modules', 'favicon.ico', 'payapp'])

/** Why `name` is not a usable npm package name for an app, or undefined when it is. */
export function invalidAppName(name: string): string | undefined {
  if (name.length === 0) return 'it is empty'
  if (name.length > 214) return 'it is longer than 214 characters'
  if (name !== name.toLowerCase()) return 'it has upper-case letters (npm package names are lower-case)'
  if (name !== name.trim()) return 'it has leading or trailing spaces'
  const scoped = /^@([^/]+)\/([^/]+)$/.exec(name)
  if (name.startsWith('@') && !scoped) return 'a scoped name has the form @scope/name'
  const parts = scoped ? [scoped[1]!, scoped[2]!] : [name]
  for (const part of parts) {
    if (!NAME_PART.test(part)) return 'use lower-case letters, digits and "-" (may also contain "." or "_", not first)'
  }
  if (RESERVED_NAMES.has(parts.at(-1)!)) return `"${parts.at(-1)}" is reserved`
  return undefined
}

/** The part of a package name that names its directory: `@acme/shop-app` → `shop-app`. */
export function baseName(name: string): string {
  return name.split('/').at(-1)!
}

/** Template names are directory names under templates/; anything else (`..`, `/`) is refused. */
export async function listTemplates(templatesDir = TEMPLATES_DIR): Promise<string[]> {
  const entries = await readdir(templatesDir, {withFileTypes: true}).catch(() => [])
  return entries
    .filter((e) => e.isDirectory() && NAME_PART.test(e.name))
    .map((e) => e.name)
    .sort()
}

/** The template `payapp init` uses without --template. */
export const DEFAULT_TEMPLATE = 'webhook-app'

/** A `--template` value that is a path rather than a built-in name. */
export const isTemplatePath = (template: string) => /^(\.{1,2}([/\\]|$)|[/\\~]|[A-Za-z]:[/\\])/.test(template)

export interface SdkChoice {
  /** `--sdk-path`: a payapp checkout or unpacked package to link. */
  sdkPath?: string
  /** `--sdk-version`: an npm version or range of payapp, once it is published. */
  sdkVersion?: string
}

/** Where the generated app's vendored tarballs go, relative to the app (committed with it). */
export const VENDOR_DIR = 'vendor'

/** The app's dependencies on payapp: `payapp`, and `@payapp/sdk` where it is not on a registry either. */
export type PayappDependencies = {payapp: string; '@payapp/sdk'?: string}

/**
 * How the generated app depends on payapp. payapp is not published on npm, so by default the app depends on
 * the tarballs of the payapp that generated it, copied into its vendor/ (`tarballs`, see pack.ts): they travel
 * with the app, so `npm install` works on a CI runner too, and a tarball is installed as built, never rebuilt.
 * `--sdk-version` asks the registry instead (for when a release exists), `--sdk-path` links another copy.
 */
export function payappDependencies(choice: SdkChoice, tarballs?: {payapp: string; sdk: string}): PayappDependencies {
  if (choice.sdkPath && choice.sdkVersion) throw usageError('Pass --sdk-path or --sdk-version, not both', '--sdk-version')
  if (choice.sdkVersion) return {payapp: choice.sdkVersion}
  if (choice.sdkPath) return {payapp: `file:${resolve(choice.sdkPath)}`}
  if (!tarballs) throw new Error('payappDependencies: vendored tarballs expected')
  // payapp asks for @payapp/sdk at its exact version, which the vendored SDK satisfies: npm looks for it nowhere else.
  return {'@payapp/sdk': `file:${VENDOR_DIR}/${tarballs.sdk}`, payapp: `file:${VENDOR_DIR}/${tarballs.payapp}`}
}

/**
 * The variables every template may use: payapp's version and dependency specs (`payappDependency`, and
 * `payappDependencies`, the object to use as a whole; `vendored` when they are tarballs in vendor/), its Node engine, and the versions of the dev tools
 * payapp itself is built with (so a TypeScript app installs from the same versions, offline from npm's cache
 * where payapp was installed).
 */
export function templateVariables(
  pjson: {version: string; engines?: unknown; dependencies?: unknown; optionalDependencies?: unknown; devDependencies?: unknown; allowScripts?: unknown},
  dependencies: PayappDependencies,
): Record<string, unknown> {
  const dev = (pjson.devDependencies ?? {}) as Record<string, string>
  const brought = new Set(Object.keys({...(pjson.dependencies as object), ...(pjson.optionalDependencies as object)}))
  const allowed = Object.entries((pjson.allowScripts ?? {}) as Record<string, boolean>).filter(([name]) => brought.has(name))
  return {
    payappVersion: pjson.version,
    payappDependency: dependencies.payapp,
    payappDependencies: dependencies,
    // payapp and its SDK are tarballs in the app's vendor/ (READMEs say to commit them).
    vendored: dependencies.payapp.startsWith(`file:${VENDOR_DIR}/`),
    // npm's install-script policy for what payapp brings (npm 11.16+ warns of the scripts it does not name, npm 12
    // skips them): payapp's own allowScripts for its runtime dependencies (the native builds run); payapp's
    // `prepare`, which npm counts for a file: dependency, builds only in payapp's own checkout.
    payappAllowScripts: {...Object.fromEntries(allowed), payapp: false},
    nodeEngine: (pjson.engines as Record<string, string> | undefined)?.node ?? '>=20',
    tsxVersion: dev.tsx ?? '^4.0.0',
    typescriptVersion: dev.typescript ?? '^5.0.0',
    typesNodeVersion: dev['@types/node'] ?? '^20.0.0',
  }
}

/**
 * Where a template file lands: `.hbs` stripped, `__name__` replaced by the app's directory name, and a
 * leading `_` turned into `.` (npm drops `.gitignore` from published packages, so templates ship `_gitignore`).
 */
export function outputPath(templatePath: string, name: string): string {
  return templatePath
    .split('/')
    .map((segment) => segment.replaceAll('__name__', baseName(name)).replace(/^_/, '.'))
    .join('/')
    .replace(/\.hbs$/, '')
}

async function walk(dir: string, base = dir): Promise<string[]> {
  const out: string[] = []
  for (const entry of await readdir(dir, {withFileTypes: true})) {
    const full = join(dir, entry.name)
    // A local template folder may be a git checkout with its own dependencies installed.
    if (entry.name === '.git' || entry.name === 'node_modules') continue
    if (entry.isDirectory()) out.push(...(await walk(full, base)))
    else if (entry.isFile()) out.push(relative(base, full).split(sep).join('/'))
  }
  return out
}

async function isNonEmptyDir(dir: string): Promise<boolean> {
  const info = await stat(dir).catch(() => undefined)
  if (!info) return false
  if (!info.isDirectory()) throw new CliError(`${dir} exists and is not a directory`, {exitCode: ExitCode.CONFLICT, code: 'not_a_directory', param: '--dir'})
  return (await readdir(dir)).length > 0
}

function handlebars(): typeof Handlebars {
  // An isolated environment, so helpers registered here never leak into other users of handlebars.
  const hb = Handlebars.create()
  // {{json value}} on one line; {{json value 2}} pretty-printed for a place indented by 2 spaces.
  hb.registerHelper('json', (value: unknown, ...rest: unknown[]) => {
    const indent = rest.length > 1 ? Number(rest[0]) : 0
    return indent ? JSON.stringify(value, null, 2).replaceAll('\n', `\n${' '.repeat(indent)}`) : JSON.stringify(value)
  })
  return hb
}

export async function scaffold(opts: ScaffoldOptions): Promise<ScaffoldResult> {
  const {name, template, force = false} = opts
  const templatesDir = opts.templatesDir ?? TEMPLATES_DIR
  const problem = invalidAppName(name)
  if (problem) throw usageError(`Invalid app name "${name}": ${problem}`, 'NAME')

  const root = await templateRoot(template, templatesDir)

  const dir = resolve(opts.dir)
  if (!force && (await isNonEmptyDir(dir))) {
    throw new CliError(`${dir} is not empty: choose another --dir, or pass --force to write the template's files into it`, {
      exitCode: ExitCode.CONFLICT,
      type: 'conflict_error',
      code: 'directory_not_empty',
      param: '--dir',
    })
  }

  const variables = {...opts.variables, name}
  const hb = handlebars()
  // Everything is rendered before anything is written, so a broken template leaves no half-made app.
  const rendered: Array<{path: string; content: Buffer | string}> = []
  for (const file of (await walk(root)).sort()) {
    const source = await readFile(join(root, file))
    let content: Buffer | string = source
    if (file.endsWith('.hbs')) {
      try {
        content = hb.compile(source.toString('utf8'), {strict: true, noEscape: true})(variables)
      } catch (error) {
        // Handlebars names the context as "[object Object]", which tells the reader nothing.
        const message = (error as Error).message.replace(' in [object Object]', '')
        throw new CliError(`Template ${template}/${file}: ${message}`, {exitCode: ExitCode.UNEXPECTED, code: 'template_error', cause: error})
      }
    }
    rendered.push({path: outputPath(file, name), content})
  }

  if (!opts.dryRun) {
    for (const {path, content} of rendered) {
      const target = join(dir, ...path.split('/'))
      await mkdir(dirname(target), {recursive: true})
      await writeFile(target, content)
    }
  }
  return {name, dir, template, files: rendered.map((f) => f.path).sort(), dry_run: Boolean(opts.dryRun)}
}

/** The folder a `--template` value names: a built-in template, or a local folder of template files. */
async function templateRoot(template: string, templatesDir: string): Promise<string> {
  if (isTemplatePath(template)) {
    const dir = resolve(template.replace(/^~(?=$|[/\\])/, homedir()))
    const info = await stat(dir).catch(() => undefined)
    if (!info?.isDirectory()) throw usageError(`Template folder ${dir} does not exist or is not a directory`, '--template')
    if ((await walk(dir)).length === 0) throw usageError(`Template folder ${dir} has no files`, '--template')
    return dir
  }
  const available = await listTemplates(templatesDir)
  if (!available.includes(template)) {
    throw usageError(`Unknown template "${template}"; available: ${available.join(', ') || '(none)'}, or a folder (./path)`, '--template')
  }
  return join(templatesDir, template)
}
