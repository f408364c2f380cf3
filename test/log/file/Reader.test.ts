import { assert, describe, it } from "@effect/vitest"
import { Effect, FileSystem, Stream } from "effect"
import * as Format from "../../../src/log/file/Format.ts"
import * as Reader from "../../../src/log/file/Reader.ts"
import * as SessionLogFile from "../../../src/log/file/SessionLogFile.ts"
import { InvariantViolation } from "../../../src/log/SessionLogError.ts"
import * as TodoEvents from "../../../src/todo/TodoEvents.ts"
import { failureOf } from "../SessionLogConformance.ts"
import { fileOf, open, openRaw, readAll, session, todo, withDirectory } from "./FileTest.ts"

describe("Reader", () => {
  describe("the last line", () => {
    it.effect("a complete, checksummed last line without its newline is kept; its newline comes back before the next append", () =>
      withDirectory((directory) =>
        Effect.gen(function*() {
          const fs = yield* FileSystem.FileSystem
          yield* open(directory, (log) =>
            Effect.andThen(log.append(session, "todo/write", todo("one")), log.append(session, "todo/write", todo("two"))))
          const file = fileOf(directory)
          const whole = yield* fs.readFileString(file)
          yield* fs.truncate(file, whole.length - 1) // `truncate -s -1`: only the final newline goes
          // every entry loads, and verify finds nothing torn
          assert.deepStrictEqual((yield* open(directory, readAll)).map((e) => e.data), [todo("one"), todo("two")])
          const verified = yield* SessionLogFile.verify({ directory }, session, TodoEvents.invariants)
          assert.strictEqual(verified?.events, 2)
          assert.strictEqual(verified?.tornTailBytes, 0)
          // appending restores the newline first: the file is whole again, with all three entries
          assert.strictEqual((yield* open(directory, (log) => log.append(session, "todo/write", todo("three")))).seq, 2)
          const after = yield* fs.readFileString(file)
          assert.isTrue(after.startsWith(whole), "the second entry is intact, its newline restored")
          assert.deepStrictEqual(after.split("\n").map((line) => line === "" ? "" : JSON.parse(line).seq), [undefined, 0, 1, 2, ""])
          assert.deepStrictEqual((yield* open(directory, readAll)).map((e) => e.seq), [0, 1, 2])
        })
      ))

    it.effect("a newline-less last line whose checksum holds but whose seq is wrong is damage, not a torn tail", () =>
      withDirectory((directory) =>
        Effect.gen(function*() {
          const fs = yield* FileSystem.FileSystem
          yield* open(directory, (log) => log.append(session, "todo/write", todo("one")))
          const file = fileOf(directory)
          const whole = yield* fs.readFileString(file)
          const last = whole.trimEnd().split("\n").at(-1)!
          // the same line again, without a newline: a complete line, so not torn, and seq 0 repeats
          yield* fs.writeFileString(file, whole + last)
          const error = failureOf(yield* Effect.exit(open(directory, readAll)))
          assert.deepInclude(error.reason, { _tag: "Corrupt", line: 3 })
          assert.include(error.message, "repeats")
        })
      ))

    it.effect("a last line that isn't complete is still a torn tail: cut, and never read", () =>
      withDirectory((directory) =>
        Effect.gen(function*() {
          const fs = yield* FileSystem.FileSystem
          yield* open(directory, (log) => log.append(session, "todo/write", todo("one")))
          const file = fileOf(directory)
          const whole = yield* fs.readFileString(file)
          const torn = `{"type":"x","seq":1,"time":0,"data":{},"crc":"00000000"}`
          yield* fs.writeFileString(file, whole + torn)
          const verified = yield* SessionLogFile.verify({ directory }, session, TodoEvents.invariants)
          assert.deepInclude(verified, { events: 1, tornTailBytes: torn.length })
          assert.strictEqual((yield* open(directory, (log) => log.append(session, "n", {}))).seq, 1)
        })
      ))
  })

  describe("line length", () => {
    it.effect("a tail far longer than the line limit fails, naming the line, after reading no more than the limit", () =>
      withDirectory((directory) =>
        Effect.gen(function*() {
          const fs = yield* FileSystem.FileSystem
          yield* open(directory, (log) => log.append(session, "todo/write", todo("one")))
          const file = fileOf(directory)
          const size = (yield* fs.readFile(file)).length
          // a valid log, then 256 MiB of zeros with no newline (sparse: nothing is written)
          yield* fs.truncate(file, size + 256 * 1024 * 1024)
          let bytesRead = 0
          const real = yield* FileSystem.FileSystem
          const counting = FileSystem.FileSystem.of({
            ...real,
            open: (path, options) =>
              Effect.map(real.open(path, options), (handle) =>
                Object.create(handle, {
                  readAlloc: {
                    value: (n: number, o?: FileSystem.File.ReadOptions) =>
                      Effect.tap(handle.readAlloc(n, o), (read) => Effect.sync(() => bytesRead += read._tag === "Some" ? read.value.length : 0))
                  }
                }))
          })
          const limit = 1024 * 1024
          const error = failureOf(
            yield* Effect.exit(openRaw(directory, (log) => Stream.runCollect(log.read(session)), { maxLineBytes: limit }, counting))
          )
          assert.deepInclude(error.reason, { _tag: "Corrupt", line: 3 })
          assert.include(error.message, "longer than")
          assert.isAbove(bytesRead, 0, "the file is read through the FileSystem given")
          assert.isBelow(bytesRead, limit + 2 * 256 * 1024, `${bytesRead} bytes read`)
          // the default limit (4 MiB) holds too
          const byDefault = failureOf(yield* Effect.exit(open(directory, readAll)))
          assert.deepInclude(byDefault.reason, { _tag: "Corrupt", line: 3 })
          const verified = failureOf(yield* Effect.exit(SessionLogFile.verify({ directory }, session, TodoEvents.invariants)))
          assert.deepInclude(verified.reason, { _tag: "Corrupt", line: 3 })
        })
      ))

    it.effect("an event whose line would exceed the limit is refused on append, so every stored line can be read back", () =>
      withDirectory((directory) =>
        Effect.gen(function*() {
          const limit = 64 * 1024
          const error = failureOf(yield* Effect.exit(openRaw(directory, (log) =>
            log.append(session, "note", { text: "é".repeat(limit / 2) }), { maxLineBytes: limit })))
          assert.strictEqual(error.reason._tag, "InvalidPayload")
          const fits = yield* openRaw(directory, (log) =>
            Effect.andThen(log.append(session, "note", { text: "x".repeat(limit - 200) }), readAll(log)), { maxLineBytes: limit })
          assert.deepStrictEqual(fits.map((e) => e.seq), [0])
        })
      ))
  })
})

