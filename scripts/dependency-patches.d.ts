/** Types of scripts/dependency-patches.js, for its tests. */
import type {Plugin} from 'esbuild'

export interface Replacement {
  find: string | RegExp
  replace: string
  /** How often `find` occurs in the file: exactly this (default 1), or the patch fails. */
  count?: number
}
export interface Patch {
  name: string
  bundle: 'cli' | 'gateway'
  package: string
  /** The `~` range the patch was written against, pinned the same in package.json. */
  version: string
  file: string
  why: string
  replacements: Replacement[]
}
export const PATCHES: Patch[]
export const without: Set<string>
export function applyPatch(patch: Patch, source: string): string
export function patchDependencies(bundle: 'cli' | 'gateway', patches?: Patch[]): Plugin
