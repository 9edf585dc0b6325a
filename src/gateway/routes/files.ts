/**
 * File upload (spec: `POST /files`, at most 5 MB): one multipart/form-data part named `file`. The
 * file's storage `path` is what product `images`, variant `image_path` and order evidence take. The
 * bytes live in SQLite next to the `file` document, and go with it (a sandbox reset wipes both).
 */
import type {FileObject} from '../../sdk/schemas/catalog.js'
import {created, type Handlers} from '../app.js'
import type {Scope, Storage} from '../db.js'
import {newId} from '../ids.js'
import type {Platform} from '../platform.js'

/** Kind `file`: the file object as served. */
export type FileDoc = FileObject & {object: 'file'}

export const fileHandlers: Partial<Handlers> = {
  // app.ts has read the multipart upload (and fingerprinted its bytes for idempotency) by now.
  'files.create'({gw, scope, upload}) {
    return created(storeFile(gw, scope, upload!))
  },
}

/** A name safe inside a path: letters, digits, dot, dash and underscore; never empty, never hidden. */
export function safeFilename(name: string | undefined): string {
  const base = (name ?? '').split(/[\\/]/).pop() ?? ''
  const safe = base
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .replace(/^[._]+/, '')
    .slice(-120)
  return safe || 'file'
}

export function storeFile(gw: Platform, scope: Scope, input: {filename?: string; contentType?: string; bytes: Buffer}): FileDoc {
  const now = gw.now()
  const id = newId('file', 24)
  const filename = safeFilename(input.filename)
  const doc: FileDoc = {
    id,
    object: 'file',
    livemode: scope.env === 'live',
    path: `files/${scope.merchant}/${scope.env}/${id}/${filename}`,
    filename: (input.filename ?? '').slice(0, 255) || filename,
    size: input.bytes.length,
    content_type: input.contentType || 'application/octet-stream',
    created: now,
  }
  gw.storage.insert('file', scope, doc, {created: now})
  blobs(gw.storage).insert.run(id, input.bytes)
  return doc
}

/** The file a storage path names, if it is this merchant's in this environment. */
export function getFileByPath(gw: Platform, scope: Scope, path: string): FileDoc | undefined {
  const id = /^files\/[^/]+\/[^/]+\/(file_[A-Za-z0-9]+)\//.exec(path)?.[1]
  const doc = id ? gw.storage.get<FileDoc>('file', scope, id) : undefined
  return doc?.path === path ? doc : undefined
}

/** The stored bytes of a file of the scope. */
export function readFileBytes(gw: Platform, scope: Scope, id: string): Buffer | undefined {
  if (!gw.storage.get('file', scope, id)) return undefined
  return blobs(gw.storage).read.get(id)?.bytes
}

const statements = new WeakMap<Storage, ReturnType<typeof prepare>>()

function prepare(storage: Storage) {
  // The blob row belongs to its document: deleting the document (a sandbox reset) deletes the bytes.
  storage.db.exec(
    `CREATE TABLE IF NOT EXISTS file_blobs (id TEXT PRIMARY KEY REFERENCES objects(id) ON DELETE CASCADE, bytes BLOB NOT NULL)`,
  )
  return {
    insert: storage.db.prepare<[string, Buffer]>('INSERT INTO file_blobs (id, bytes) VALUES (?, ?)'),
    read: storage.db.prepare<[string], {bytes: Buffer}>('SELECT bytes FROM file_blobs WHERE id = ?'),
  }
}

function blobs(storage: Storage) {
  let s = statements.get(storage)
  if (!s) statements.set(storage, (s = prepare(storage)))
  return s
}