/** A session file written line by line with Format: the header, then entries `0..count-1`. */
const lines = (count: number, pad: (seq: number) => number) => {
  const out: Array<string> = []
  for (let seq = 0; seq < count; seq++) out.push(Format.entryLine("n", seq, seq, JSON.stringify({ p: "x".repeat(pad(seq)) })))
  return out
}
const writeFile = (path: string, entries: ReadonlyArray<string>, tail = "") =>
  Effect.flatMap(FileSystem.FileSystem, (fs) =>
    fs.writeFile(path, Format.concat([Format.headerLine(session, 0), Format.encodeLines(entries.join("") + tail)])))
/** The offset each entry's line starts at. */
const startsOf = (entries: ReadonlyArray<string>) => {
  const starts: Array<number> = []
  let at = Format.headerLine(session, 0).length
  for (const line of entries) {
    starts.push(at)
    at += Format.encodeLines(line).length
  }
  return { starts, end: at }
}
/** The real file system, counting reads through open files. */
const counting = (real: FileSystem.FileSystem) => {
  const counter = { reads: 0, bytes: 0 }
  const fs = FileSystem.FileSystem.of({
    ...real,
    open: (path, options) =>
      Effect.map(real.open(path, options), (handle) =>
        Object.create(handle, {
          readAlloc: {
            value: (n: number, o?: FileSystem.File.ReadOptions) =>
              Effect.tap(handle.readAlloc(n, o), (read) =>
                Effect.sync(() => {
                  counter.reads++
                  counter.bytes += read._tag === "Some" ? read.value.length : 0
                }))
          }
        }))
  })
  return { fs, counter }
}

