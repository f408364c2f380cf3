/**
 * The JSONL session file format: a header line, then one event envelope per line, exactly as
 * appended. Every line ends with a CRC-32 of what precedes it (`,"crc":"…"}`), so any altered byte,
 * even inside a string, is found rather than loaded. Scanning turns the file's bytes into lines with
 * their numbers and byte offsets and checks them: the checksum, the header matches the session, seqs
 * are contiguous from 0, every line is an envelope. Bytes after the last newline are a torn tail (a
 * crash mid-write, never acknowledged) and are reported, not parsed; anything else that is wrong is an
 * error naming the line.
 */
import { Schema } from "effect"
import { crc32 } from "node:zlib"
import * as SessionEvent from "./SessionEvent.ts"

export const format = "effect-todo-write/session"
export const version = 1

export const Header = Schema.Struct({
  format: Schema.Literal(format),
  version: Schema.Int,
  session: Schema.String,
  created: Schema.Int
})
export type Header = typeof Header.Type

export const fileName = (session: string): string => `${session}.jsonl`
export const extension = ".jsonl"

const encoder = new TextEncoder()

/** `,"crc":"xxxxxxxx"}` closes every line: 18 bytes. */
const crcSuffixLength = 18
const crcPrefix = encoder.encode(`,"crc":"`)

const hex8 = (n: number) => n.toString(16).padStart(8, "0")

/** Closes a line's JSON object (given without its final `}`) with the checksum of that text. */
const sealed = (open: string): string => `${open},"crc":"${hex8(crc32(open))}"}\n`

/**
 * A line for a JSON object written by other means (a migration, a repair tool): the object's text,
 * checksummed. `{"a":1}` becomes `{"a":1,"crc":"…"}` and a newline.
 */
export const seal = (objectText: string): string => sealed(objectText.trimEnd().replace(/}$/, ""))

export const headerLine = (session: string, created: number): Uint8Array =>
  encoder.encode(sealed(`{"format":"${format}","version":${version},"session":${JSON.stringify(session)},"created":${created}`))

/** One entry's line; `json` is the payload already serialized. */
export const entryLine = (type: string, seq: number, time: number, json: string): string =>
  sealed(`{"type":${JSON.stringify(type)},"seq":${seq},"time":${time},"data":${json}`)

export const encodeLines = (lines: string): Uint8Array => encoder.encode(lines)

/** The line's JSON without its checksum, or why the checksum doesn't hold. */
export const unseal = (bytes: Uint8Array): Uint8Array | string => {
  const end = bytes.length - crcSuffixLength
  if (end < 1 || bytes[bytes.length - 1] !== 125 || bytes[bytes.length - 2] !== 34) return "no checksum at the end of the line"
  for (let i = 0; i < crcPrefix.length; i++) {
    if (bytes[end + i] !== crcPrefix[i]) return "no checksum at the end of the line"
  }
  const body = bytes.subarray(0, end)
  let stored = 0
  for (let i = end + crcPrefix.length; i < bytes.length - 2; i++) {
    const c = bytes[i]!
    const digit = c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : -1
    if (digit < 0) return "malformed checksum"
    stored = stored * 16 + digit
  }
  const actual = crc32(body)
  return actual === stored ? body : `checksum mismatch (stored ${hex8(stored)}, computed ${hex8(actual)}): the line was altered after it was written`
}

/** What scanning yields: the header, each entry, a torn tail, or the first damage found. */
export type Item =
  | { readonly _tag: "Header"; readonly header: Header; readonly end: number }
  | { readonly _tag: "Entry"; readonly entry: SessionEvent.Entry; readonly line: number; readonly end: number }
  | { readonly _tag: "Tail"; readonly start: number; readonly length: number }
  | { readonly _tag: "Damage"; readonly line: number; readonly detail: string }

/** Where a scan starts: the file's beginning, or a known line boundary after the header. */
export interface Position {
  readonly offset: number
  readonly line: number
  readonly seq: number
}

export const start: Position = { offset: 0, line: 1, seq: 0 }

interface State {
  /** Offset of the first byte not yet emitted as a line. */
  offset: number
  line: number
  seq: number
  headerSeen: boolean
  damaged: boolean
  partial: Array<Uint8Array>
  partialLength: number
}

const isEntry = Schema.is(SessionEvent.Entry)
const isHeader = Schema.is(Header)
const decoder = new TextDecoder("utf-8", { fatal: true })

const concat = (parts: Array<Uint8Array>, length: number): Uint8Array => {
  if (parts.length === 1) return parts[0]!
  const out = new Uint8Array(length)
  let at = 0
  for (const part of parts) {
    out.set(part, at)
    at += part.length
  }
  return out
}

/** The envelope's exact shape, checked without the schema; `false` means "ask the schema". */
const isPlainEnvelope = (u: unknown): u is SessionEvent.Entry => {
  if (typeof u !== "object" || u === null) return false
  const e = u as Record<string, unknown>
  return typeof e.type === "string" && e.type.length > 0 && Number.isInteger(e.seq) && (e.seq as number) >= 0 &&
    Number.isInteger(e.time) && "data" in e
}

