import {Args, Flags} from '@oclif/core'

import {BaseCommand, globalFlags} from '../cli/base-command.js'
import {usageError} from '../cli/exit-codes.js'

export default class Init extends BaseCommand<typeof Init> {
  static override summary = 'Create a new app from a template, with tests that run against a local gateway.'
  static override description = `Writes the template's files into --dir (default: ./NAME) and prints the next steps.
Templates: webhook-app (TypeScript webhook receiver, the default), minimal (one SDK script), catalog-sync
(catalog.yaml and a CI workflow running "payapp catalog apply"), or a folder of your own (./path: .hbs files are
rendered, others copied).
payapp is not published on npm: the app gets this payapp and its SDK as tarballs in vendor/ (commit them), so it
installs anywhere, a CI runner included, and payapp is never rebuilt there; --sdk-version depends on a registry
version instead (once a release exists), --sdk-path links another copy.
Refuses a directory that is not empty unless --force is given. Never prompts without a terminal.`

  static override examples = [
    '<%= config.bin %> init my-shop-app',
    '<%= config.bin %> init my-script --template minimal --dir ./tools/script --json',
    '<%= config.bin %> init my-app --template ./company-template --dry-run',
    'cd my-shop-app && npm install && npm test',
  ]

  // Scaffolding talks to no platform: the profile, environment and base URL flags do not apply.
  static override baseFlags = globalFlags('verbose')

  static override args = {
    name: Args.string({description: 'npm package name of the app (lower-case, digits, "-"); also the default directory.'}),
  }

  static override flags = {
    template: Flags.string({description: 'webhook-app, minimal, catalog-sync, or ./a-folder of template files.', default: 'webhook-app', env: 'PAYAPP_INIT_TEMPLATE'}),
    dir: Flags.string({description: 'Directory to create the app in. [default: ./NAME]', env: 'PAYAPP_INIT_DIR'}),
    // No env var: overwriting files must be asked for on the command line.
    force: Flags.boolean({description: 'Write into a directory that is not empty, overwriting files the template has.'}),
    'dry-run': Flags.boolean({description: 'List the files that would be written, and write nothing.'}),
    'sdk-version': Flags.string({description: 'Depend on this npm version or range of payapp (a registry release) instead of vendoring this one.', env: 'PAYAPP_INIT_SDK_VERSION'}),
    'sdk-path': Flags.string({description: 'Link this payapp checkout or package folder instead of the running one.', env: 'PAYAPP_INIT_SDK_PATH'}),
  }

  async run() {
    const [{scaffold, baseName, payappDependencies, templateVariables, VENDOR_DIR}, {moveInto, packToTemp, tarballNames}, {join, relative, resolve, isAbsolute}, {rm}] = await Promise.all([
      import('../cli/services/init.js'),
      import('../cli/services/pack.js'),
      import('node:path'),
      import('node:fs/promises'),
    ])
    const name = await this.appName()
    const dir = resolve(this.flags.dir ?? baseName(name))
    const choice = {sdkPath: this.flags['sdk-path'], sdkVersion: this.flags['sdk-version']}
    const vendored = !choice.sdkPath && !choice.sdkVersion ? await tarballNames(this.config.root) : undefined
    const opts = {
      name,
      template: this.flags.template,
      dir,
      force: this.flags.force,
      dryRun: this.flags['dry-run'],
      templatesDir: join(this.config.root, 'templates'),
      variables: templateVariables(this.config.pjson, payappDependencies(choice, vendored)),
    }
    let scaffolded
    if (vendored && !opts.dryRun) {
      // Checked (name, template, directory), then packed, then written: a failed pack leaves no half-made app.
      await scaffold({...opts, dryRun: true})
      const packed = await packToTemp(this.config.root)
      try {
        scaffolded = await scaffold(opts)
        // The tarballs the package.json points at, packed from this payapp as it is built (nothing rebuilds).
        await moveInto(packed, join(dir, VENDOR_DIR))
      } finally {
        await rm(packed, {recursive: true, force: true})
      }
    } else {
      scaffolded = await scaffold(opts)
    }
    const vendorFiles = vendored ? [vendored.sdk, vendored.payapp].map((f) => `${VENDOR_DIR}/${f}`) : []
    const result = {...scaffolded, files: [...scaffolded.files, ...vendorFiles].sort()}

    const rel = relative(process.cwd(), result.dir)
    const cdTo = rel === '' ? '.' : rel.startsWith('..') || isAbsolute(rel) ? result.dir : rel
    const nextSteps = [`cd ${/[\s'"$`\\]/.test(cdTo) ? JSON.stringify(cdTo) : cdTo}`, 'npm install', 'npm test']
    return this.render({...result, next_steps: nextSteps}, (r) => {
      if (r.dry_run) {
        this.log(`Would create ${r.name} in ${r.dir} (template ${r.template}; --dry-run, nothing written):`)
        for (const file of r.files) this.log(`  ${file}`)
        return
      }
      this.log(`Created ${r.name} in ${r.dir} (template ${r.template}):`)
      for (const file of r.files) this.log(`  ${file}`)
      this.log(`\nNext steps:\n  ${r.next_steps.join(' && ')}`)
      this.log('Then run it against a local gateway: see README.md (payapp gateway start, payapp listen, payapp trigger).')
    })
  }

  /** NAME, or a prompt on a terminal; without one, fail at once naming the argument (CI never hangs). */
  private async appName(): Promise<string> {
    if (this.args.name) return this.args.name
    if (!process.stdin.isTTY || !process.stderr.isTTY || this.jsonEnabled()) {
      throw usageError('Missing NAME argument: payapp init NAME (not prompting: stdin is not a terminal or --json is set)', 'NAME')
    }
    return this.requireFlag('name', undefined, {message: 'App name (e.g. my-shop-app): '})
  }
}
