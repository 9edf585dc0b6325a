/**
 * The entry of the bundled CLI (scripts/build-cli.js): bin/run.js runs it through src/cli/bundle-loader.ts,
 * so oclif's core comes from the same bundle as the commands it runs (one copy, one `Command` class).
 */
import {execute} from '@oclif/core'

/** Runs the CLI for `process.argv` (or `argv`); `dir` is the package root (oclif reads its package.json). */
export async function run(dir: string, argv?: string[]): Promise<void> {
  await execute({dir, args: argv})
}
