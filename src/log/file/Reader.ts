/**
 * Reading a session file: a streamed scan from a position (constant memory), where a scan ends, and
 * `locate`, which finds the line of a late seq with a few small reads instead of a scan.
 */
import * as Effect from "effect/Effect"
import type * as FileSystem from "effect/FileSystem"
import type * as PlatformError from "effect/PlatformError"
import * as Stream from "effect/Stream"
import { Corrupt, type InvariantViolation, type UnsafePath } from "../SessionLogError.ts"
import * as RegularFile from "./RegularFile.ts"
import * as Scanner from "./Scanner.ts"

/**
 * Scans a session file from a position. Fails on the first damage, naming the line; the torn tail,
 * if any, is the last item. A line longer than `maxLineBytes` is damage.
 */
export const scan = (
  fs: FileSystem.FileSystem,
  path: string,
  session: string,
  from: Scanner.Position = Scanner.start,
  maxLineBytes: number = Scanner.defaultMaxLineBytes
): Stream.Stream<Scanner.Item, Corrupt | UnsafePath | PlatformError.PlatformError> =>
  Stream.suspend(() => {
    const scanner = Scanner.scanner(session, from, maxLineBytes)
    return RegularFile.stream(fs, path, { offset: from.offset, chunkSize: 256 * 1024 }).pipe(
      Stream.mapAccum(scanner.initial, scanner.step, { onHalt: scanner.halt }),
      // Damage can only be the last item of a chunk: check chunks, not items.
      Stream.mapArrayEffect((items) => {
        const last = items[items.length - 1]!
        return last._tag === "Damage"
          ? Effect.fail(new Corrupt({ line: last.line, detail: `${path}: ${last.detail}` }))
          : Effect.succeed(items)
      })
    )
  })

/**
 * What a whole scan found: whether the header is there, where the last complete line ends, whether
 * that line lacks its newline, the torn tail's size.
 */
export interface End {
  readonly header: boolean
  readonly end: Scanner.Position
  readonly unterminated: boolean
  readonly tail: number
}

/** Where a whole scan ends: the position after the last complete line, and the torn tail's size. */
export const scanToEnd = (fs: FileSystem.FileSystem, path: string, session: string, maxLineBytes?: number) =>
  Stream.runFold(
    scan(fs, path, session, Scanner.start, maxLineBytes),
    (): End => ({ header: false, end: Scanner.start, unterminated: false, tail: 0 }),
    (acc, item): End => {
      const unterminated = "unterminated" in item && item.unterminated === true
      switch (item._tag) {
        case "Header":
          return { header: true, end: { offset: item.end, line: 2, seq: 0 }, unterminated, tail: 0 }
        case "Entry":
          return {
            header: true,
            end: { offset: item.end, line: item.line + 1, seq: item.entry.seq + 1 },
            unterminated,
            tail: 0
          }
        case "Tail":
          return { ...acc, tail: item.length }
        case "Damage":
          return acc
      }
    }
  )

/** Probes start small (most lines are short) and grow for long lines, up to a limit. */
const probeBytes = 4 * 1024
const maxProbeBytes = 4 * 1024 * 1024

/** The item of the first complete line in `bytes`, read from `offset`; `undefined` if there is none. */
const probe = (session: string, bytes: Uint8Array, offset: number, afterHeader: boolean) => {
  const newline = bytes.indexOf(10)
  if (newline === -1) return undefined
  const scanner = Scanner.scanner(session, afterHeader ? { offset, line: 0, seq: -1 } : Scanner.start)
  const [, items] = scanner.step(scanner.initial(), bytes.subarray(0, newline + 1))
  return items[0]
}

/**
 * Where the line with seq `fromSeq` starts, found by bisecting the file: lines are in seq order, so
 * reading from a late seq costs a few small reads instead of a scan of everything before it. The
 * header is always read and checked. Answers `undefined` whenever a probe can't tell (damage, a line
 * longer than any probe): the caller then scans from the start, which reports damage properly.
 */
