import type {Storage, Store} from '../../src/gateway/storage/storage.js'

/**
 * A unit on `storage` that runs `first`, then stays open until `release()`: another unit races it meanwhile.
 * `reached` settles with what `first` answered, `done` with the unit. Release it in a `finally`: a unit left
 * open keeps its connection, and closing the storage waits for it.
 */
export function heldUnit<T>(storage: Storage, first: (tx: Store) => Promise<T>) {
  let release!: () => void
  let ran!: (value: T) => void
  const gate = new Promise<void>((resolve) => (release = resolve))
  const reached = new Promise<T>((resolve) => (ran = resolve))
  const done = storage.write(async (tx) => {
    const value = await first(tx)
    ran(value)
    await gate
    return value
  })
  return {reached, release, done}
}
