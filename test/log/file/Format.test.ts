/**
 * The sealed line format on its own: what a line is, byte for byte, and each way `unseal` and
 * `parseSealed` tell a line that was altered from one that holds. (Written to kill the mutants
 * StrykerJS found surviving in Format: see scratch/mutation/README.md.)
 */
import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import { crc32 } from "node:zlib"
import * as Format from "../../../src/log/file/Format.ts"

const encoder = new TextEncoder()
const bytes = (text: string) => encoder.encode(text)
const text = (value: Uint8Array | string) => typeof value === "string" ? value : new TextDecoder().decode(value)
const hex8 = (n: number) => n.toString(16).padStart(8, "0")
/** A line as `unseal` gets it: without its newline. */
const line = (sealed: string) => bytes(sealed.replace(/\n$/, ""))
/** The JSON text `open` (an object without its `}`) sealed with a checksum given as written. */
const withCrc = (open: string, crc: string) => bytes(`${open},"crc":"${crc}"}`)

describe("Format", () => {
  it("names a session's file and its lock after the session", () => {
    assert.strictEqual(Format.fileName("s-1"), "s-1.jsonl")
    assert.strictEqual(Format.extension, ".jsonl")
    assert.strictEqual(Format.lockName("s-1"), "s-1.lock")
  })

  describe("writing", () => {
    it("an entry line is the envelope, then the checksum of exactly the text before it, then a newline", () => {
      const written = Format.entryLine("todo/write", 3, 17, `{"todos":[]}`)
      const open = `{"type":"todo/write","seq":3,"time":17,"data":{"todos":[]}`
      assert.strictEqual(written, `${open},"crc":"${hex8(crc32(open))}"}\n`)
      assert.deepStrictEqual(JSON.parse(written), {
        type: "todo/write",
        seq: 3,
        time: 17,
        data: { todos: [] },
        crc: hex8(crc32(open))
      })
    })

    it("an entry's type is JSON-escaped, so a quote in it can't end the string early", () => {
      const written = Format.entryLine(`a"b`, 0, 0, "1")
      assert.strictEqual(JSON.parse(written).type, `a"b`)
      assert.strictEqual(text(Format.unseal(line(written))), `{"type":"a\\"b","seq":0,"time":0,"data":1`)
    })

    it("a checksum below 0x10000000 keeps its leading zeros: always 8 hex digits", () => {
      // crc32(`{"n":32`) is 0x001e05fd
      assert.strictEqual(crc32(`{"n":32`), 0x001e05fd)
      assert.strictEqual(Format.seal(`{"n":32}`), `{"n":32,"crc":"001e05fd"}\n`)
      assert.strictEqual(text(Format.unseal(line(Format.seal(`{"n":32}`)))), `{"n":32`)
    })

    it("the header line names the format, its version, the session and when it was created, and decodes as a Header", () => {
      const header = text(Format.headerLine(`s"1`, 1234))
      assert.isTrue(header.endsWith("\n"))
      const json = JSON.parse(header)
      assert.deepStrictEqual(Schema.decodeUnknownSync(Format.Header)(json), {
        format: "effect-todo-write/session",
        version: 1,
        session: `s"1`,
        created: 1234
      })
      assert.strictEqual(Format.format, "effect-todo-write/session")
      assert.strictEqual(Format.version, 1)
      assert.strictEqual(
        text(Format.unseal(line(header))),
        `{"format":"effect-todo-write/session","version":1,"session":"s\\"1","created":1234`
      )
    })

    it("seal closes an object written by other means: only its last brace gives way, trailing space is dropped", () => {
      const open = `{"a":{"b":1}`
      assert.strictEqual(Format.seal(`{"a":{"b":1}}`), `${open},"crc":"${hex8(crc32(open))}"}\n`)
      assert.strictEqual(Format.seal(`{"a":{"b":1}}  \n`), Format.seal(`{"a":{"b":1}}`))
      assert.deepStrictEqual(JSON.parse(Format.seal(`{"a":{"b":1}}\n`)).a, { b: 1 })
      // a brace inside the object stays, even when it isn't next to the last one
      assert.deepStrictEqual(JSON.parse(Format.seal(`{"a":{"b":1},"c":2}`)), { a: { b: 1 }, c: 2, crc: hex8(crc32(`{"a":{"b":1},"c":2`)) })
    })

    it("encodeLines is the text as UTF-8", () => {
      assert.deepStrictEqual([...Format.encodeLines("é\n")], [0xc3, 0xa9, 0x0a])
    })

    it("entryLines is a batch's entry lines, numbered on from the seq given, as UTF-8", () => {
      const batch = [{ type: "a", time: 1, json: "\"é\"" }, { type: "b", time: 2, json: "null" }]
      const expected = Format.entryLine("a", 7, 1, "\"é\"") + Format.entryLine("b", 8, 2, "null")
      assert.deepStrictEqual([...Format.entryLines(batch, 7)], [...Format.encodeLines(expected)])
      assert.strictEqual(Format.entryLines([], 0).length, 0)
    })
  })

  describe("unseal", () => {
    const good = Format.entryLine("x", 0, 0, `{"k":"v"}`)

    it("answers the text before the checksum when the checksum holds", () => {
      assert.strictEqual(text(Format.unseal(line(good))), `{"type":"x","seq":0,"time":0,"data":{"k":"v"}`)
      // the shortest line that holds: one byte of text
      assert.strictEqual(text(Format.unseal(line(Format.seal("{}")))), "{")
    })

    it("a line that is only a checksum, or shorter, has no checksum at the end", () => {
      assert.strictEqual(crc32(""), 0)
      assert.strictEqual(Format.unseal(bytes(`,"crc":"00000000"}`)), "no checksum at the end of the line")
      assert.strictEqual(Format.unseal(bytes(`"}`)), "no checksum at the end of the line")
      assert.strictEqual(Format.unseal(bytes("")), "no checksum at the end of the line")
    })

    it("a line whose last two bytes aren't `\"}` has no checksum at the end, even with the right digits", () => {
      const sealed = good.replace(/\n$/, "")
      assert.strictEqual(Format.unseal(bytes(`${sealed.slice(0, -1)}]`)), "no checksum at the end of the line")
      assert.strictEqual(Format.unseal(bytes(`${sealed.slice(0, -2)}'}`)), "no checksum at the end of the line")
    })

    it("every byte of `,\"crc\":\"` must be there", () => {
      const sealed = good.replace(/\n$/, "")
      const at = sealed.lastIndexOf(`,"crc":"`)
      for (let i = 0; i < 8; i++) {
        const altered = `${sealed.slice(0, at + i)}#${sealed.slice(at + i + 1)}`
        assert.strictEqual(Format.unseal(bytes(altered)), "no checksum at the end of the line", altered)
      }
    })

    it("reads the stored checksum as lowercase hex: 0-9 and a-f, and says both values when they differ", () => {
      assert.strictEqual(
        Format.unseal(withCrc(`{"a":1`, "09af09af")),
        `checksum mismatch (stored 09af09af, computed ${hex8(crc32(`{"a":1`))}): the line was altered after it was written`
      )
      assert.strictEqual(
        Format.unseal(withCrc(`{"a":1`, "f0000009")),
        `checksum mismatch (stored f0000009, computed ${hex8(crc32(`{"a":1`))}): the line was altered after it was written`
      )
    })

    it("any other character among the digits is a malformed checksum", () => {
      // each just outside a range the parser accepts (`/` `:` `` ` `` `g`), an uppercase digit, a space
      for (const c of ["/", ":", "`", "g", "A", " "]) {
        assert.strictEqual(Format.unseal(withCrc(`{"a":1`, `0000000${c}`)), "malformed checksum", c)
        assert.strictEqual(Format.unseal(withCrc(`{"a":1`, `${c}0000000`)), "malformed checksum", c)
      }
    })

    it("one altered byte anywhere in the text is a mismatch", () => {
      const sealed = good.replace(/\n$/, "")
      const altered = sealed.replace(`"v"`, `"w"`)
      assert.include(Format.unseal(bytes(altered)) as string, "checksum mismatch")
    })
  })

  describe("parseSealed", () => {
    it("answers the line's JSON, checksum field included", () => {
      const written = Format.entryLine("x", 1, 2, "[1]")
      assert.deepStrictEqual(Format.parseSealed(line(written)), {
        json: { type: "x", seq: 1, time: 2, data: [1], crc: JSON.parse(written).crc }
      })
    })

    it("reads the text it is given for the line, as decoded by the caller", () => {
      const written = line(Format.entryLine("x", 1, 2, "[1]"))
      assert.deepStrictEqual(Format.parseSealed(written, text(written)), { json: JSON.parse(text(written)) })
    })

    it("a checksum that doesn't hold is damage, and says why", () => {
      assert.deepStrictEqual(Format.parseSealed(withCrc(`{"a":1`, "zzzzzzzz")), { damage: "malformed checksum" })
    })

    it("bytes that aren't UTF-8 are damage, even when their checksum holds", () => {
      const body = Format.concat([bytes(`{"a":"`), Uint8Array.of(0xff), bytes(`"`)])
      const sealed = Format.concat([body, bytes(`,"crc":"${hex8(crc32(body))}"}`)])
      assert.strictEqual(Format.unseal(sealed) instanceof Uint8Array, true)
      assert.deepStrictEqual(Format.parseSealed(sealed), { damage: "not valid UTF-8" })
    })

    it("a checksummed line that isn't JSON is damage, with the parser's reason", () => {
      const result = Format.parseSealed(line(Format.seal(`{"a":}`)))
      assert.isTrue("damage" in result && result.damage.startsWith("bad JSON: ") && result.damage.length > 10, JSON.stringify(result))
    })
  })

  describe("concat", () => {
    it("joins the parts in order", () => {
      assert.deepStrictEqual([...Format.concat([Uint8Array.of(1, 2), Uint8Array.of(), Uint8Array.of(3)])], [1, 2, 3])
      assert.deepStrictEqual([...Format.concat([Uint8Array.of(4, 5)])], [4, 5])
      assert.strictEqual(Format.concat([]).length, 0)
    })
  })
})
