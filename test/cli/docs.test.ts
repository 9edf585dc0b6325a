import {execFileSync} from 'node:child_process'
import {copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {expect} from 'chai'

import {ROOT, runProcess, tempHome} from '../helpers/cli.js'
import {TestGateway, type Account} from '../helpers/gateway.js'

describe('docs/commands.md', () => {
  it('is the reference oclif generates from the commands as they are (run `npm run readme` after changing one)', function () {
    this.timeout(60_000)
    const copy = join(tempHome(), 'commands.md')
    copyFileSync(join(ROOT, 'docs', 'commands.md'), copy)
    execFileSync(process.execPath, [join(ROOT, 'node_modules', 'oclif', 'bin', 'run.js'), 'readme', '--no-aliases', '--readme-path', copy], {cwd: ROOT, stdio: 'ignore'})
    // The usage block quotes `payapp --version`, which names this machine's node; the reference is what matters.
    const commands = (text: string) => text.slice(text.indexOf('<!-- commands -->'))
    expect(commands(readFileSync(copy, 'utf8'))).to.equal(commands(readFileSync(join(ROOT, 'docs', 'commands.md'), 'utf8')))
  })
})

interface Block {
  /** `README.md:143`: the file and the line of the opening fence. */
  where: string
  lang: string
  /** The info string's words after the language: `run` or `fragment`. */
  attributes: string[]
  code: string
}

const DOCS = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)]
const PROGRAM_LANGUAGES = new Set(['js', 'ts', 'javascript', 'typescript', 'mjs', 'cjs'])

/** Every fenced code block of the file (``` fences; the info string is the language and its attributes). */
function blocks(file: string): Block[] {
  const found: Block[] = []
  let open: {line: number; info: string[]; code: string[]} | undefined
  readFileSync(join(ROOT, file), 'utf8')
    .split('\n')
    .forEach((text, i) => {
      const fence = /^```(.*)$/.exec(text)
      if (!open && fence) open = {line: i + 1, info: fence[1]!.trim().split(/\s+/).filter(Boolean), code: []}
      else if (open && text === '```') {
        found.push({where: `${file}:${open.line}`, lang: open.info[0] ?? '', attributes: open.info.slice(1), code: open.code.join('\n') + '\n'})
        open = undefined
      } else open?.code.push(text)
    })
  return found
}

/** tsx's loader, from this checkout: TypeScript blocks run with their types stripped, as `npx tsx FILE` would. */
const TSX = import.meta.resolve('tsx')
const programs = DOCS.flatMap(blocks).filter((b) => PROGRAM_LANGUAGES.has(b.lang))

/**
 * The JavaScript and TypeScript blocks of README.md and docs/*.md. Each says what it is in its info string:
 * ```ts run (a complete program, run here) or ```ts fragment (lines that lean on names from around them). A
 * `run` block runs as a user would paste it into a file of a project with payapp installed: `node`
 * (through tsx for types), against a gateway this suite starts, whose URL stands in for the docs' local
 * address http://127.0.0.1:4242, with PAYAPP_TOKEN, PAYAPP_SECRET_KEY and PAYAPP_ADMIN_KEY set as the docs say.
 */
describe('README.md and docs/*.md: code blocks that are complete programs run', function () {
  this.timeout(60_000)
  let gw: TestGateway
  let acct: Account
  let dir: string

  before(async function () {
    // `npm test` builds first; payapp/testing and payapp/sdk load from the build.
    if (!existsSync(join(ROOT, 'dist', 'testing', 'index.js'))) this.skip()
    gw = await TestGateway.start()
    acct = await gw.account('test')
    dir = tempHome()
    mkdirSync(join(dir, 'node_modules', '@payapp'), {recursive: true})
    symlinkSync(ROOT, join(dir, 'node_modules', 'payapp'))
    symlinkSync(join(ROOT, 'packages', 'sdk'), join(dir, 'node_modules', '@payapp', 'sdk'))
    writeFileSync(join(dir, 'package.json'), JSON.stringify({name: 'docs-example', private: true, type: 'module'}))
    // The files the examples upload, as a user would have them beside the program.
    writeFileSync(join(dir, 'tee.jpg'), Buffer.from('/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQH/wAALCAABAAEBAREA/8QAFAABAAAAAAAAAAAAAAAAAAAACf/EABQQAQAAAAAAAAAAAAAAAAAAAAD/2gAIAQEAAD8AKp//2Q==', 'base64'))
  })
  after(() => gw?.close())

  it('marks every JavaScript and TypeScript block as `run` or `fragment`', () => {
    const unmarked = programs.filter((b) => !b.attributes.includes('run') && !b.attributes.includes('fragment')).map((b) => b.where)
    expect(unmarked, 'add "run" (a complete program) or "fragment" after the language').to.deep.equal([])
  })

  for (const block of programs.filter((b) => b.attributes.includes('run'))) {
    it(`${block.where} runs`, async () => {
      const file = join(dir, `${block.where.replace(/[^\w]/g, '_')}.${block.lang.startsWith('t') ? 'mts' : 'mjs'}`)
      writeFileSync(file, block.code.replaceAll('http://127.0.0.1:4242', gw.url))
      const env = {...process.env, PAYAPP_BASE_URL: gw.url, PAYAPP_TOKEN: acct.token, PAYAPP_SECRET_KEY: acct.secretKey, PAYAPP_ADMIN_KEY: gw.gw.adminKey, NO_COLOR: '1'}
      const res = await runProcess(process.execPath, [...(file.endsWith('.mts') ? ['--import', TSX] : []), file], dir, env, 50_000)
      expect(res.code, `${block.where} exited ${res.code}:\n${res.output}`).to.equal(0)
    })
  }
})
