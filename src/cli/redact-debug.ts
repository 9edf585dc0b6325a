/**
 * With DEBUG set, oclif's debug lines print the whole argv, and with it any secret passed as a flag
 * (`login --token …`, `--secret-key`, `--admin-key`, `--secret`). This masks those values, and anything
 * shaped like a platform credential, in everything written to stderr (where `debug` writes) for the
 * rest of the process, with the one masking rule (packages/sdk/src/mask.ts). Safer still: `--token -`
 * reads the token from stdin, so it is never in argv. main.ts loads it only when DEBUG is set.
 */
import {mask} from '@payapp/sdk/mask'

const SECRET_FLAGS = new Set(['--token', '--secret-key', '--admin-key', '--secret'])
const CREDENTIAL = /\b(?:app_(?:live|test)|sk_(?:live|test)|adm|whsec)_[0-9A-Za-z]{8,}/g

/** The secret values in argv: the value after a secret flag, or after `=` in `--flag=value`. */
export function secretsIn(argv: readonly string[]): string[] {
  const secrets: string[] = []
  argv.forEach((arg, i) => {
    const eq = arg.indexOf('=')
    if (eq > 0 && SECRET_FLAGS.has(arg.slice(0, eq))) secrets.push(arg.slice(eq + 1))
    else if (SECRET_FLAGS.has(arg) && argv[i + 1] !== undefined && argv[i + 1] !== '-') secrets.push(argv[i + 1]!)
  })
  return secrets.filter((s) => s.length > 0)
}

export function redact(text: string, secrets: readonly string[]): string {
  let out = text
  for (const secret of secrets) out = out.split(secret).join(mask(secret))
  return out.replace(CREDENTIAL, (m) => mask(m))
}

/** Masks secrets in every later stderr write of this process. */
export function redactStderr(argv: readonly string[]): void {
  const secrets = secretsIn(argv)
  const write = process.stderr.write.bind(process.stderr) as (chunk: unknown, ...rest: unknown[]) => boolean
  process.stderr.write = ((chunk: unknown, ...rest: unknown[]) =>
    write(typeof chunk === 'string' || Buffer.isBuffer(chunk) ? redact(chunk.toString(), secrets) : chunk, ...rest)) as typeof process.stderr.write
}
