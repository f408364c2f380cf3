/**
 * The scanner on its own, fed chunks by hand: what it yields for a file cut anywhere, where each line
 * ends, what a torn or unterminated last line becomes, and the damage it names. (Written to kill the
 * mutants StrykerJS found surviving in Scanner: see scratch/mutation/README.md.)
 */
import { assert, describe, it } from "@effect/vitest"
import { crc32 } from "node:zlib"
import * as Format from "../../../src/log/file/Format.ts"
import * as Scanner from "../../../src/log/file/Scanner.ts"

const session = "scan-session"
const header = Format.headerLine(session, 5)
const entry = (seq: number, data: unknown = { n: seq }, type = "x") => Format.entryLine(type, seq, 100 + seq, JSON.stringify(data))
const file = (...lines: ReadonlyArray<string | Uint8Array>) =>
  Format.concat(lines.map((line) => typeof line === "string" ? Format.encodeLines(line) : line))

/** Every item the scanner yields for `bytes` fed in chunks of `size` bytes (all at once by default). */
const scan = (
  bytes: Uint8Array,
  size = bytes.length,
  from: Scanner.Position = Scanner.start,
  maxLineBytes?: number,
  name = session
) => {
  const scanner = Scanner.scanner(name, from, maxLineBytes)
  let state = scanner.initial()
  const items: Array<Scanner.Item> = []
  for (let at = 0; at < bytes.length; at += Math.max(1, size)) {
    const [next, out] = scanner.step(state, bytes.subarray(at, at + Math.max(1, size)))
    state = next
    items.push(...out)
  }
  items.push(...scanner.halt(state))
  return items
}

const damageOf = (items: ReadonlyArray<Scanner.Item>) => {
  const last = items.at(-1)
  return last?._tag === "Damage" ? { line: last.line, detail: last.detail } : undefined
}

