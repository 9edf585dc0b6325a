/**
 * The storage engine a `--db` value names: a PostgreSQL URL (`postgres://` or `postgresql://`) opens
 * PostgresStorage, anything else is an SQLite file (or `:memory:`). The PostgreSQL client is imported only
 * when a URL is given, so a gateway on SQLite never loads it.
 */
import {SqliteStorage} from './sqlite.js'
import type {Storage} from './storage.js'

export const isPostgresUrl = (location: string) => /^postgres(ql)?:\/\//i.test(location)

export async function openStorage(location: string): Promise<Storage> {
  if (!isPostgresUrl(location)) return new SqliteStorage(location)
  const {PostgresStorage} = await import('./postgres.js')
  return PostgresStorage.open(location)
}
