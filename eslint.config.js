import js from '@eslint/js'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  {ignores: ['dist/', 'packages/*/dist/', 'node_modules/', 'templates/', 'tmp/', '.cache/', '.bench-variants/']},
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      // TypeScript checks names itself; for the plain-JS scripts, node's globals are a given.
      'no-undef': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', {argsIgnorePattern: '^_', varsIgnorePattern: '^_'}],
    },
  },
  {
    // bin/ is CommonJS (bin/package.json), so the CLI's start-up never starts Node's ES module loader; the
    // CommonJS example of payapp/testing is a user's require() suite.
    files: ['bin/**/*.js', 'docs/examples/**/*.cjs'],
    languageOptions: {sourceType: 'commonjs'},
    rules: {'@typescript-eslint/no-require-imports': 'off'},
  },
  {
    // The build's bundles minify identifiers (scripts/bundle-options.js), as apps' own bundlers do to the SDK: a name
    // that users see (an error's name, its --json type) is a literal, never a class's or function's own name.
    files: ['src/**/*.ts', 'packages/sdk/src/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {selector: "MemberExpression[object.type='MetaProperty'][property.name='name']", message: 'new.target.name is renamed by minifiers: name the class with a literal'},
        {selector: "MemberExpression[object.property.name='constructor'][property.name='name']", message: 'constructor.name is renamed by minifiers: use a literal'},
      ],
    },
  },
  {
    files: ['test/**/*.ts'],
    rules: {'@typescript-eslint/no-unused-expressions': 'off'},
  },
)
