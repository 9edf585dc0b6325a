#!/usr/bin/env -S node --conditions=payapp-source --import tsx
// Runs the CLI in oclif's development mode (development only). CommonJS like run.js (bin/package.json).
const {join} = require('node:path')

import('@oclif/core').then(({execute}) => execute({development: true, dir: join(__dirname, '..')}))
