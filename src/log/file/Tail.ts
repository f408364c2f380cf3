/**
 * A session file's end, made clean before anyone appends to it: a torn tail (a line a crash left
 * half written, never acknowledged) is cut, and a missing header is written.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type * as FileSystem from "effect/FileSystem"
import * as Format from "./Format.ts"
import * as Reader from "./Reader.ts"
import * as RegularFile from "./RegularFile.ts"
import type * as Scanner from "./Scanner.ts"

/** What opening a file for appending found. */
export interface Opened {
  readonly entries: number
  /** Bytes of a torn tail that were truncated, 0 when the file was whole. */
  readonly repairedBytes: number
}

const newline = new Uint8Array([10])

/**
 * Brings a session file to a clean end, for appending: creates it with its header if it is missing
 * (or was left without a durable header by a crash), cuts a torn tail, and restores the newline of
 * a last line that is complete but lost it. Answers where the next entry goes and what was found.
 * Only the lock holder may call this.
 */
export const prepare = Effect.fnUntraced(function*(
  fs: FileSystem.FileSystem,
  directory: string,
  path: string,
  session: string,
  maxLineBytes?: number
) {
  const found = (yield* RegularFile.exists(fs, path)) ? yield* Reader.scanToEnd(fs, path, session, maxLineBytes) : undefined
  if (found === undefined || !found.header) {
    // New, or created by a crash before its header was durable: nothing in it was acknowledged.
    const header = Format.headerLine(session, yield* Clock.currentTimeMillis)
    yield* Effect.scoped(Effect.gen(function*() {
      const handle = yield* RegularFile.open(fs, path, "w")
      // Written, synced and its directory entry synced with no interruption in between: an interrupted
      // write still lands, and the next open, finding the header, would take the file for created.
      yield* Effect.uninterruptible(Effect.andThen(Effect.andThen(handle.writeAll(header), handle.sync), RegularFile.syncDirectory(fs, directory)))
    }))
    const end: Scanner.Position = { offset: header.length, line: 2, seq: 0 }
    return { end, opened: { entries: 0, repairedBytes: found?.tail ?? 0 } satisfies Opened }
  }
  let end = found.end
  if (found.tail > 0 || found.unterminated) {
    yield* Effect.scoped(Effect.gen(function*() {
      const handle = yield* RegularFile.open(fs, path, "r+")
      yield* handle.truncate(found.end.offset)
      if (found.unterminated) {
        yield* handle.seek(BigInt(found.end.offset), "start")
        yield* handle.writeAll(newline)
        end = { ...found.end, offset: found.end.offset + 1 }
      }
      yield* handle.sync
    }))
  }
  return { end, opened: { entries: found.end.seq, repairedBytes: found.tail } satisfies Opened }
})