describe("Reader.locate", () => {
  // Lines of uneven sizes (about 30 to 330 bytes), a few of them longer than a first probe (4 KiB).
  const pad = (seq: number) => seq % 500 === 250 ? 5000 + seq : (seq * 7919) % 300
  const entries = lines(3000, pad)
  const { starts } = startsOf(entries)

  it.effect("finds, for every seq, the start of a line at or before it, at most one probe (4 KiB) before its own, in a few reads", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        const file = `${directory}/located.jsonl`
        yield* writeFile(file, entries)
        const { counter, fs } = counting(yield* FileSystem.FileSystem)
        let reads = 0
        let most = 0
        counter.bytes = 0
        for (let fromSeq = 1; fromSeq < entries.length; fromSeq += 7) {
          counter.reads = 0
          const at = yield* Reader.locate(fs, file, session, fromSeq)
          assert.isDefined(at, `seq ${fromSeq}`)
          assert.isAtMost(at!.seq, fromSeq, `seq ${fromSeq}`)
          assert.strictEqual(at!.offset, at!.seq === 0 ? starts[0] : starts[at!.seq], `seq ${fromSeq}: a line's start`)
          assert.strictEqual(at!.line, at!.seq + 2, `seq ${fromSeq}: its line number`)
          assert.isAtMost(starts[fromSeq]! - at!.offset, 4096, `seq ${fromSeq}: within a probe of its line`)
          reads += counter.reads
          most = Math.max(most, counter.reads)
        }
        // The interpolation lands near the line: a bisection alone would take about 17 reads.
        const calls = Math.ceil((entries.length - 1) / 7)
        // (4.5 reads and 21 KiB on average, 27 reads at most when written: the long lines need probes
        // that grow; the file is 0.5 MiB)
        assert.isAtMost(reads / calls, 5, `${reads / calls} reads on average`)
        assert.isAtMost(most, 30, `${most} reads at most`)
        assert.isAtMost(counter.bytes / calls, 32 * 1024, `${counter.bytes / calls} bytes read on average`)
      })
    ))

  it.effect("a seq past the last line lands within a probe of the file's end; a small file needs no search", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const file = `${directory}/ends.jsonl`
        yield* writeFile(file, entries)
        const { end } = startsOf(entries)
        const past = yield* Reader.locate(fs, file, session, entries.length + 10)
        assert.isDefined(past)
        assert.isAtMost(end - past!.offset, 4096 + 4096)
        assert.strictEqual(past!.offset, starts[past!.seq])
        // a file within one probe: the first line after the header
        const small = `${directory}/small.jsonl`
        yield* writeFile(small, entries.slice(0, 5))
        assert.deepStrictEqual(yield* Reader.locate(fs, small, session, 3), { offset: starts[0], line: 2, seq: 0 })
      })
    ))

  it.effect("lines of very uneven sizes: when interpolation misses, bisection keeps the reads few", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        const file = `${directory}/skewed.jsonl`
        // 4,000 short lines, then 100 of 3 KiB: the seqs say little about where a line is
        const skewed = lines(4100, (seq) => seq < 4000 ? 10 : 3000)
        const { starts: at } = startsOf(skewed)
        yield* writeFile(file, skewed)
        const { counter, fs } = counting(yield* FileSystem.FileSystem)
        let reads = 0
        let most = 0
        let calls = 0
        for (let fromSeq = 1; fromSeq < skewed.length; fromSeq += 41) {
          counter.reads = 0
          const found = yield* Reader.locate(fs, file, session, fromSeq)
          assert.isDefined(found, `seq ${fromSeq}`)
          assert.isAtMost(found!.seq, fromSeq, `seq ${fromSeq}`)
          assert.strictEqual(found!.offset, at[found!.seq], `seq ${fromSeq}: a line's start`)
          assert.isAtMost(at[fromSeq]! - found!.offset, 4096, `seq ${fromSeq}: within a probe of its line`)
          reads += counter.reads
          most = Math.max(most, counter.reads)
          calls++
        }
        // (7.5 reads on average and 26 at most when written; without the bisection steps, 12 and 196)
        assert.isAtMost(reads / calls, 9, `${reads / calls} reads on average`)
        assert.isAtMost(most, 40, `${most} reads at most`)
      })
    ))

  it.effect("lines longer than a probe: it grows its probes past them and still finds a line at or before the seq", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const file = `${directory}/long.jsonl`
        // lines of 5 to 9 KiB, the last one included: most probes land inside a line longer than themselves
        const long = lines(150, (seq) => 5000 + (seq * 613) % 4000)
        const { starts: at } = startsOf(long)
        yield* writeFile(file, long)
        for (let fromSeq = 1; fromSeq < long.length; fromSeq += 3) {
          const found = yield* Reader.locate(fs, file, session, fromSeq)
          assert.isDefined(found, `seq ${fromSeq}`)
          assert.isAtMost(found!.seq, fromSeq, `seq ${fromSeq}`)
          assert.strictEqual(found!.offset, at[found!.seq], `seq ${fromSeq}: a line's start`)
          assert.isAtMost(at[fromSeq]! - found!.offset, 4096, `seq ${fromSeq}: within a probe of its line`)
        }
      })
    ))

  it.effect("a file whose last line is longer than a probe: its tail probe reaches further back, and it finds the line", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const file = `${directory}/long-tail.jsonl`
        const tailed = [...entries.slice(0, 200), ...lines(201, (seq) => (seq === 200 ? 20_000 : 0)).slice(200)]
        yield* writeFile(file, tailed)
        const { starts: at } = startsOf(tailed)
        for (const fromSeq of [150, 199, 200, 250]) {
          const found = yield* Reader.locate(fs, file, session, fromSeq)
          assert.isDefined(found, `seq ${fromSeq}: a read from a late seq must not scan the whole file`)
          assert.isAtMost(found!.seq, fromSeq)
          assert.strictEqual(found!.offset, at[found!.seq])
          assert.isAtMost(at[Math.min(fromSeq, 200)]! - found!.offset, 4096, `seq ${fromSeq}: within a probe of its line`)
        }
      })
    ))

  it.effect("answers nothing when it can't tell: a header of another session, a damaged line where it probes, no file", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const file = `${directory}/other.jsonl`
        yield* fs.writeFile(file, Format.concat([Format.headerLine("other", 0), Format.encodeLines(entries.join(""))]))
        assert.isUndefined(yield* Reader.locate(fs, file, session, 2000))
        const damaged = `${directory}/damaged.jsonl`
        yield* writeFile(damaged, entries.map((line, seq) => seq >= 2000 ? line.replace(`"n"`, `"m"`) : line))
        assert.isUndefined(yield* Reader.locate(fs, damaged, session, 2500))
        assert.isUndefined(yield* Reader.locate(fs, `${directory}/missing.jsonl`, session, 5))
        // no whole first line: an empty file, a header without its newline
        const empty = `${directory}/empty.jsonl`
        yield* fs.writeFile(empty, new Uint8Array(0))
        assert.isUndefined(yield* Reader.locate(fs, empty, session, 5))
        const header = Format.headerLine(session, 0)
        yield* fs.writeFile(empty, header.subarray(0, header.length - 1))
        assert.isUndefined(yield* Reader.locate(fs, empty, session, 5))
      })
    ))
})

