/**
 * The two packages as npm tarballs: `payapp` (CLI, gateway, templates) and `@payapp/sdk`, which payapp depends
 * on. Nothing is on the npm registry yet, so these tarballs are how payapp travels: `npm run pack` writes them
 * for a release or a CI job, and `payapp init` copies them into a new app's vendor/ so the app installs on any
 * machine (a CI runner has no path to the payapp that scaffolded it).
 */
import {execFile} from 'node:child_process'
import {mkdir, readFile, realpath} from 'node:fs/promises'
import {createRequire} from 'node:module'
import {dirname, join} from 'node:path'
import {promisify} from 'node:util'

const run = promisify(execFile)

export interface PackageDirs {
  payapp: string
  sdk: string
}

/** payapp's package root and the @payapp/sdk it loads (packages/sdk in a checkout, node_modules/@payapp/sdk installed). */
export async function packageDirs(root: string): Promise<PackageDirs> {
  const sdkManifest = createRequire(join(root, 'package.json')).resolve('@payapp/sdk/package.json')
  return {payapp: root, sdk: await realpath(dirname(sdkManifest))}
}

/** The file name `npm pack` gives a package: `@payapp/sdk` 0.1.0 → `payapp-sdk-0.1.0.tgz`. */
export async function tarballName(dir: string): Promise<string> {
  const {name, version} = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as {name: string; version: string}
  return `${name.replace(/^@/, '').replace('/', '-')}-${version}.tgz`
}

/** The names `pack` writes, without packing: for a dry run and for the dependencies that point at them. */
export async function tarballNames(root: string): Promise<PackageDirs> {
  const dirs = await packageDirs(root)
  return {payapp: await tarballName(dirs.payapp), sdk: await tarballName(dirs.sdk)}
}

/**
 * Packs payapp and its SDK into `destination` as they are built (`--ignore-scripts`: packing never rebuilds,
 * and an installed payapp has nothing to build) and returns the tarballs' file names.
 */
export async function pack(root: string, destination: string): Promise<PackageDirs> {
  const dirs = await packageDirs(root)
  await mkdir(destination, {recursive: true})
  const one = async (dir: string) => {
    const {stdout} = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', destination], {cwd: dir, maxBuffer: 64 * 1024 * 1024})
    return (JSON.parse(stdout) as Array<{filename: string}>)[0]!.filename.replace(/^@/, '').replace('/', '-')
  }
  return {payapp: await one(dirs.payapp), sdk: await one(dirs.sdk)}
}
