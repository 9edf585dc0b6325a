/**
 * `payapp prodcts list`: says what was typed, in the user's spelling (`prodcts list`, not oclif's
 * `prodcts:list`), and the closest command or topic. On a terminal it offers to run the suggestion;
 * without one it prints `Did you mean "products list"?` on stderr and exits 2 (a usage error), so a
 * script fails fast with the fix in its log. (@oclif/plugin-not-found prompts only and exits 127.)
 */
import type {Hook} from '@oclif/core'

import {closestId} from '../did-you-mean.js'
import {ExitCode} from '../exit-codes.js'
import {canPrompt, confirm} from '../prompt.js'

const hook: Hook.CommandNotFound = async function (opts) {
  const {config} = opts
  const readable = (id: string) => id.replaceAll(':', config.topicSeparator)
  const candidates = [
    ...config.commands.filter((c) => !c.hidden).flatMap((c) => [c.id, ...c.aliases]),
    ...config.topics.filter((t) => !t.hidden).map((t) => t.name),
  ]
  const suggestion = closestId(opts.id, candidates)
  process.stderr.write(`"${readable(opts.id)}" is not a ${config.bin} command.\n`)
  if (suggestion) {
    const isCommand = config.findCommand(suggestion) !== undefined
    if (isCommand && canPrompt() && (await confirm(`Did you mean "${readable(suggestion)}"?`, true).catch(() => false))) {
      // The words after the mistyped command are its arguments, as they would have been.
      const argv = opts.argv?.length ? opts.argv : opts.id.split(':').slice(suggestion.split(':').length)
      return config.runCommand(suggestion, argv)
    }
    process.stderr.write(`Did you mean "${readable(suggestion)}"?\n`)
  }
  process.stderr.write(`Run "${config.bin} help${suggestion && !config.findCommand(suggestion) ? ` ${readable(suggestion)}` : ''}" for a list of commands.\n`)
  this.exit(ExitCode.USAGE)
}

export default hook
