/**
 * Files (spec: `POST /files`, at most 5 MB): the file's storage `path` is what product `images`, variant
 * `image_path` and order evidence take. The bytes are stored with the document and go with it (a sandbox
 * reset wipes both).
 */
import {newId} from '../ids.js'
import type {Platform} from '../platform.js'
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

export function storeFile(gw: Platform, scope: Scope, input: {filename?: string; contentType?: string; bytes: Buffer}): FileDoc {
  const id = newId('file', 24)
  const filename = safeFilename(input.filename)
  const doc: FileDoc = {
    ...stamp(gw, scope, 'file', id),
    path: `files/${scope.merchant}/${scope.env}/${id}/${filename}`,
    filename: (input.filename ?? '').slice(0, 255) || filename,
    size: input.bytes.length,
    content_type: input.contentType || 'application/octet-stream',
  }
  gw.storage.insert('file', scope, doc, {created: doc.created})
  gw.storage.putBlob(id, input.bytes)
  return doc
}

/** The file a storage path names, if it is this merchant's in this environment. */
export function getFileByPath(gw: Platform, scope: Scope, path: string): FileDoc | undefined {
  const id = /^files\/[^/]+\/[^/]+\/(file_[A-Za-z0-9]+)\//.exec(path)?.[1]
  const doc = id ? gw.storage.get('file', scope, id) : undefined
  return doc?.path === path ? doc : undefined
}

/** The stored bytes of a file of the scope. */
export function readFileBytes(gw: Platform, scope: Scope, id: string): Buffer | undefined {
  if (!gw.storage.get('file', scope, id)) return undefined
  return gw.storage.blob(id)
}
