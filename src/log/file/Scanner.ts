/**
 * Scanning a session file: its bytes, chunk by chunk, become lines with their numbers and byte
 * offsets, each checked (the checksum, the header matches the session, seqs contiguous from 0, every
 * line an envelope). Bytes after the last newline are a torn tail (a crash mid-write, never
 * acknowledged) unless they are a complete line whose checksum holds: such a line lost only its
 * newline and is read like any other. A torn tail is reported, not parsed; a line longer than the
 * limit, torn or not, is damage (so a run of bytes with no newline is never buffered whole); anything
 * else that is wrong is damage naming the line.
 */
import * as Schema from "effect/Schema"
import * as SessionEvent from "../SessionEvent.ts"
import * as Format from "./Format.ts"

/**
 * What scanning yields: the header, each entry, a torn tail, or the first damage found. `end` is the
 * offset after the line's newline; a last line whose newline is missing is `unterminated`.
 */
export type Item =
  | { readonly _tag: "Header"; readonly header: Format.Header; readonly end: number; readonly unterminated?: true }
  | {
    readonly _tag: "Entry"
    readonly entry: SessionEvent.Entry
    readonly line: number
    readonly end: number
    readonly unterminated?: true
  }
  | { readonly _tag: "Tail"; readonly start: number; readonly length: number }
  | { readonly _tag: "Damage"; readonly line: number; readonly detail: string }

/** Where a scan starts: the file's beginning, or a known line boundary after the header. */
export interface Position {
  readonly offset: number
  readonly line: number
  readonly seq: number
}

export const start: Position = { offset: 0, line: 1, seq: 0 }

/** The longest line read by default: far above the longest line the bounds on a todo list allow. */
export const defaultMaxLineBytes = 4 * 1024 * 1024

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
const isHeader = Schema.is(Format.Header)
const decoder = new TextDecoder("utf-8", { fatal: true })
/** The envelope's exact shape, checked without the schema; `false` means "ask the schema". */
const isPlainEnvelope = (u: unknown): u is SessionEvent.Entry => {
  if (typeof u !== "object" || u === null) return false
  const e = u as Record<string, unknown>
  // Safe integers, as the schema's `Int` requires: 1e20 is an integer to `Number.isInteger`, not to it.
  return typeof e.type === "string" && e.type.length > 0 && Number.isSafeInteger(e.seq) && (e.seq as number) >= 0 &&
    Number.isSafeInteger(e.time) && "data" in e
}

/**
 * Parses one line. `bytes` are the line's bytes, without the newline (for the checksum); `text` is
 * the same line decoded, when the caller decoded a whole run of lines at once.
 */
const parseLine = (session: string, state: State, bytes: Uint8Array, end: number, text?: string): Item => {
  const line = state.line
  const parsed = Format.parseSealed(bytes, text)
  if ("damage" in parsed) return { _tag: "Damage", line, detail: parsed.damage }
  const json = parsed.json
  if (!state.headerSeen) {
    if (!isHeader(json)) {
      const claimed = typeof json === "object" && json !== null && (json as { format?: unknown }).format === Format.format
      return { _tag: "Damage", line, detail: claimed ? "malformed header" : "not a session log header" }
    }
    if (json.version > Format.version) {
      return { _tag: "Damage", line, detail: `format version ${json.version} is newer than this reader's (${Format.version})` }
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
 * emits one item per complete line and, at the end (`halt`), the last line if it lacks only its
 * newline, or else the torn tail if there is one. After the first damage it emits nothing more.
 */
export const scanner = (session: string, from: Position = start, maxLineBytes: number = defaultMaxLineBytes) => {
  const initial = (): State => ({
    offset: from.offset,
    line: from.line,
    seq: from.seq,
    headerSeen: from.offset > 0,
    damaged: false,
    partial: [],
    partialLength: 0
  })
  const tooLong = (state: State, items: Array<Item>): false => {
    items.push({ _tag: "Damage", line: state.line, detail: `the line is longer than ${maxLineBytes} bytes, the most a line may hold` })
    state.damaged = true
    state.partial = []
    state.partialLength = 0
    return false
  }
  /** Parses a complete line; answers whether scanning goes on. */
  const emit = (state: State, items: Array<Item>, bytes: Uint8Array, text?: string): boolean => {
    if (bytes.length > maxLineBytes) return tooLong(state, items)
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
      if (state.partialLength + newline > maxLineBytes) {
        tooLong(state, items)
        return [state, items]
      }
      state.partial.push(chunk.subarray(0, newline))
      const bytes = Format.concat(state.partial)
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
      // Beyond the limit a line can't be read anyway: stop rather than buffer it.
      if (state.partialLength + chunk.length - from > maxLineBytes) {
        tooLong(state, items)
        return [state, items]
      }
      // Copy: the stream may reuse its buffer for the next chunk.
      state.partial.push(chunk.slice(from))
      state.partialLength += chunk.length - from
    }
    return [state, items]
  }
  const halt = (state: State): ReadonlyArray<Item> => {
    if (state.damaged || state.partialLength === 0) return []
    const bytes = Format.concat(state.partial)
    // Torn only if it is not a whole line: a line whose checksum holds was written in full.
    if (typeof Format.unseal(bytes) === "string") return [{ _tag: "Tail", start: state.offset, length: state.partialLength }]
    const item = parseLine(session, state, bytes, state.offset + bytes.length)
    switch (item._tag) {
      case "Header":
      case "Entry":
        return [{ ...item, unterminated: true }]
      default:
        return [item]
    }
  }
  return { initial, step, halt }
}
