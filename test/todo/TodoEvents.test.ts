/**
 * The todo domain's events as they are stored: their type names and payload schemas are the log's
 * format (a rename, or a schema that drifts, makes every stored session unreadable or lets a bad
 * one in), and the write invariant holds exactly what the stored schema does. (Written to kill the
 * static mutants StrykerJS can't run in TodoEvents: see scratch/mutation/README.md.)
 */
import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import * as TodoEvents from "../../src/todo/TodoEvents.ts"

const decodes = (schema: Schema.Decoder<unknown>, value: unknown) =>
  Schema.decodeUnknownExit(schema, { onExcessProperty: "error" })(value)._tag === "Success"

describe("TodoEvents", () => {
  it("the stored type names are todo/write, turn/start and turn/end", () => {
    assert.strictEqual(TodoEvents.write.type, "todo/write")
    assert.strictEqual(TodoEvents.turnStart.type, "turn/start")
    assert.strictEqual(TodoEvents.turnEnd.type, "turn/end")
  })

  it("turn/start holds nothing; turn/end holds how the turn ended: completed, interrupted or error", () => {
    assert.isTrue(decodes(TodoEvents.turnStart.schema, {}))
    assert.isFalse(decodes(TodoEvents.turnStart.schema, null))
    for (const reason of ["completed", "interrupted", "error"]) {
      assert.isTrue(decodes(TodoEvents.turnEnd.schema, { reason }), reason)
      assert.isTrue(TodoEvents.turnEnd.is({ reason }), reason)
    }
    assert.isFalse(decodes(TodoEvents.turnEnd.schema, { reason: "" }))
    assert.isFalse(decodes(TodoEvents.turnEnd.schema, {}))
    assert.isFalse(TodoEvents.turnEnd.is({ reason: "done" }))
  })

  it("todo/write's guard tells a list of items with content and a known status", () => {
    assert.isTrue(TodoEvents.write.is({ todos: [{ content: "a", status: "pending" }] }))
    assert.isFalse(TodoEvents.write.is({ todos: [{ content: "a", status: "done" }] }))
    assert.isTrue(decodes(TodoEvents.write.schema, { todos: [{ content: "a", status: "completed", evidence: "ok" }] }))
  })

  describe("the write invariant", () => {
    const check = TodoEvents.writeInvariant.check

    it("is registered for todo/write under its rule name, and is the domain's only invariant", () => {
      assert.strictEqual(TodoEvents.writeInvariant.eventType, "todo/write")
      assert.strictEqual(TodoEvents.writeInvariant.rule, "todo/write shape")
      assert.deepStrictEqual(TodoEvents.invariants, [TodoEvents.writeInvariant])
    })

    it("holds for stored lists: trimmed, unique content, known statuses, evidence only if not blank", () => {
      assert.isUndefined(check({ todos: [] }))
      assert.isUndefined(check({ todos: [{ content: "a", status: "in_progress" }, { content: "b", status: "in_progress" }] }))
      assert.isUndefined(check({ todos: [{ content: "a", status: "completed", evidence: "test passed" }] }))
      // thawed, sent from elsewhere: the schema decides
      assert.isUndefined(check(JSON.parse(JSON.stringify({ todos: [{ content: "A", status: "pending" }, { content: "a", status: "pending" }] }))))
    })

    it("is broken, saying why, by what no valid write stores", () => {
      const broken = [
        { todos: [{ content: " a", status: "pending" }] },
        { todos: [{ content: "", status: "pending" }] },
        { todos: [{ content: "a", status: "done" }] },
        { todos: [{ content: "a", status: "pending" }, { content: "a", status: "completed" }] },
        { todos: [{ content: "a", status: "pending", evidence: "" }] },
        { todos: [{ content: "a", status: "pending", id: 1 }] },
        { todos: [], more: 1 },
        { todos: {} },
        {},
        null
      ]
      for (const data of broken) {
        const detail = check(data)
        assert.isString(detail, JSON.stringify(data))
        assert.isAbove(detail!.length, 0)
      }
    })
  })
})
