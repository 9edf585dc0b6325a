/** Types of lazy-schemas.js, for its tests. */
import type {Plugin} from 'esbuild'

export const SCHEMA_MODULES: string[]
export function lazySchemas(options?: {modules?: string[]; root?: string}): Plugin
