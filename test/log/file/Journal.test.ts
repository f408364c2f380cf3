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

  it("no header, or zeros where it should be: not a journal", () => {
    assert.isUndefined(Journal.parse(new Uint8Array(64)))
    assert.isUndefined(Journal.parse(record("a", 0, batch(0))))
  })
})
