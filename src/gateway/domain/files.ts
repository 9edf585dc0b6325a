/**
 * Files (spec: `POST /files`, at most 5 MB): the file's storage `path` is what product `images`, variant
 * `image_path` and order evidence take. The bytes are stored with the document and go with it (a sandbox
 * reset wipes both).
 */
import {newId} from '../ids.js'
import type {Tx} from './context.js'
import type {FileDoc, Scope} from '../storage/documents.js'
import {stamp} from './shared.js'

/** A name safe inside a path: letters, digits, dot, dash and underscore; never empty, never hidden. */
export function safeFilename(name: string | undefined): string {
  const base = (name ?? '').split(/[\\/]/).pop() ?? ''
  const safe = base
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .replace(/^[._]+/, '')
    .slice(-120)
  return safe || 'file'
}

export async function storeFile(tx: Tx, scope: Scope, input: {filename?: string; contentType?: string; bytes: Buffer}): Promise<FileDoc> {
  const id = newId('file', 24)
  const filename = safeFilename(input.filename)
  const doc: FileDoc = {
    ...stamp(tx, scope, 'file', id),
    path: `files/${scope.merchant}/${scope.env}/${id}/${filename}`,
    filename: (input.filename ?? '').slice(0, 255) || filename,
    size: input.bytes.length,
    content_type: input.contentType || 'application/octet-stream',
  }
  await tx.insert('file', scope, doc, {created: doc.created})
  await tx.putBlob(id, input.bytes)
  return doc
}

/** The file a storage path names, if it is this merchant's in this environment. */
export async function getFileByPath(tx: Tx, scope: Scope, path: string): Promise<FileDoc | undefined> {
  const id = /^files\/[^/]+\/[^/]+\/(file_[A-Za-z0-9]+)\//.exec(path)?.[1]
  const doc = id ? await tx.get('file', scope, id) : undefined
  return doc?.path === path ? doc : undefined
}

/** The stored bytes of a file of the scope. */
export async function readFileBytes(tx: Tx, scope: Scope, id: string): Promise<Buffer | undefined> {
  if (!await tx.get('file', scope, id)) return undefined
  return await tx.blob(id)
}
