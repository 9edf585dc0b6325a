/** The closest name to a typo, for commands (hooks/command-not-found.ts) and flags (base-command.ts). */
import levenshtein from 'fast-levenshtein'

/** The closest of `candidates` to `typed`, unless even that is too far to be a typo. */
export function closestId(typed: string, candidates: readonly string[]): string | undefined {
  let best: {id: string; distance: number} | undefined
  for (const id of candidates) {
    const distance = levenshtein.get(typed, id)
    if (!best || distance < best.distance) best = {id, distance}
  }
  return best && best.distance <= Math.max(2, Math.ceil(typed.length / 2)) ? best.id : undefined
}
