/**
 * The write-ahead journal's format, of a `SessionLogFile` in journal mode: one file per log instance, beside
 * the session files. Appends to many sessions are acknowledged by ONE fsync of the journal, which
 * holds each batch's session-file lines and where they go; the session files are written at once but
 * fsynced only at checkpoints, after which the journal is emptied. After a crash, replaying a dead
 * journal into the session files restores every acknowledged append.
 *
 * Format: a header line `{"format":"effect-todo-write/journal","version":1,"pid":…,"created":…,"started":…}`
 * (`started`: when the owner process started, see `Owner`; absent in journals of earlier versions), then
 * per batch a line `{"session":…,"offset":…,"length":…}` followed by the batch's session-file lines
 * exactly as written to the session file (`length` bytes). Every line is checksummed like session
 * files, the batch's own lines included, so the journal needs no second encoding of them. After the
 * last record, zero bytes may follow: space written ahead when the journal was opened, which records
 * overwrite (see `JournalCommitter`); they end the records as the file's end does.
 */
import * as Schema from "effect/Schema"
import * as SessionId from "../SessionId.ts"
import * as Format from "./Format.ts"
import * as Owner from "./Owner.ts"

export const format = "effect-todo-write/journal"
export const version = 1
export const prefix = "journal-"
export const extension = ".wal"

/** `journal-<pid>-<instance>.wal`: the owner's pid in the name tells a live journal without reading it. */
export const fileName = (pid: number, instance: string): string => `${prefix}${pid}-${instance}${extension}`

/** The owner's pid, from a journal's file name. */
export const pidOf = (name: string): number | undefined => Owner.parsePid(name.slice(prefix.length).split("-")[0]!)

const encoder = new TextEncoder()

export const headerLine = (owner: Owner.Owner, created: number): Uint8Array =>
  encoder.encode(Format.seal(JSON.stringify({ format, version, pid: owner.pid, created, started: owner.started })))

/** The line that introduces a batch of `length` bytes of session lines, going at `offset` in its file. */
export const recordHeader = (session: string, offset: number, length: number): string =>
  Format.seal(JSON.stringify({ session, offset, length }))

interface Batch {
  readonly session: string
  readonly offset: number
  readonly bytes: Uint8Array
}

/** A batch's record header line, encoded: its lines follow it. */
export const recordHead = (batch: Batch): Uint8Array =>
  Format.encodeLines(recordHeader(batch.session, batch.offset, batch.bytes.length))

/** Batches as journal records, ready to write: each a record header, then the batch's lines. */
export const records = (batches: ReadonlyArray<Batch>): Uint8Array => {
  const parts: Array<Uint8Array> = []
  for (const batch of batches) parts.push(recordHead(batch), batch.bytes)
  return Format.concat(parts)
}

const Header = Schema.Struct({
  format: Schema.Literal(format),
  version: Schema.Int,
  pid: Schema.Int,
  created: Schema.Int,
  started: Schema.optionalKey(Schema.String)
})
const RecordHeader = Schema.Struct({ session: SessionId.SessionId, offset: Schema.Int, length: Schema.Int })
const isHeader = Schema.is(Header)
const isRecordHeader = Schema.is(RecordHeader)

export interface Record {
  readonly session: SessionId.SessionId
  readonly offset: number
  /** The batch's lines, as they go in the session file. */
  readonly bytes: Uint8Array
}

/** Every line of `bytes` is whole and its checksum holds. */
const wholeLines = (bytes: Uint8Array): boolean => {
  if (bytes.length === 0 || bytes[bytes.length - 1] !== 10) return false
  let start = 0
  while (start < bytes.length) {
    const newline = bytes.indexOf(10, start)
    if (typeof Format.unseal(bytes.subarray(start, newline)) === "string") return false
    start = newline + 1
  }
  return true
}

export interface Parsed {
  readonly owner: Owner.Owner
  readonly created: number
  readonly records: ReadonlyArray<Record>
  /** Where the records stop: a torn or damaged line, never acknowledged, or what follows it. */
  readonly stoppedAt: string | undefined
}

/** Whether `bytes` holds nothing but zeros from `start` on: space written ahead, not yet used. */
const zerosFrom = (bytes: Uint8Array, start: number): boolean => {
  for (let i = start; i < bytes.length; i++) if (bytes[i] !== 0) return false
  return true
}

/**
 * Reads a journal. Records are written and fsynced in order, so the first line that doesn't hold
 * (torn by a crash mid-write) ends the acknowledged ones; zeros to the end, written ahead, end them
 * as the file's end does. `undefined` if the header itself doesn't hold.
 */
export const parse = (bytes: Uint8Array): Parsed | undefined => {
  let start = 0
  let header: typeof Header.Type | undefined
  const records: Array<Record> = []
  let stoppedAt: string | undefined
  while (start < bytes.length) {
    if (header !== undefined && bytes[start] === 0 && zerosFrom(bytes, start)) break
    const newline = bytes.indexOf(10, start)
    if (newline === -1) {
      stoppedAt = "a torn last line"
      break
    }
    const line = bytes.subarray(start, newline)
    start = newline + 1
    const parsed = Format.parseSealed(line)
    if ("damage" in parsed) {
      stoppedAt = `a damaged line: ${parsed.damage}`
      break
    }
    const json = parsed.json
    if (header === undefined) {
      if (!isHeader(json) || json.version > version) return undefined
      header = json
    } else if (isRecordHeader(json)) {
      const batch = bytes.subarray(start, start + json.length)
      if (batch.length < json.length || !wholeLines(batch)) {
        stoppedAt = "a torn or damaged batch"
        break
      }
      records.push({ session: json.session, offset: json.offset, bytes: batch })
      start += json.length
    } else {
      stoppedAt = "a line that is not a journal record"
      break
    }
  }
  return header === undefined
    ? undefined
    : { owner: { pid: header.pid, started: header.started }, created: header.created, records, stoppedAt }
}
