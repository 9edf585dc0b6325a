/**
 * Turns what a caller has (a file path, bytes, a stream or a Blob) into the multipart body of
 * `POST /files`, refusing anything over the platform's 5 MB before a byte is sent.
 */
import {InvalidRequestError} from '../errors.js'
import {nodeBuiltin} from '../runtime.js'
import {MAX_FILE_BYTES} from '../schemas/catalog.js'

/** A stream of bytes, e.g. Node's `fs.createReadStream(…)` (any Readable), or a web ReadableStream where it is async-iterable. */
export interface ByteStream extends AsyncIterable<Uint8Array | string> {
  /** Called to stop a stream that turned out too large (Node's Readable has it). */
  destroy?(): void
  /** Node's `fs.createReadStream` sets it: the default filename. */
  path?: string | Uint8Array
}

/** A path to read (where the runtime has `node:fs`), the bytes themselves (a Buffer is a Uint8Array), a stream to buffer, or a Blob/File. */
export type UploadInput = string | Uint8Array | ByteStream | Blob

interface NodeFs {
  stat(path: string): Promise<{isFile(): boolean; size: number}>
  readFile(path: string): Promise<Uint8Array>
}

const basename = (path: string) => path.slice(Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\')) + 1)
const extname = (name: string) => (name.lastIndexOf('.') > 0 ? name.slice(name.lastIndexOf('.')) : '')

export interface UploadMeta {
  /** Default: the path's basename, the File's name, or `file` with an extension from the content type. */
  filename?: string
  /** Default: from the filename's extension or the bytes' signature, else application/octet-stream. */
  contentType?: string
}

const TYPES_BY_EXTENSION: Record<string, string> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.svg': 'image/svg+xml',
  '.pdf': 'application/pdf',
  '.txt': 'text/plain',
  '.csv': 'text/csv',
  '.json': 'application/json',
  '.zip': 'application/zip',
}
const EXTENSION_BY_TYPE = Object.fromEntries(Object.entries(TYPES_BY_EXTENSION).map(([ext, type]) => [type, ext]))

/** Content type from the first bytes, for Buffers and streams that come without a name. */
function sniff(bytes: Uint8Array): string | undefined {
  const starts = (...sig: number[]) => sig.every((b, i) => bytes[i] === b)
  if (starts(0x89, 0x50, 0x4e, 0x47)) return 'image/png'
  if (starts(0xff, 0xd8, 0xff)) return 'image/jpeg'
  if (starts(0x47, 0x49, 0x46, 0x38)) return 'image/gif'
  if (starts(0x25, 0x50, 0x44, 0x46)) return 'application/pdf'
  if (starts(0x52, 0x49, 0x46, 0x46) && bytes[8] === 0x57 && bytes[9] === 0x45 && bytes[10] === 0x42 && bytes[11] === 0x50) return 'image/webp'
  return undefined
}

function tooLarge(size: number): InvalidRequestError {
  const mb = (n: number) => (n / 1024 / 1024).toFixed(1)
  return new InvalidRequestError({
    message: `The file is ${mb(size)} MB; the platform accepts at most ${mb(MAX_FILE_BYTES)} MB per upload`,
    code: 'file_too_large',
    param: 'file',
  })
}

async function readPath(path: string): Promise<Uint8Array> {
  try {
    const {stat, readFile} = nodeBuiltin<NodeFs>('node:fs/promises', 'Uploading a file by its path')
    // Checked before reading so a huge file is never loaded into memory.
    const info = await stat(path)
    if (!info.isFile()) throw new Error('not a regular file')
    if (info.size > MAX_FILE_BYTES) throw tooLarge(info.size)
    return await readFile(path)
  } catch (err) {
    if (err instanceof InvalidRequestError) throw err
    const reason = (err as {code?: string}).code ?? (err as Error).message
    throw new InvalidRequestError({message: `Cannot read the file to upload at ${path}: ${reason}`, code: 'file_unreadable', param: 'file', cause: err})
  }
}

async function readStream(stream: ByteStream): Promise<Uint8Array> {
  const chunks: Uint8Array[] = []
  let size = 0
  for await (const chunk of stream) {
    const buf = typeof chunk === 'string' ? new TextEncoder().encode(chunk) : chunk
    size += buf.byteLength
    if (size > MAX_FILE_BYTES) {
      // Stop reading at once: the rest of an oversized stream would only be discarded.
      stream.destroy?.()
      throw tooLarge(size)
    }
    chunks.push(buf)
  }
  const bytes = new Uint8Array(size)
  let at = 0
  for (const chunk of chunks) {
    bytes.set(chunk, at)
    at += chunk.byteLength
  }
  return bytes
}

function isStream(value: unknown): value is ByteStream {
  return !!value && typeof value === 'object' && Symbol.asyncIterator in value
}

/** The multipart body with one `file` field. */
export async function uploadForm(input: UploadInput, meta: UploadMeta = {}): Promise<FormData> {
  let bytes: Uint8Array | Blob
  let name = meta.filename
  if (typeof input === 'string') {
    bytes = await readPath(input)
    name ??= basename(input)
  } else if (input instanceof Uint8Array) {
    bytes = input
  } else if (input instanceof Blob) {
    bytes = input
    name ??= (input as {name?: unknown}).name as string | undefined
  } else if (isStream(input)) {
    bytes = await readStream(input)
    name ??= typeof input.path === 'string' ? basename(input.path) : undefined
  } else {
    throw new InvalidRequestError({message: 'file must be a path, a Buffer, a Readable stream or a Blob', code: 'invalid_file', param: 'file'})
  }

  const size = bytes instanceof Blob ? bytes.size : bytes.byteLength
  if (size > MAX_FILE_BYTES) throw tooLarge(size)
  if (size === 0) throw new InvalidRequestError({message: 'The file to upload is empty', code: 'file_empty', param: 'file'})

  const type =
    meta.contentType ??
    (name ? TYPES_BY_EXTENSION[extname(name).toLowerCase()] : undefined) ??
    (bytes instanceof Blob ? bytes.type || undefined : sniff(bytes)) ??
    'application/octet-stream'
  name ??= `file${EXTENSION_BY_TYPE[type] ?? ''}`

  const form = new FormData()
  form.append('file', new Blob([bytes as Uint8Array<ArrayBuffer>], {type}), name)
  return form
}
