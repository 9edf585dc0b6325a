export * from './common.js'
export * from './catalog.js'
export * from './commerce.js'
export * as admin from './admin.js'
