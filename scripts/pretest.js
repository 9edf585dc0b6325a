// npm test's first step: `npm run build` and `npm run lint` at once. Neither reads what the other writes (lint
// checks the sources: eslint has no type information, and the type checker resolves @payapp/sdk to its sources
// by the payapp-source condition). On 2 cores both took 41 s at once against 49 one after the other (the slower
// alone: 27). The build prints as it goes; lint's output follows it, whole, so the two never interleave.
// Exits with the first non-zero status of build, then lint.
import {spawn} from 'node:child_process'

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'

function run(script, buffered) {
  return new Promise((resolve) => {
    const child = spawn(npm, ['run', script], {stdio: buffered ? ['ignore', 'pipe', 'pipe'] : 'inherit'})
    const chunks = []
    if (buffered) for (const stream of [child.stdout, child.stderr]) stream.on('data', (chunk) => chunks.push(chunk))
    child.on('error', (error) => resolve({code: 1, output: `${error.message}\n`}))
    child.on('close', (code) => resolve({code: code ?? 1, output: Buffer.concat(chunks).toString()}))
  })
}

const [build, lint] = await Promise.all([run('build', false), run('lint', true)])
process.stdout.write(lint.output)
process.exitCode = build.code || lint.code