export const locate = (fs: FileSystem.FileSystem, path: string, session: string, fromSeq: number) =>
  Effect.scoped(Effect.gen(function*() {
    const file = yield* RegularFile.open(fs, path, "r")
    const size = Number((yield* file.stat).size)
    const read = (offset: number, length: number) =>
      Effect.map(file.readAlloc(Math.min(length, size - offset), { position: BigInt(offset) }), (o) =>
        o._tag === "Some" ? o.value : new Uint8Array(0))
    /** The first complete line at or after `offset` (skipping a partial line first, if asked). */
    const lineAt = Effect.fnUntraced(function*(offset: number, skipPartial: boolean) {
      for (let length = probeBytes; length <= maxProbeBytes; length *= 8) {
        const bytes = yield* read(offset, length)
        const start = skipPartial ? bytes.indexOf(10) + 1 : 0
        if (skipPartial && start === 0) {
          if (bytes.length < length) return undefined // no line starts before the end of the file
          continue
        }
        const item = probe(session, bytes.subarray(start), offset + start, skipPartial)
        if (item !== undefined) return { start: offset + start, item }
        if (bytes.length < length) return undefined
      }
      return undefined
    })
    const head = yield* lineAt(0, false)
    if (head?.item._tag !== "Header") return undefined
    let lo: Scanner.Position = { offset: head.item.end, line: 2, seq: 0 }
    let hi = size
    let hiSeq: number | undefined
    // Interpolation search: lines are of similar sizes, so a seq's line is near its share of the
    // interval. A guess aims a little before it when the interval's top moved last, a little past it
    // when its bottom did, so the interval closes from both sides; when a pair of guesses doesn't
    // halve the interval, a plain bisection step follows.
    let aimPast = false
    let pair = 0
    let pairWidth = size
    // How far before the end the first probe starts: further back while the last line is longer.
    let tailBytes = probeBytes
    while (hi - lo.offset > probeBytes) {
      const width = hi - lo.offset
      let guess: number
      if (hiSeq === undefined) {
        guess = Math.max(lo.offset, size - tailBytes) // first, the tail: it anchors the interpolation
      } else if (pair === 2 && width > pairWidth / 2) {
        guess = lo.offset + Math.floor(width / 2)
        pair = 0
      } else {
        if (pair === 2) pair = 0
        if (pair === 0) pairWidth = width
        pair++
        const perLine = width / Math.max(1, hiSeq - lo.seq)
        const margin = 2 * perLine + 64
        const estimate = (fromSeq - lo.seq) * perLine + (aimPast ? margin : -margin)
        guess = lo.offset + Math.min(width - 1, Math.max(0, Math.floor(estimate)))
      }
      const found = yield* lineAt(guess, true)
      if (found === undefined || found.start >= hi) {
        if (hiSeq === undefined) {
          // The last line is longer than the tail probe: anchor further back, up to the header.
          if (guess <= lo.offset) return undefined
          tailBytes *= 8
          continue
        }
        hi = guess // no whole line begins between `guess` and `hi`: look earlier
        aimPast = false
        continue
      }
      if (found.item._tag !== "Entry") return undefined
      if (found.item.entry.seq <= fromSeq) {
        lo = { offset: found.start, line: found.item.entry.seq + 2, seq: found.item.entry.seq }
        aimPast = true
      } else {
        hi = found.start
        hiSeq = found.item.entry.seq
        aimPast = false
      }
      if (hiSeq === undefined) hiSeq = found.item.entry.seq + 1 // the tail probe landed at or before `fromSeq`
    }
    return lo
  })).pipe(Effect.catch(() => Effect.succeed(undefined)))

/**
 * Scans a whole file once, checking every line and running `check` on every entry until one breaks
 * it: the entries read, the torn tail's size, and the first violation with its line.
 */
export const check = (
  fs: FileSystem.FileSystem,
  path: string,
  session: string,
  maxLineBytes: number,
  violated: (type: string, data: unknown, seq: number) => InvariantViolation | undefined
) =>
  Effect.suspend(() => {
    let events = 0
    let tornTailBytes = 0
    let violation: { readonly line: number; readonly reason: InvariantViolation } | undefined
    return scan(fs, path, session, Scanner.start, maxLineBytes).pipe(
      Stream.takeWhile(() => violation === undefined),
      Stream.runForEach((item) =>
        Effect.sync(() => {
          // `takeWhile` stops between chunks; within one, what follows the first violation is not read.
          if (violation !== undefined) return
          if (item._tag === "Tail") tornTailBytes = item.length
          if (item._tag !== "Entry") return
          events++
          const reason = violated(item.entry.type, item.entry.data, item.entry.seq)
          if (reason !== undefined) violation = { line: item.line, reason }
        })
      ),
      Effect.map(() => ({ events, tornTailBytes, violation }))
    )
  })
