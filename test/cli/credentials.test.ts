import {expect} from 'chai'
import {execFile} from 'node:child_process'
import {mkdtemp, readFile, rm, stat, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath, pathToFileURL} from 'node:url'
import {promisify} from 'node:util'

import {readConfig, resolveContext, writeConfig} from '../../src/cli/config.js'
import {CredentialStore, type Keychain, keychainAdvice, mask, saveCredential} from '../../src/cli/credentials.js'

const TOKEN = 'app_test_abcdefghijklmnopWXYZ'

const repoRoot = fileURLToPath(new URL('../..', import.meta.url))
const execFileAsync = promisify(execFile)
const exists = (path: string) => stat(path).then(() => true, () => false)

/** An in-memory keychain that behaves like keytar. */
function memoryKeychain(): Keychain & {entries: Map<string, string>} {
  const entries = new Map<string, string>()
  return {
    entries,
    async getPassword(_service, account) {
      return entries.get(account) ?? null
    },
    async setPassword(_service, account, password) {
      entries.set(account, password)
    },
    async deletePassword(_service, account) {
      return entries.delete(account)
    },
    async findCredentials() {
      return [...entries].map(([account, password]) => ({account, password}))
    },
  }
}

/** A keychain whose every call hangs, like a locked Secret Service on a headless box. */
const hungKeychain: Keychain = {
  getPassword: () => new Promise(() => {}),
  setPassword: () => new Promise(() => {}),
  deletePassword: () => new Promise(() => {}),
  findCredentials: () => new Promise(() => {}),
}

