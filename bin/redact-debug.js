// With DEBUG set, oclif's debug lines print the whole argv, and with it any secret passed as a flag
// (`login --token …`, `--secret-key`, `--admin-key`, `--secret`). This masks those values, and anything
// shaped like a platform credential, in everything written to stderr (where `debug` writes) for the
// rest of the process. Safer still: `--token -` reads the token from stdin, so it is never in argv.
const SECRET_FLAGS = new Set(['--token', '--secret-key', '--admin-key', '--secret'])
const CREDENTIAL = /\b(?:app_(?:live|test)|sk_(?:live|test)|adm|whsec)_[0-9A-Za-z]{8,}/g

/** `app_test_…1234`: the kind of credential and its last four characters, as the CLI's own `mask`. */
function mask(secret) {
  const prefix = /^(?:(?:app|sk)_(?:live|test)|adm|whsec)_/.exec(secret)?.[0] ?? ''
  return secret.length - prefix.length <= 8 ? `${prefix}…` : `${prefix}…${secret.slice(-4)}`
}

/** The secret values in argv: the value after a secret flag, or after `=` in `--flag=value`. */
function secretsIn(argv) {
  const secrets = []
  argv.forEach((arg, i) => {
    const eq = arg.indexOf('=')
    if (eq > 0 && SECRET_FLAGS.has(arg.slice(0, eq))) secrets.push(arg.slice(eq + 1))
    else if (SECRET_FLAGS.has(arg) && argv[i + 1] !== undefined && argv[i + 1] !== '-') secrets.push(argv[i + 1])
  })
  return secrets.filter((s) => s.length > 0)
}

function redact(text, secrets) {
  let out = text
  for (const secret of secrets) out = out.split(secret).join(mask(secret))
  return out.replace(CREDENTIAL, (m) => mask(m))
}

/** Masks secrets in every later stderr write of this process. */
function redactStderr(argv) {
  const secrets = secretsIn(argv)
  const write = process.stderr.write.bind(process.stderr)
  process.stderr.write = (chunk, ...rest) => write(typeof chunk === 'string' || Buffer.isBuffer(chunk) ? redact(chunk.toString(), secrets) : chunk, ...rest)
}

module.exports = {mask, secretsIn, redact, redactStderr}
