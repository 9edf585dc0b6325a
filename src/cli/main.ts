/**
 * The entry of the bundled CLI (scripts/build-cli.js): bin/run.js runs it through src/cli/bundle-loader.ts,
 * so oclif's core comes from the same bundle as the commands it runs (one copy, one `Command` class).
 */
import {execute, type Interfaces} from '@oclif/core'

const ignore = () => {}
/** oclif's debug output only appears with DEBUG=…: without it, a logger that never loads the `debug` package. */
const SILENT: Interfaces.Logger = {child: () => SILENT, debug: ignore, error: ignore, info: ignore, namespace: 'oclif', trace: ignore, warn: ignore}

/** Runs the CLI for `process.argv` (or `argv`); `dir` is the package root (oclif reads its package.json). */
export async function run(dir: string, argv?: string[]): Promise<void> {
  // DEBUG=* would print argv (tokens, keys) in full: mask secrets on stderr first.
  if (process.env.DEBUG) (await import('./redact-debug.js')).redactStderr(argv ?? process.argv.slice(2))
  // payapp installs no plugins at run time: don't look for a user's plugin list on every call.
  await execute({args: argv, loadOptions: {root: dir, userPlugins: false, logger: process.env.DEBUG ? undefined : SILENT}})
}
