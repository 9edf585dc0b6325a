import {execFileSync} from 'node:child_process'
import {copyFileSync, readFileSync} from 'node:fs'
import {join} from 'node:path'

import {expect} from 'chai'

import {ROOT, tempHome} from '../helpers/cli.js'

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
