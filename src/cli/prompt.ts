/**
 * Asking the user, only ever on a terminal: every caller checks `canPrompt()` first and otherwise fails
 * naming the flag, so CI never waits for input.
 */
import {usageError} from './exit-codes.js'

/** Prompts only when both stdin and stderr are terminals (the prompt goes to stderr; stdout stays clean). */
export function canPrompt(): boolean {
  return Boolean(process.stdin.isTTY && process.stderr.isTTY)
}

/** Reads one line from the terminal, prompting on stderr so stdout stays clean; secrets are not echoed. */
export async function promptLine(message: string, secret = false): Promise<string> {
  const {createInterface} = await import('node:readline')
  const rl = createInterface({input: process.stdin, output: process.stderr, terminal: true})
  if (secret) {
    // Echo nothing while a secret is typed; readline writes everything through `_writeToOutput`.
    const internal = rl as unknown as {_writeToOutput: (s: string) => void}
    internal._writeToOutput = (s: string) => {
      if (s.startsWith(message)) process.stderr.write(message)
    }
  }
  try {
    return await new Promise<string>((resolve) => rl.question(message, (answer) => resolve(answer.trim())))
  } finally {
    rl.close()
    if (secret) process.stderr.write('\n')
  }
}

/** A yes/no question; Enter takes the default. */
export async function confirm(message: string, byDefault: boolean): Promise<boolean> {
  const answer = await promptLine(`${message} ${byDefault ? '[Y/n]' : '[y/N]'} `)
  return answer === '' ? byDefault : /^y(es)?$/i.test(answer)
}

/** `-` means the value comes on stdin (first line, trimmed), keeping a secret out of argv; anything else is the value itself. */
export async function valueOrStdin(value: string | undefined, flag: string): Promise<string | undefined> {
  if (value !== '-') return value
  const text = (await readStdin()).split(/\r?\n/)[0]!.trim()
  if (!text) throw usageError(`${flag} - read nothing from stdin`, flag)
  return text
}

/** Reads all of stdin as text (for `--token -`, `--data -`). */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}