describe("Reader.scanToEnd", () => {
  const entries = lines(5, (seq) => seq * 10)
  const { starts, end } = startsOf(entries)

  it.effect("finds the position after the last whole line, whether its newline is there, and the torn tail's size", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const file = `${directory}/end.jsonl`
        yield* writeFile(file, entries)
        assert.deepStrictEqual(yield* Reader.scanToEnd(fs, file, session), {
          header: true,
          end: { offset: end, line: 7, seq: 5 },
          unterminated: false,
          tail: 0
        })
        yield* writeFile(file, entries, `{"type":"n","se`)
        assert.deepStrictEqual(yield* Reader.scanToEnd(fs, file, session), {
          header: true,
          end: { offset: end, line: 7, seq: 5 },
          unterminated: false,
          tail: 15
        })
        yield* writeFile(file, entries.slice(0, 4), entries[4]!.trimEnd())
        assert.deepStrictEqual(yield* Reader.scanToEnd(fs, file, session), {
          header: true,
          end: { offset: end - 1, line: 7, seq: 5 },
          unterminated: true,
          tail: 0
        })
      })
    ))

  it.effect("a file with only its header ends after it; an empty one has no header", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const file = `${directory}/header.jsonl`
        yield* writeFile(file, [])
        assert.deepStrictEqual(yield* Reader.scanToEnd(fs, file, session), {
          header: true,
          end: { offset: starts[0]!, line: 2, seq: 0 },
          unterminated: false,
          tail: 0
        })
        const header = Format.headerLine(session, 0)
        yield* fs.writeFile(file, header.subarray(0, header.length - 1))
        assert.deepStrictEqual(yield* Reader.scanToEnd(fs, file, session), {
          header: true,
          end: { offset: starts[0]! - 1, line: 2, seq: 0 },
          unterminated: true,
          tail: 0
        })
        yield* fs.writeFile(file, new Uint8Array(0))
        assert.deepStrictEqual(yield* Reader.scanToEnd(fs, file, session), {
          header: false,
          end: { offset: 0, line: 1, seq: 0 },
          unterminated: false,
          tail: 0
        })
      })
    ))

  it.effect("damage fails the scan, naming the file and the line", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const file = `${directory}/bad.jsonl`
        yield* writeFile(file, entries.map((line, seq) => seq === 3 ? line.replace(`"n"`, `"m"`) : line))
        const error = yield* Effect.flip(Reader.scanToEnd(fs, file, session))
        assert.deepInclude(error, { _tag: "Corrupt", line: 5 })
        assert.isTrue(error._tag === "Corrupt" && error.detail.startsWith(`${file}: checksum mismatch`), String(error))
      })
    ))
})

