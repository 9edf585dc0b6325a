/**
 * A durable inbox of webhook events: an append-only JSON-lines file, flushed to disk before the
 * platform is told "received". An event is recorded once (by its id); what happens to it afterwards
 * (handled, failed, given up) is appended too, so a restart picks up exactly the events still pending.
 *
 * This is what makes the receiver lose nothing: the platform's delivery is acknowledged only once the
 * event is safe on disk, and the event is processed from here, retried here, however slow or failing
 * the handler is. Swap it for a table with a unique key on the event id if your app has a database.
 */
import {mkdir, open, readFile, type FileHandle} from 'node:fs/promises'
import {dirname} from 'node:path'

import type {WebhookEvent} from 'payapp/sdk'

export type EntryStatus = 'pending' | 'handled' | 'dead'

export interface InboxEntry {
  event: WebhookEvent
  status: EntryStatus
  attempts: number
  received: number
  last_error: string | null
}

type Line =
  | {op: 'received'; event: WebhookEvent; at: number}
  | {op: 'handled'; id: string; at: number}
  | {op: 'failed'; id: string; at: number; error: string; dead: boolean}

const now = () => Math.floor(Date.now() / 1000)

export class Inbox {
  private writes: Promise<unknown> = Promise.resolve()

  private constructor(
    private readonly file: FileHandle,
    private readonly entries: Map<string, InboxEntry>,
  ) {}

  /** Opens (or creates) the inbox file and replays it. */
  static async open(path: string): Promise<Inbox> {
    await mkdir(dirname(path), {recursive: true})
    const entries = new Map<string, InboxEntry>()
    const text = await readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => (error.code === 'ENOENT' ? '' : Promise.reject(error)))
    for (const raw of text.split('\n')) {
      if (!raw.trim()) continue
      let line: Line
      try {
        line = JSON.parse(raw) as Line
      } catch {
        continue // a line torn by a crash mid-write was never acknowledged: the platform redelivers it
      }
      if (line.op === 'received') {
        entries.set(line.event.id, {event: line.event, status: 'pending', attempts: 0, received: line.at, last_error: null})
        continue
      }
      const entry = entries.get(line.id)
      if (entry) apply(entry, line)
    }
    return new Inbox(await open(path, 'a'), entries)
  }

  /** Records a new event durably; `false` when its id was recorded before (a redelivery). */
  async record(event: WebhookEvent): Promise<boolean> {
    if (this.entries.has(event.id)) return false
    const entry: InboxEntry = {event, status: 'pending', attempts: 0, received: now(), last_error: null}
    this.entries.set(event.id, entry)
    try {
      await this.append({op: 'received', event, at: entry.received})
    } catch (error) {
      this.entries.delete(event.id) // not on disk, so not received: the platform will retry
      throw error
    }
    return true
  }

  async handled(id: string): Promise<void> {
    await this.settle({op: 'handled', id, at: now()})
  }

  async failed(id: string, error: string, dead: boolean): Promise<void> {
    await this.settle({op: 'failed', id, at: now(), error, dead})
  }

  get(id: string): InboxEntry | undefined {
    return this.entries.get(id)
  }

  /** Pending events, oldest first. */
  pending(): InboxEntry[] {
    return [...this.entries.values()].filter((e) => e.status === 'pending')
  }

  /** The newest entries first. */
  recent(limit: number): InboxEntry[] {
    return [...this.entries.values()].reverse().slice(0, limit)
  }

  close(): Promise<void> {
    return this.writes.then(() => this.file.close())
  }

  private async settle(line: Exclude<Line, {op: 'received'}>): Promise<void> {
    await this.append(line)
    const entry = this.entries.get(line.id)
    if (entry) apply(entry, line)
  }

  /** One write at a time, each flushed to disk before it counts. */
  private append(line: Line): Promise<void> {
    const write = this.writes.then(async () => {
      await this.file.appendFile(JSON.stringify(line) + '\n')
      await this.file.datasync()
    })
    this.writes = write.catch(() => undefined)
    return write
  }
}

function apply(entry: InboxEntry, line: Exclude<Line, {op: 'received'}>): void {
  if (line.op === 'handled') {
    entry.status = 'handled'
    return
  }
  entry.attempts++
  entry.last_error = line.error
  if (line.dead) entry.status = 'dead'
}
