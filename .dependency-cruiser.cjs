/**
 * The layering rules of docs/architecture.md, enforced by `npm run lint` (depcruise src).
 * Type-only imports count too: a type circle is still a circle for the reader.
 */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'An import circle means two modules are one module in two files: split the shared part out.',
      from: {},
      to: {circular: true},
    },
    {
      name: 'sdk-stands-alone',
      severity: 'error',
      comment: 'The SDK ships to production apps on its own: it never loads the CLI, the gateway or their dependencies.',
      from: {path: '^packages/sdk/src/'},
      to: {path: '^src/(cli|commands|gateway)/'},
    },
    {
      name: 'sdk-no-server-deps',
      severity: 'error',
      comment: 'The SDK installs light: no oclif, fastify or SQLite behind `payapp/sdk`.',
      from: {path: '^packages/sdk/src/'},
      to: {path: 'node_modules/(@oclif|oclif|fastify|@fastify|better-sqlite3)/'},
    },
    {
      name: 'sdk-declared-deps',
      severity: 'error',
      comment: '@payapp/sdk installs alone: every package it imports is one of its own dependencies (zod), never a devDependency or one only the root has.',
      from: {path: '^packages/sdk/src/'},
      to: {dependencyTypes: ['npm-dev', 'npm-no-pkg', 'npm-unknown', 'npm-optional', 'npm-peer']},
    },
    {
      name: 'gateway-not-cli',
      severity: 'error',
      comment: 'The gateway runs in-process in test suites and as a server: it never needs the CLI.',
      from: {path: '^src/gateway/'},
      to: {path: '^src/(cli|commands)/'},
    },
    {
      name: 'domain-no-http',
      severity: 'error',
      comment: 'Domain rules are plain functions over storage: no fastify, no request objects, no HTTP modules.',
      from: {path: '^src/gateway/domain/'},
      to: {path: ['node_modules/(fastify|@fastify)/', '^src/gateway/(app|server|admin)\\.ts$', '^src/gateway/routes/']},
    },
    {
      name: 'domain-no-sqlite',
      severity: 'error',
      comment: 'Domain rules reach data through the storage interface only, so another backend can replace SQLite.',
      from: {path: '^src/gateway/domain/'},
      to: {path: ['node_modules/better-sqlite3/', '^src/gateway/storage/sqlite(-driver)?\\.ts$']},
    },
    {
      name: 'domain-no-platform',
      severity: 'error',
      comment:
        'Domain rules take the narrow context of their unit of work (domain/context.ts), never the Platform: its per-process state (credential cache, rate limiter, faults) and its engine stay out of every rule.',
      from: {path: '^src/gateway/domain/'},
      to: {path: ['^src/gateway/(platform|scheduler)\\.ts$']},
    },
    {
      name: 'testing-entry-only',
      severity: 'error',
      comment: 'payapp/testing starts the gateway through its one entry (server.ts, loaded by load.ts) and hands out SDK clients; nothing of the CLI.',
      from: {path: '^src/testing/'},
      to: {path: ['^src/(cli|commands)/', '^src/gateway/(?!(server|load)\\.ts$)']},
    },
    {
      name: 'cli-gateway-entry-only',
      severity: 'error',
      comment: 'The CLI starts the gateway through its entry (server.ts, loaded by load.ts from the code-cached bundle); any other gateway module it imported would load a second copy outside that bundle.',
      from: {path: '^src/(cli|commands)/'},
      to: {path: '^src/gateway/(?!(server|load)\\.ts$)'},
    },
    {
      name: 'cli-services-not-commands',
      severity: 'error',
      comment: 'Services are testable without oclif commands; commands call services, never the other way round.',
      from: {path: '^src/cli/'},
      to: {path: '^src/commands/'},
    },
    {
      name: 'startup-stands-alone',
      severity: 'error',
      comment: 'The bundle loader runs before anything else of the CLI or the gateway: node builtins only, so it never pulls a module out of the code-cached bundles.',
      from: {path: '^src/startup/'},
      to: {path: ['^src/', '^packages/', 'node_modules/'], pathNot: '^src/startup/'},
    },
  ],
  options: {
    doNotFollow: {path: 'node_modules'},
    tsPreCompilationDeps: true,
    tsConfig: {fileName: 'tsconfig.json'},
    // ESM packages (got, @oclif/core) resolve through their `exports` map, as Node does.
    enhancedResolveOptions: {exportsFields: ['exports'], conditionNames: ['payapp-source', 'import', 'require', 'node', 'default', 'types'], mainFields: ['module', 'main', 'types']},
    exclude: {path: '(^|/)dist/'},
  },
}