describe("Reader.check", () => {
  const entries = lines(6, () => 3)

  it.effect("reports a violation with its line, and on a file that holds, every entry and the torn tail", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const file = `${directory}/check.jsonl`
        yield* writeFile(file, entries, "torn")
        const result = yield* Reader.check(fs, file, session, 1024, (_type, _data, seq) =>
          seq === 2 ? new InvariantViolation({ rule: "r", seq, detail: "no" }) : undefined)
        assert.strictEqual(result.violation?.line, 4)
        assert.deepInclude(result.violation?.reason, { rule: "r", seq: 2 })
        // Two in one chunk: the first is reported, and reading stops there.
        const two = yield* Reader.check(fs, file, session, 1024, (_type, _data, seq) =>
          seq === 2 || seq === 4 ? new InvariantViolation({ rule: "r", seq, detail: "no" }) : undefined)
        assert.deepStrictEqual({ line: two.violation?.line, seq: two.violation?.reason.seq, events: two.events }, {
          line: 4,
          seq: 2,
          events: 3
        }, "verify names the first violation's line, and counts the events up to it")
        const whole = yield* Reader.check(fs, file, session, 1024, () => undefined)
        assert.deepStrictEqual(whole, { events: 6, tornTailBytes: 4, violation: undefined })
        // a violation in a later chunk (the file is read 256 KiB at a time) doesn't replace the first
        const big = `${directory}/big.jsonl`
        const many = lines(2000, () => 200)
        yield* writeFile(big, many)
        const first = yield* Reader.check(fs, big, session, 1024, (_type, _data, seq) =>
          seq === 2 || seq === 1999 ? new InvariantViolation({ rule: "r", seq, detail: "no" }) : undefined)
        assert.deepInclude(first.violation?.reason, { seq: 2 })
        assert.strictEqual(first.violation?.line, 4)
      })
    ))
})
