import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import type * as IoCalls from "../../../src/log/file/IoCalls.ts"
import * as IoMessages from "../../../src/log/file/IoMessages.ts"

const Fault = Schema.Struct({ code: Schema.UndefinedOr(Schema.String), syscall: Schema.String, message: Schema.String })
const Identity = Schema.Struct({ dev: Schema.BigInt, ino: Schema.UndefinedOr(Schema.BigInt), size: Schema.BigInt })
const Outcome = Schema.Union([
  Schema.TaggedStruct("LockFailed", { fault: Fault }),
  Schema.TaggedStruct("LockNotHeld", { found: Schema.UndefinedOr(Identity) }),
  Schema.TaggedStruct("WriteFailed", { fault: Fault }),
  Schema.TaggedStruct("NotDurable", {}),
  Schema.TaggedStruct("Durable", { found: Schema.UndefinedOr(Identity), fault: Schema.UndefinedOr(Fault) })
])

/** An identity as the thread reports one: device, inode and size as unsigned 64-bit numbers. */
const unsigned = (outcome: typeof Outcome.Type): IoCalls.Outcome => {
  if (!("found" in outcome) || outcome.found === undefined) return outcome
  const { dev, ino, size } = outcome.found
  const u = (n: bigint) => BigInt.asUintN(64, n)
  return { ...outcome, found: { dev: u(dev), ino: ino === undefined ? undefined : u(ino), size: u(size) } }
}

describe("IoMessages", () => {
  it.prop(
    "a commit's answer comes back from the thread as it was sent",
    {
      outcomes: Schema.Array(Outcome),
      stored: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)),
      journal: Schema.UndefinedOr(Schema.Struct({ fault: Fault, cut: Schema.Boolean })),
      writers: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))
    },
    ({ journal, outcomes, stored, writers }) => {
      const response: IoCalls.Response = { ids: outcomes.map((_, i) => i * 3 + 1), outcomes: outcomes.map(unsigned), stored, journal }
      // Through a structured clone, as `postMessage` sends it.
      const sent = structuredClone(IoMessages.packed(response, IoMessages.tags, writers))
      assert.deepStrictEqual(IoMessages.unpacked(sent), { ...response, writers })
    }
  )

  it("a group's batches come back as the thread takes them: records, where their lines start, their writers by id", () => {
    const encoder = new TextEncoder()
    const write = (path: string): IoCalls.Write => ({ fd: 3, path, directory: "/d", lock: `${path}.lock`, lockDev: 1n, lockIno: 2n })
    const [a, b] = [write("/d/a"), write("/d/b")]
    const batches: ReadonlyArray<IoMessages.Batch> = [
      { id: 7, header: encoder.encode("<7>"), lines: encoder.encode("seven\n"), write: a },
      { id: 8, header: encoder.encode("<8>"), lines: encoder.encode("eight\n"), write: undefined },
      { id: 9, header: encoder.encode("<nine>"), lines: encoder.encode("nine\n"), write: b }
    ]
    const { layout, records } = IoMessages.laidOut(batches)
    layout[1] = 0
    layout[2 * IoMessages.fields + 1] = 1
    const handed = IoMessages.handedOf(structuredClone({ layout, records }), new Map([[0, a], [1, b]]), IoMessages.fields)
    const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes)
    assert.deepStrictEqual(handed.map(({ buffer, id, lines, write }) => [id, text(buffer), lines, write?.path]), [
      [7, "<7>seven\n", 3, "/d/a"],
      [8, "<8>eight\n", 3, undefined],
      [9, "<nine>nine\n", 6, "/d/b"]
    ])
    assert.deepStrictEqual(
      IoMessages.assembled(batches).map(({ buffer, id, lines, write }) => [id, text(buffer), lines, write?.path]),
      handed.map(({ buffer, id, lines, write }) => [id, text(buffer), lines, write?.path])
    )
  })
})