describe("Scanner", () => {
  const whole = file(header, entry(0), entry(1, { todos: ["é", "ü"] }), entry(2))
  const headerEnd = header.length
  const end0 = headerEnd + Format.encodeLines(entry(0)).length
  const end1 = end0 + Format.encodeLines(entry(1, { todos: ["é", "ü"] })).length

  it("yields the header, then each entry with its line number and the offset after its newline", () => {
    assert.deepStrictEqual(scan(whole), [
      // the header as written, its checksum field included
      { _tag: "Header", header: JSON.parse(new TextDecoder().decode(header)), end: headerEnd },
      { _tag: "Entry", entry: { type: "x", seq: 0, time: 100, data: { n: 0 } }, line: 2, end: end0 },
      { _tag: "Entry", entry: { type: "x", seq: 1, time: 101, data: { todos: ["é", "ü"] } }, line: 3, end: end1 },
      { _tag: "Entry", entry: { type: "x", seq: 2, time: 102, data: { n: 2 } }, line: 4, end: whole.length }
    ])
  })

  it("yields the same items however the file is cut into chunks", () => {
    const expected = scan(whole)
    for (const size of [1, 2, 3, 7, 16, 61, 64, headerEnd, headerEnd + 1, end0 - 1, whole.length - 1]) {
      assert.deepStrictEqual(scan(whole, size), expected, `chunks of ${size}`)
    }
  })

  it("a start after the header takes the header as seen, counting lines and offsets from there", () => {
    const rest = whole.subarray(end0)
    const items = scan(rest, rest.length, { offset: end0, line: 3, seq: 1 })
    assert.deepStrictEqual(items.map((item) => item._tag === "Entry" ? [item.entry.seq, item.line, item.end] : item._tag), [
      [1, 3, end1],
      [2, 4, whole.length]
    ])
  })

  it("a negative expected seq takes the first line's seq as it is, then expects the next", () => {
    const rest = whole.subarray(end0)
    assert.deepStrictEqual(scan(rest, rest.length, { offset: end0, line: 0, seq: -1 }).map((item) => item._tag), ["Entry", "Entry"])
    const gap = file(entry(5), entry(7))
    assert.deepStrictEqual(damageOf(scan(gap, gap.length, { offset: 10, line: 0, seq: -1 })), {
      line: 1,
      detail: "seq 7 leaves a gap (expected 6)"
    })
  })

  describe("the last line", () => {
    it("bytes after the last newline that aren't a whole line are a torn tail: where it starts and how long", () => {
      const torn = `{"type":"x","seq":3,"ti`
      for (const size of [1, 5, 1000]) {
        const items = scan(file(whole, torn), size)
        assert.deepStrictEqual(items.at(-1), { _tag: "Tail", start: whole.length, length: torn.length }, `chunks of ${size}`)
        assert.strictEqual(items.length, 5)
      }
    })

    it("a whole last line that lacks only its newline is read, marked unterminated, ending where its bytes end", () => {
      const last = entry(3).replace(/\n$/, "")
      const bytes = file(whole, last)
      for (const size of [1, 9, 1000]) {
        assert.deepStrictEqual(scan(bytes, size).at(-1), {
          _tag: "Entry",
          entry: { type: "x", seq: 3, time: 103, data: { n: 3 } },
          line: 5,
          end: bytes.length,
          unterminated: true
        })
      }
      const lone = Format.headerLine(session, 5).subarray(0, headerEnd - 1)
      assert.deepStrictEqual(scan(lone).map((item) => [item._tag, "unterminated" in item && item.unterminated, "end" in item && item.end]), [
        ["Header", true, headerEnd - 1]
      ])
    })

    it("a whole last line without its newline that is damaged is damage, not a tail", () => {
      const last = entry(7).replace(/\n$/, "")
      assert.deepStrictEqual(damageOf(scan(file(whole, last))), { line: 5, detail: "seq 7 leaves a gap (expected 3)" })
    })

    it("an empty line is damage, wherever the chunks are cut", () => {
      const bytes = file(header, "\n", entry(0))
      for (let size = 1; size <= bytes.length; size++) {
        assert.deepStrictEqual(damageOf(scan(bytes, size)), { line: 2, detail: "no checksum at the end of the line" }, `chunks of ${size}`)
      }
    })

    it("a file that ends on a newline has no tail, and an empty file yields nothing", () => {
      assert.isFalse(scan(whole).some((item) => item._tag === "Tail"))
      assert.deepStrictEqual(scan(new Uint8Array(0)), [])
    })
  })

  describe("the header", () => {
    it("must be the first line, and name this session", () => {
      assert.deepStrictEqual(damageOf(scan(file(entry(0)))), { line: 1, detail: "not a session log header" })
      assert.deepStrictEqual(damageOf(scan(whole, whole.length, Scanner.start, undefined, "other")), {
        line: 1,
        detail: `the header names session "${session}"`
      })
      assert.deepStrictEqual(damageOf(scan(file(Format.seal(`{"format":"other"}`)))), { line: 1, detail: "not a session log header" })
    })

    it("a line that claims the format but doesn't hold its fields is a malformed header", () => {
      const line = Format.seal(`{"format":"${Format.format}","version":"1","session":"${session}","created":5}`)
      assert.deepStrictEqual(damageOf(scan(file(line))), { line: 1, detail: "malformed header" })
    })

    it("a version newer than the reader's is refused; the current one and older ones are read", () => {
      const at = (version: number) =>
        file(Format.seal(`{"format":"${Format.format}","version":${version},"session":"${session}","created":5}`))
      assert.deepStrictEqual(damageOf(scan(at(2))), { line: 1, detail: "format version 2 is newer than this reader's (1)" })
      assert.strictEqual(scan(at(1))[0]?._tag, "Header")
      assert.strictEqual(scan(at(0))[0]?._tag, "Header")
    })
  })

  describe("entries", () => {
    it("a seq that repeats or leaves a gap is damage naming the line and both seqs", () => {
      assert.deepStrictEqual(damageOf(scan(file(header, entry(0), entry(0)))), { line: 3, detail: "seq 0 repeats (expected 1)" })
      assert.deepStrictEqual(damageOf(scan(file(header, entry(1)))), { line: 2, detail: "seq 1 leaves a gap (expected 0)" })
    })

    it("a line that isn't an envelope {type, seq, time, data} is damage", () => {
      const notEnvelopes = [
        `{"type":"","seq":0,"time":0,"data":1}`,
        `{"type":1,"seq":0,"time":0,"data":1}`,
        `{"type":"x","seq":-1,"time":0,"data":1}`,
        `{"type":"x","seq":0.5,"time":0,"data":1}`,
        `{"type":"x","seq":0,"time":0.5,"data":1}`,
        `{"type":"x","seq":0,"time":"0","data":1}`,
        `{"type":"x","seq":0,"time":0}`,
        // a type that has a length but isn't a string
        `{"type":["x"],"seq":0,"time":0,"data":1}`
      ]
      for (const json of notEnvelopes) {
        assert.deepStrictEqual(damageOf(scan(file(header, Format.seal(json)))), {
          line: 2,
          detail: "not an event envelope {type, seq, time, data}"
        }, json)
      }
      // data may be anything, null included
      const nullData = file(header, Format.seal(`{"type":"x","seq":0,"time":0,"data":null}`))
      assert.deepStrictEqual(scan(nullData).at(-1), {
        _tag: "Entry",
        entry: { type: "x", seq: 0, time: 0, data: null },
        line: 2,
        end: nullData.length
      })
    })

    it("a damaged checksum is damage naming the line, and nothing after it is yielded, not even a tail", () => {
      const altered = entry(1).replace(`"n":1`, `"n":9`)
      for (const size of [1, 1000]) {
        const items = scan(file(header, entry(0), altered, entry(2), "torn"), size)
        assert.deepStrictEqual(items.map((item) => item._tag), ["Header", "Entry", "Damage"], `chunks of ${size}`)
        assert.include(damageOf(items)?.detail, "checksum mismatch")
        assert.strictEqual(damageOf(items)?.line, 3)
      }
    })

    it("a line that isn't UTF-8 is damage naming it, after the lines before it in the same chunk", () => {
      const open = Format.concat([Format.encodeLines(`{"type":"x","seq":1,"time":0,"data":"`), Uint8Array.of(0xff), Format.encodeLines(`"`)])
      const bad = Format.concat([open, Format.encodeLines(`,"crc":"${crc32(open).toString(16).padStart(8, "0")}"}\n`)])
      const items = scan(file(header, entry(0), bad, entry(2)))
      assert.deepStrictEqual(items.map((item) => item._tag), ["Header", "Entry", "Damage"])
      assert.deepStrictEqual(damageOf(items), { line: 3, detail: "not valid UTF-8" })
    })
  })

  describe("the line length limit", () => {
    const line = entry(0, { pad: "p".repeat(40) })
    const length = Format.encodeLines(line).length - 1
    const after = (max: number, size: number, bytes = file(header, line)) =>
      scan(bytes, size, Scanner.start, max).filter((item) => item._tag !== "Header")

    it("a line of exactly the limit is read, one byte more is damage, however it arrives", () => {
      for (const size of [1, 10, headerEnd + 5, 10_000]) {
        assert.deepStrictEqual(after(length, size).map((item) => item._tag), ["Entry"], `chunks of ${size}`)
        assert.deepStrictEqual(damageOf(after(length - 1, size)), {
          line: 2,
          detail: `the line is longer than ${length - 1} bytes, the most a line may hold`
        }, `chunks of ${size}`)
      }
    })

    it("nothing is read after a line over the limit, even a good line in the same chunk", () => {
      const bytes = file(header, line, entry(1))
      assert.deepStrictEqual(scan(bytes, bytes.length, Scanner.start, length - 1).map((item) => item._tag), ["Header", "Damage"])
    })

    it("a last line without a newline over the limit is damage, not a tail, and is never buffered whole", () => {
      const max = headerEnd + 20
      const torn = "t".repeat(2 * max)
      for (const size of [1, 30, 10_000]) {
        const items = scan(file(header, torn), size, Scanner.start, max)
        assert.deepStrictEqual(items.map((item) => item._tag), ["Header", "Damage"], `chunks of ${size}`)
        assert.deepStrictEqual(damageOf(items), { line: 2, detail: `the line is longer than ${max} bytes, the most a line may hold` })
      }
      // up to the limit it is a tail
      for (const size of [1, 7, 10_000]) {
        assert.deepStrictEqual(scan(file(header, "t".repeat(max)), size, Scanner.start, max).at(-1), {
          _tag: "Tail",
          start: headerEnd,
          length: max
        }, `chunks of ${size}`)
      }
    })

    it("the default limit is 4 MiB", () => {
      assert.strictEqual(Scanner.defaultMaxLineBytes, 4 * 1024 * 1024)
      assert.deepStrictEqual(Scanner.start, { offset: 0, line: 1, seq: 0 })
    })
  })
})
