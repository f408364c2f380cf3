/**
 * The JSONL session file format: a header line, then one event envelope per line, exactly as
 * appended. Every line ends with a CRC-32 of what precedes it (`,"crc":"…"}`), so any altered byte,
 * even inside a string, is found rather than loaded. Journals use the same sealed lines.
 */
import * as Schema from "effect/Schema"
import { crc32 } from "node:zlib"

export const format = "effect-todo-write/session"
export const version = 1

export const Header = Schema.Struct({
  format: Schema.Literal(format),
  version: Schema.Int,
  session: Schema.String,
  created: Schema.Int
})
export type Header = typeof Header.Type

/** A session's file name in the directory. */
export const fileName = (session: string): string => `${session}${extension}`
export const extension = ".jsonl"

/** The name of the lock file a process holds while it appends to the session. */
export const lockName = (session: string): string => `${session}.lock`

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

/** The lines of a batch of entries whose first gets `seq`, as UTF-8. */
export const entryLines = (
  batch: ReadonlyArray<{ readonly type: string; readonly time: number; readonly json: string }>,
  seq: number
): Uint8Array => {
  let text = ""
  for (let i = 0; i < batch.length; i++) {
    const { json, time, type } = batch[i]!
    text += entryLine(type, seq + i, time, json)
  }
  return encodeLines(text)
}

/**
 * Lines as UTF-8. Node's `Buffer` (a `Uint8Array`) carves small ones out of a shared pool, where
 * `TextEncoder` allocates a zero-filled buffer of its own each time: ~10× the cost for a line.
 */
export const encodeLines = (lines: string): Uint8Array => Buffer.from(lines, "utf8")

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

const decoder = new TextDecoder("utf-8", { fatal: true })

/**
 * A sealed line's JSON value (checksum field included), or why it can't be read. `text` is the
 * line already decoded, when the caller decoded a whole run of lines at once.
 */
export const parseSealed = (bytes: Uint8Array, text?: string): { readonly json: unknown } | { readonly damage: string } => {
  const body = unseal(bytes)
  if (typeof body === "string") return { damage: body }
  if (text === undefined) {
    try {
      text = decoder.decode(bytes)
    } catch {
      return { damage: "not valid UTF-8" }
    }
  }
  try {
    // The whole line, checksum field included: the checksum held, so its text is what was written.
    return { json: JSON.parse(text) }
  } catch (cause) {
    return { damage: `bad JSON: ${cause instanceof Error ? cause.message : String(cause)}` }
  }
}

/** The parts as one array of bytes (every byte written: it needs no zero-filling, see `encodeLines`). */
export const concat = (parts: ReadonlyArray<Uint8Array>): Uint8Array => {
  if (parts.length === 1) return parts[0]!
  let length = 0
  for (const part of parts) length += part.length
  const out = Buffer.allocUnsafe(length)
  let at = 0
  for (const part of parts) {
    out.set(part, at)
    at += part.length
  }
  return out
}