/**
 * Parses one line. `bytes` are the line's bytes, without the newline (for the checksum); `text` is
 * the same line decoded, when the caller decoded a whole run of lines at once.
 */
const parseLine = (session: string, state: State, bytes: Uint8Array, end: number, text?: string): Item => {
  const line = state.line
  const body = unseal(bytes)
  if (typeof body === "string") return { _tag: "Damage", line, detail: body }
  let json: unknown
  if (text === undefined) {
    try {
      text = decoder.decode(bytes)
    } catch {
      return { _tag: "Damage", line, detail: "not valid UTF-8" }
    }
  }
  try {
    // The whole line, checksum field included: the checksum held, so its text is what was written.
    json = JSON.parse(text)
  } catch (cause) {
    return { _tag: "Damage", line, detail: `bad JSON: ${cause instanceof Error ? cause.message : String(cause)}` }
  }
  if (!state.headerSeen) {
    if (!isHeader(json)) {
      const claimed = typeof json === "object" && json !== null && (json as { format?: unknown }).format === format
      return { _tag: "Damage", line, detail: claimed ? "malformed header" : "not a session log header" }
    }
    if (json.version > version) {
      return { _tag: "Damage", line, detail: `format version ${json.version} is newer than this reader's (${version})` }
    }
    if (json.session !== session) {
      return { _tag: "Damage", line, detail: `the header names session ${JSON.stringify(json.session)}` }
    }
    state.headerSeen = true
    return { _tag: "Header", header: json, end }
  }
  if (!isPlainEnvelope(json) && !isEntry(json)) {
    return { _tag: "Damage", line, detail: "not an event envelope {type, seq, time, data}" }
  }
  // A negative expected seq (a probe into the middle of a file) takes the line's seq as it is.
  if (state.seq >= 0 && json.seq !== state.seq) {
    return {
      _tag: "Damage",
      line,
      detail: json.seq < state.seq
        ? `seq ${json.seq} repeats (expected ${state.seq})`
        : `seq ${json.seq} leaves a gap (expected ${state.seq})`
    }
  }
  state.seq = json.seq + 1
  // Not frozen: every read parses fresh objects, which no one else holds.
  return { _tag: "Entry", entry: { type: json.type, seq: json.seq, time: json.time, data: json.data }, line, end }
}

/**
 * A stateful splitter for `Stream.mapAccum`: feed it the file's chunks in order from `from`; it
 * emits one item per complete line and, at the end (`halt`), the torn tail if there is one. After
 * the first damage it emits nothing more.
 */
export const scanner = (session: string, from: Position = start) => {
  const initial = (): State => ({
    offset: from.offset,
    line: from.line,
    seq: from.seq,
    headerSeen: from.offset > 0,
    damaged: false,
    partial: [],
    partialLength: 0
  })
  /** Parses a complete line; answers whether scanning goes on. */
  const emit = (state: State, items: Array<Item>, bytes: Uint8Array, text?: string): boolean => {
    const end = state.offset + bytes.length + 1
    const item = parseLine(session, state, bytes, end, text)
    items.push(item)
    if (item._tag === "Damage") {
      state.damaged = true
      return false
    }
    state.offset = end
    state.line++
    return true
  }
  const step = (state: State, chunk: Uint8Array): readonly [State, ReadonlyArray<Item>] => {
    if (state.damaged) return [state, []]
    const items: Array<Item> = []
    let from = 0
    let newline = chunk.indexOf(10)
    if (newline !== -1 && state.partialLength > 0) {
      // The line that began in an earlier chunk.
      state.partial.push(chunk.subarray(0, newline))
      const bytes = concat(state.partial, state.partialLength + newline)
      state.partial = []
      state.partialLength = 0
      if (!emit(state, items, bytes)) return [state, items]
      from = newline + 1
      newline = chunk.indexOf(10, from)
    }
    if (newline !== -1) {
      // The lines wholly inside this chunk: decoded in one go (a newline byte never occurs inside a
      // UTF-8 sequence, so the decoded text splits into the same lines).
      const ends: Array<number> = []
      while (newline !== -1) {
        ends.push(newline)
        newline = chunk.indexOf(10, newline + 1)
      }
      let texts: Array<string> | undefined
      try {
        texts = decoder.decode(chunk.subarray(from, ends[ends.length - 1])).split("\n")
      } catch {
        texts = undefined // some line is not UTF-8: decode line by line to find which
      }
      for (let i = 0; i < ends.length; i++) {
        if (!emit(state, items, chunk.subarray(from, ends[i]), texts?.[i])) return [state, items]
        from = ends[i]! + 1
      }
    }
    if (from < chunk.length) {
      // Copy: the stream may reuse its buffer for the next chunk.
      state.partial.push(chunk.slice(from))
      state.partialLength += chunk.length - from
    }
    return [state, items]
  }
  const halt = (state: State): ReadonlyArray<Item> =>
    !state.damaged && state.partialLength > 0
      ? [{ _tag: "Tail", start: state.offset, length: state.partialLength }]
      : []
  return { initial, step, halt }
}