describe('credential store', function () {
  let configDir: string
  let warnings: string[]
  const warn = (m: string) => warnings.push(m)

  beforeEach(async function () {
    configDir = join(await mkdtemp(join(tmpdir(), 'payapp-cred-')), 'payapp')
    warnings = []
  })
  afterEach(async function () {
    await rm(join(configDir, '..'), {recursive: true, force: true})
  })

  describe('file backend (PAYAPP_KEYCHAIN=off)', function () {
    const fileStore = () => new CredentialStore({configDir, warn, env: {PAYAPP_KEYCHAIN: 'off'}})

    it('stores the secret in credentials.json readable by the owner only, in a 0700 dir', async function () {
      const result = await fileStore().set('default', 'token', 'test', TOKEN)
      expect(result).to.deep.equal({backend: 'file', location: join(configDir, 'credentials.json')})
      expect((await stat(join(configDir, 'credentials.json'))).mode & 0o777).to.equal(0o600)
      expect((await stat(configDir)).mode & 0o777).to.equal(0o700)
    })

    it('round-trips per profile, environment and kind', async function () {
      const store = fileStore()
      await store.set('default', 'token', 'test', TOKEN)
      await store.set('default', 'secret_key', 'live', 'sk_live_0123456789abcdef')
      expect(await store.get('default', 'token', 'test')).to.equal(TOKEN)
      expect(await store.get('default', 'token', 'live')).to.equal(undefined)
      expect(await store.get('other', 'token', 'test')).to.equal(undefined)
      // A fresh process sees the same values.
      expect(await fileStore().get('default', 'secret_key', 'live')).to.equal('sk_live_0123456789abcdef')
    })

    it('warns once, ever, naming the reason and the file', async function () {
      await fileStore().set('default', 'token', 'test', TOKEN)
      await fileStore().set('default', 'token', 'live', TOKEN)
      await fileStore().set('shop2', 'token', 'test', TOKEN)
      expect(warnings).to.have.length(1)
      expect(warnings[0]).to.equal(
        `Warning: no usable OS keychain (disabled by PAYAPP_KEYCHAIN=off); storing credentials in ${join(configDir, 'credentials.json')} (mode 0600)`,
      )
      expect((await readConfig(configDir)).keychain_fallback_warned).to.equal(true)
    })

    it('deletes, reporting whether anything was there, and leaves no file once empty', async function () {
      const store = fileStore()
      await store.set('default', 'token', 'test', TOKEN)
      expect(await store.delete('default', 'token', 'test')).to.equal(true)
      expect(await store.get('default', 'token', 'test')).to.equal(undefined)
      expect(await store.delete('default', 'token', 'test')).to.equal(false)
      expect(await exists(join(configDir, 'credentials.json'))).to.equal(false)
    })

    it('never writes the secret anywhere but credentials.json', async function () {
      await saveCredential(fileStore(), {profile: 'default', env: 'test', kind: 'token', secret: TOKEN, baseUrl: 'http://127.0.0.1:4242'})
      expect(await readFile(join(configDir, 'config.json'), 'utf8')).not.to.contain(TOKEN)
      expect(warnings.join('\n')).not.to.contain(TOKEN)
    })
  })

  describe('keychain backend', function () {
    it('prefers a working keychain: no file, no warning', async function () {
      const keychain = memoryKeychain()
      const store = new CredentialStore({configDir, warn, keychain})
      const result = await store.set('default', 'token', 'test', TOKEN)
      expect(result.backend).to.equal('keychain')
      expect(keychain.entries.get('default:test:token')).to.equal(TOKEN)
      expect(await store.get('default', 'token', 'test')).to.equal(TOKEN)
      expect(warnings).to.deep.equal([])
      expect(await exists(join(configDir, 'credentials.json'))).to.equal(false)
    })

    it('drops an older file copy once the keychain takes the secret', async function () {
      await new CredentialStore({configDir, warn, env: {PAYAPP_KEYCHAIN: 'off'}}).set('default', 'token', 'test', 'app_test_old_value_0000')
      const store = new CredentialStore({configDir, warn, keychain: memoryKeychain()})
      await store.set('default', 'token', 'test', TOKEN)
      expect(await store.get('default', 'token', 'test')).to.equal(TOKEN)
    })

    it('falls back to the file when the keychain errors (no D-Bus on a headless box)', async function () {
      const failing = {...memoryKeychain(), setPassword: async () => Promise.reject(new Error('Cannot autolaunch D-Bus without X11 $DISPLAY'))}
      const store = new CredentialStore({configDir, warn, keychain: failing})
      expect((await store.set('default', 'token', 'test', TOKEN)).backend).to.equal('file')
      expect(await store.get('default', 'token', 'test')).to.equal(TOKEN)
      expect(warnings[0]).to.contain('(Cannot autolaunch D-Bus without X11 $DISPLAY)')
      // It says how to fix it, not only what broke.
      expect(warnings[0]).to.match(/To use the OS keychain: unlock or start a Secret Service \(e\.g\. gnome-keyring\) in this session; or set PAYAPP_KEYCHAIN=off/)
    })

    it('a keychain library that cannot load is explained as a setup step (install libsecret, rebuild keytar), not a module error', function () {
      const advice = keychainAdvice('keytar could not be loaded: it is not installed')
      expect(advice).to.include('install libsecret (Debian/Ubuntu: sudo apt-get install libsecret-1-dev').and.include('npm rebuild keytar')
      expect(keychainAdvice('disabled by PAYAPP_KEYCHAIN=off')).to.equal('')
    })

    it('falls back within the time limit when the keychain hangs, and does not wait again', async function () {
      const store = new CredentialStore({configDir, warn, keychain: hungKeychain, env: {PAYAPP_KEYCHAIN_TIMEOUT_MS: '200'}})
      let started = Date.now()
      const result = await store.set('default', 'token', 'test', TOKEN)
      expect(Date.now() - started).to.be.below(1000)
      expect(result.backend).to.equal('file')
      expect(warnings[0]).to.contain('keychain write did not answer within 200 ms')
      expect(store.keychainHung).to.equal(true)

      started = Date.now()
      expect(await store.get('default', 'token', 'live')).to.equal(undefined)
      expect(await store.list()).to.have.length(1)
      expect(Date.now() - started).to.be.below(100)
    })

    it('a CLI run whose keychain call never returns still exits promptly', async function () {
      // The native call of a hung keytar stays pending and would keep Node alive; simulate that with a timer.
      const script = join(configDir, '..', 'hung.mts')
      const src = (p: string) => JSON.stringify(pathToFileURL(join(repoRoot, p)).href)
      await writeFile(script, `
        import {BaseCommand} from ${src('src/cli/base-command.ts')}
        import {CredentialStore} from ${src('src/cli/credentials.ts')}
        const hung = () => new Promise(() => setInterval(() => {}, 1000))
        class Login extends BaseCommand {
          static id = 'login'
          createCredentialStore() {
            return new CredentialStore({configDir: this.config.configDir, timeoutMs: 200,
              keychain: {getPassword: hung, setPassword: hung, deletePassword: hung, findCredentials: hung}})
          }
          async run() {
            const stored = await this.saveCredential('token', ${JSON.stringify(TOKEN)})
            this.log('stored in ' + stored.backend)
          }
        }
        await Login.run([], ${JSON.stringify(repoRoot)})
      `)
      const started = Date.now()
      const {stdout, stderr} = await execFileAsync(process.execPath, ['--conditions=payapp-source', '--import', 'tsx', script], {
        cwd: repoRoot, timeout: 15_000, env: {...process.env, XDG_CONFIG_HOME: join(configDir, '..')},
      })
      expect(stdout).to.equal('stored in file\n')
      expect(stderr).to.contain('keychain write did not answer within 200 ms')
      expect(Date.now() - started).to.be.below(8000)
    })

    it('a delete the keychain cannot answer warns that the secret may remain there', async function () {
      const keychain = memoryKeychain()
      await new CredentialStore({configDir, warn, keychain}).set('default', 'token', 'test', TOKEN)
      const locked = {...keychain, deletePassword: async () => Promise.reject(new Error('Keychain is locked'))}
      const store = new CredentialStore({configDir, warn, keychain: locked})
      expect(await store.delete('default', 'token', 'test')).to.equal(false)
      expect(warnings).to.deep.equal(['Warning: the OS keychain did not answer (Keychain is locked); account "default:test:token" may still be stored there'])
      expect(warnings.join('\n')).not.to.contain(TOKEN)
    })

    it('a disabled keychain makes delete silent', async function () {
      const store = new CredentialStore({configDir, warn, env: {PAYAPP_KEYCHAIN: 'off'}})
      expect(await store.delete('default', 'token', 'test')).to.equal(false)
      expect(warnings).to.deep.equal([])
    })

    it('a hung keychain on read yields "no credential", not a hang', async function () {
      const store = new CredentialStore({configDir, warn, keychain: hungKeychain, timeoutMs: 150})
      const started = Date.now()
      expect(await store.get('default', 'token', 'test')).to.equal(undefined)
      expect(Date.now() - started).to.be.below(1000)
    })

    it('round-trips through the real OS keychain (keytar)', async function () {
      if (process.env.PAYAPP_TEST_KEYCHAIN !== '1') this.skip()
      const store = new CredentialStore({configDir, warn, env: {PAYAPP_KEYCHAIN_TIMEOUT_MS: '5000'}})
      const profile = `test-${process.pid}-${Date.now()}`
      try {
        expect((await store.set(profile, 'token', 'test', TOKEN)).backend).to.equal('keychain')
        expect(warnings).to.deep.equal([])
        expect(await new CredentialStore({configDir, warn}).get(profile, 'token', 'test')).to.equal(TOKEN)
        const listed = (await store.list()).filter((c) => c.profile === profile)
        expect(listed).to.deep.equal([{profile, env: 'test', kind: 'token', secret: TOKEN, backend: 'keychain'}])
        expect(await store.delete(profile, 'token', 'test')).to.equal(true)
        expect(await store.get(profile, 'token', 'test')).to.equal(undefined)
      } finally {
        await store.delete(profile, 'token', 'test')
      }
    })
  })

  describe('mask', function () {
    it('keeps the prefix up to the second underscore and the last 4 characters', function () {
      expect(mask('app_test_abcdefghijklmnopWXYZ')).to.equal('app_test_…WXYZ')
      expect(mask('sk_live_0123456789abcdef1234')).to.equal('sk_live_…1234')
      expect(mask('tok_0123456789abcdefWXYZ')).to.equal('tok_…WXYZ')
    })

    it('shows no tail when 4 characters would give away too much of a short secret', function () {
      expect(mask('sk_test_abcd1234')).to.equal('sk_test_…')
      expect(mask('hunter2')).to.equal('…')
      expect(mask(undefined)).to.equal('')
    })
  })

  describe('which profile and environment a run uses', function () {
    const saved = {current_profile: 'shop2', profiles: {shop2: {env: 'live' as const, base_url: 'https://shop2.example'}}}

    it('falls back to the saved profile, then the defaults', async function () {
      expect(resolveContext({profiles: {}}, {}, {})).to.include({profile: 'default', env: 'test', baseUrl: 'http://127.0.0.1:4242'})
      await writeConfig(configDir, saved)
      expect(resolveContext(await readConfig(configDir), {}, {})).to.include({profile: 'shop2', env: 'live', baseUrl: 'https://shop2.example'})
    })

    it('lets env vars override the profile, and flags override env vars', function () {
      const env = {PAYAPP_ENV: 'test', PAYAPP_BASE_URL: 'http://env.example'}
      expect(resolveContext(saved, {}, env)).to.include({profile: 'shop2', env: 'test', baseUrl: 'http://env.example'})
      expect(resolveContext(saved, {env: 'live', 'base-url': 'http://flag.example'}, env)).to.include({env: 'live', baseUrl: 'http://flag.example'})
      expect(resolveContext(saved, {}, {PAYAPP_PROFILE: 'other'})).to.include({profile: 'other', env: 'test'})
    })

    it('rejects a bad PAYAPP_ENV with exit code 2', function () {
      expect(() => resolveContext(saved, {}, {PAYAPP_ENV: 'prod'})).to.throw('PAYAPP_ENV must be "live" or "test"').with.property('exitCode', 2)
    })
  })
})
