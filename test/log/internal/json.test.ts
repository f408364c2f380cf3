/**
 * Payload snapshots: a JSON value comes back as a frozen copy equal to it, in one walk; anything JSON
 * can't hold, wherever it is, is refused by a second walk that says where.
 */
import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import * as Json from "../../../src/log/internal/json.ts"

/** Whether `v` and everything in it is frozen. */
const deeplyFrozen = (v: unknown): boolean =>
  typeof v !== "object" || v === null || (Object.isFrozen(v) && Object.values(v).every(deeplyFrozen))

/** `v` with every string and key made well-formed text (a lone surrogate replaced). */
const textual = (v: unknown): unknown =>
  typeof v === "string"
    ? v.toWellFormed()
    : Array.isArray(v)
    ? v.map(textual)
    : typeof v === "object" && v !== null
    ? Object.fromEntries(Object.entries(v).map(([key, item]) => [key.toWellFormed(), textual(item)]))
    : v

const copyOf = (value: unknown): unknown => {
  const snapshotted = Json.snapshot(value)
  if ("problem" in snapshotted) return assert.fail(snapshotted.problem)
  return snapshotted.copy
}

const problemOf = (value: unknown): string => {
  const snapshotted = Json.snapshot(value)
  return "problem" in snapshotted ? snapshotted.problem : assert.fail(`copied: ${JSON.stringify(snapshotted.copy)}`)
}

/** What JSON can't hold, and how the problem with it is said after its path. */
const unfit: ReadonlyArray<readonly [unknown, string]> = [
  [Number.NaN, ": NaN is not a JSON number"],
  [Number.NEGATIVE_INFINITY, ": -Infinity is not a JSON number"],
  [new Date(0), ": a Date is not JSON"],
  [new Map(), ": a Map is not JSON"],
  [() => 1, ": a function is not JSON"],
  [1n, ": a bigint is not JSON"],
  ["x\ud800y", ": a lone surrogate (half of a UTF-16 pair) is not Unicode text"]
]

/** One step into a value: a key of an object, or an index of an array. */
const Step = Schema.Union([Schema.String, Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 3 }))])

/** `leaf` placed at the end of `steps`, each step's other places holding `filler`; and its path. */
const placed = (steps: ReadonlyArray<string | number>, leaf: unknown, filler: unknown) => {
  let value = leaf
  for (const step of [...steps].reverse()) {
    if (typeof step === "number") {
      const array: Array<unknown> = Array.from({ length: step + 1 }, () => filler)
      array[step] = value
      value = array
    } else {
      value = { [step]: value, ...(step === "other" ? {} : { other: filler }) }
    }
  }
  let path = "data"
  for (const step of steps) path = typeof step === "number" ? `${path}[${step}]` : `${path}.${step}`
  return { value, path }
}

describe("Json.snapshot", () => {
  it.prop("a JSON value comes back equal, frozen all the way down, and a copy", { json: Schema.MutableJson }, ({ json }) => {
    // Text with a lone surrogate is not JSON here: refused.
    const v = textual(json)
    if (JSON.stringify(v) !== JSON.stringify(json)) assert.include(problemOf(json), "lone surrogate")
    const copy = copyOf(v)
    assert.deepStrictEqual(copy, v)
    assert.isTrue(deeplyFrozen(copy))
    if (typeof v === "object" && v !== null) assert.notStrictEqual(copy, v)
    assert.strictEqual(JSON.stringify(copy), JSON.stringify(v))
  })

  it.prop(
    "a value JSON can't hold is refused wherever it is, saying where",
    { steps: Schema.Array(Step).check(Schema.isMaxLength(6)), which: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: unfit.length - 1 })), filler: Schema.MutableJson },
    ({ filler, steps, which }) => {
      // Keys that are not text are refused for themselves: keep the path's keys well formed.
      const [leaf, said] = unfit[which]!
      const { path, value } = placed(steps.map((step) => typeof step === "string" ? step.toWellFormed() : step), leaf, textual(filler))
      assert.strictEqual(problemOf(value), `${path}${said}`)
    }
  )

  it("undefined: an absent property, refused in an array", () => {
    assert.deepStrictEqual(copyOf({ a: 1, b: undefined }), { a: 1 })
    assert.strictEqual(problemOf({ list: [1, undefined] }), "data.list[1]: undefined is not JSON")
    assert.strictEqual(problemOf({ list: [1, , 3] }), "data.list[1]: undefined is not JSON")
  })

  it("a cycle is refused, however deep; a value deeper than a cycle check's bound is copied", () => {
    const cyclic: Record<string, unknown> = { list: [] }
    ;(cyclic.list as Array<unknown>).push({ back: cyclic })
    assert.strictEqual(problemOf(cyclic), "data.list[0].back: a cycle")
    const loop: Array<unknown> = [1]
    loop.push([loop])
    assert.strictEqual(problemOf(loop), "data[1][0]: a cycle")
    let deep: unknown = "bottom"
    for (let i = 0; i < 100; i++) deep = i % 2 === 0 ? [deep] : { d: deep }
    assert.deepStrictEqual(copyOf(deep), deep)
  })

  it("a key named __proto__ stays a key of the copy, not its prototype", () => {
    const parsed: unknown = JSON.parse(`{"__proto__": {"polluted": true}, "list": [{"__proto__": 1}]}`)
    const copy = copyOf(parsed) as Record<string, unknown>
    assert.strictEqual(Object.getPrototypeOf(copy), Object.prototype)
    assert.strictEqual(JSON.stringify(copy), JSON.stringify(parsed))
    assert.deepStrictEqual(Object.keys(copy), ["__proto__", "list"])
  })

  it("an object without a prototype is a plain object; an instance of a class is not", () => {
    const bare = Object.assign(Object.create(null), { a: [1] }) as Record<string, unknown>
    assert.strictEqual(JSON.stringify(copyOf({ bare })), `{"bare":{"a":[1]}}`)
    class Point {
      x = 1
    }
    assert.strictEqual(problemOf({ at: [new Point()] }), "data.at[0]: a Point is not JSON")
  })

  it("a value frozen all the way down is its own snapshot", () => {
    const frozen = Object.freeze({ todos: Object.freeze([Object.freeze({ content: "a", status: "pending" })]) })
    assert.strictEqual(copyOf(frozen), frozen)
  })
})
