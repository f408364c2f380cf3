/**
 * The journal's format read back: records end at the file's end, at the zeros a journal is written
 * ahead with, or at the first line that doesn't hold; only the last is a torn tail.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Format from "../../../src/log/file/Format.ts"
import * as Journal from "../../../src/log/file/Journal.ts"

const encoder = new TextEncoder()
const owner = { pid: 4242, started: "1700000000" }
const header = Journal.headerLine(owner, 17)
const batch = (seq: number) => encoder.encode(Format.entryLine("todo/write", seq, 17, `{"todos":[]}`))
const record = (session: string, offset: number, bytes: Uint8Array) =>
  Format.concat([encoder.encode(Journal.recordHeader(session, offset, bytes.length)), bytes])

const journal = (...parts: ReadonlyArray<Uint8Array>) => Format.concat([header, ...parts])
const parsed = (bytes: Uint8Array) => {
  const result = Journal.parse(bytes)
  assert.isDefined(result, "the header holds")
  return result!
}

describe("Journal", () => {
  it("reads its header and every record, in order", () => {
    const result = parsed(journal(record("a", 100, batch(0)), record("b", 50, batch(3))))
    assert.deepStrictEqual(result.owner, owner)
    assert.strictEqual(result.created, 17)
    assert.deepStrictEqual(result.records.map((r) => [r.session, r.offset, r.bytes.length]), [
      ["a", 100, batch(0).length],
      ["b", 50, batch(3).length]
    ])
    assert.isUndefined(result.stoppedAt)
  })

  it("batches written as records are read back, byte for byte", () => {
    const batches = [{ session: "a", offset: 100, bytes: batch(0) }, { session: "b", offset: 7, bytes: Format.concat([batch(1), batch(2)]) }]
    const result = parsed(journal(Journal.records(batches)))
    assert.deepStrictEqual(result.records.map((r) => ({ session: r.session, offset: r.offset, bytes: [...r.bytes] })), batches.map((b) => ({ ...b, bytes: [...b.bytes] })))
    assert.isUndefined(result.stoppedAt)
  })

  it("zeros written ahead end the records as the file's end does: no torn tail", () => {
    const result = parsed(journal(record("a", 100, batch(0)), new Uint8Array(4096)))
    assert.strictEqual(result.records.length, 1)
    assert.isUndefined(result.stoppedAt, "zeros to the end are space not yet used")
    assert.isUndefined(parsed(journal(new Uint8Array(10))).stoppedAt, "a journal with no record yet")
  })

  it("a record torn over the zeros, or bytes after them, are a torn tail", () => {
    const whole = record("b", 0, batch(1))
    const torn = parsed(journal(record("a", 100, batch(0)), whole.subarray(0, whole.length - 5), new Uint8Array(64)))
    assert.strictEqual(torn.records.length, 1)
    assert.strictEqual(torn.stoppedAt, "a torn or damaged batch")
    const header = whole.subarray(0, whole.indexOf(10) - 3)
    assert.strictEqual(parsed(journal(header, new Uint8Array(64))).stoppedAt, "a torn last line")
    const after = parsed(journal(new Uint8Array(8), encoder.encode("x")))
    assert.strictEqual(after.records.length, 0)
    assert.isDefined(after.stoppedAt, "a zero that isn't followed only by zeros is damage")
  })

  it("no header, a header of a later version, or zeros where it should be: not a journal", () => {
    assert.isUndefined(Journal.parse(new Uint8Array(64)))
    assert.isUndefined(Journal.parse(record("a", 0, batch(0))))
    const later = encoder.encode(
      Format.seal(JSON.stringify({ format: Journal.format, version: Journal.version + 1, pid: 1, created: 0 }))
    )
    assert.isUndefined(Journal.parse(Format.concat([later, record("a", 0, batch(0))])))
    const current = encoder.encode(Format.seal(JSON.stringify({ format: Journal.format, version: Journal.version, pid: 1, created: 0 })))
    assert.strictEqual(parsed(Format.concat([current, record("a", 0, batch(0))])).records.length, 1)
  })

  it("a line that isn't a record, a damaged record header, or a batch with a damaged or unterminated line ends the records", () => {
    const good = record("a", 0, batch(0))
    const notARecord = parsed(journal(good, batch(1), record("b", 0, batch(2))))
    assert.strictEqual(notARecord.records.length, 1)
    assert.strictEqual(notARecord.stoppedAt, "a line that is not a journal record")
    const header = Journal.recordHeader("b", 0, batch(2).length)
    const damagedHeader = parsed(journal(good, encoder.encode(header.replace('"b"', '"c"')), batch(2)))
    assert.strictEqual(damagedHeader.records.length, 1)
    assert.match(damagedHeader.stoppedAt!, /^a damaged line: /)
    const line = batch(2)
    const flipped = Uint8Array.from(line, (byte, i) => (i === 20 ? byte ^ 1 : byte))
    const damagedBatch = parsed(journal(good, encoder.encode(header), flipped))
    assert.deepStrictEqual([damagedBatch.records.length, damagedBatch.stoppedAt], [1, "a torn or damaged batch"])
    const unterminated = Format.concat([line.subarray(0, line.length - 1), encoder.encode("x")])
    const noNewline = parsed(journal(good, encoder.encode(header), unterminated))
    assert.deepStrictEqual([noNewline.records.length, noNewline.stoppedAt], [1, "a torn or damaged batch"])
    // The file ends after a whole line of a two-line batch: the batch is short, though its lines are whole.
    const short = parsed(journal(good, encoder.encode(Journal.recordHeader("b", 0, 2 * line.length)), line))
    assert.deepStrictEqual([short.records.length, short.stoppedAt], [1, "a torn or damaged batch"])
    const empty = parsed(journal(good, encoder.encode(Journal.recordHeader("b", 0, 0)), record("c", 0, batch(3))))
    assert.deepStrictEqual([empty.records.length, empty.stoppedAt], [1, "a torn or damaged batch"], "a record holds at least one line")
  })

  it("names a journal after its owner's pid, which the name gives back", () => {
    const name = Journal.fileName(4242, "5f0c")
    assert.strictEqual(name, "journal-4242-5f0c.wal")
    assert.strictEqual(Journal.pidOf(name), 4242)
    assert.isUndefined(Journal.pidOf("journal-x-5f0c.wal"))
  })
})
