/**
 * The catalogue as code: parse a file, plan against the platform, apply, export. Usable without the
 * CLI: every function takes an SDK client (AppClient or StoreClient) of either door.
 */
export {applyCatalog, applyPlan, pendingChanges, type ApplyEvent, type ApplyOptions, type ApplyResult, type CatalogRun} from './apply.js'
export {exportCatalog} from './export.js'
export {CatalogFileError, formatOf, loadCatalog, parseCatalog, serializeCatalog, type CatalogFormat} from './load.js'
export {Pacer, parseRate, type RateMode} from './pacer.js'
export {planCatalog, type Change, type Plan, type PlanOptions, type Summary} from './plan.js'
export {catalogFile, catalogJsonSchema, type CatalogFile} from './schema.js'
export type {CatalogClient} from './store.js'
