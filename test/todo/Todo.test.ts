import { assert, describe, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import * as Todo from "../../src/todo/Todo.ts"
import * as TodoProjection from "../../src/todo/TodoProjection.ts"
import * as TodoShape from "../../src/todo/TodoShape.ts"

describe("Todo", () => {
  it("derives the payload, the stored shape and the projection state from one item schema", () => {
    assert.strictEqual(Todo.Write.fields.todos.value, Todo.Item)
    assert.strictEqual(Todo.StoredItem.fields.status, Todo.Item.fields.status)
    assert.isTrue(Schema.is(TodoProjection.todos.schema)(null))
    assert.isTrue(Schema.is(TodoProjection.todos.schema)([{ content: "a", status: "pending" }]))
    assert.isFalse(Schema.is(TodoProjection.todos.schema)([{ content: " a", status: "pending" }]))
    // evidence is carried by the payload, the stored shape and the projection state alike
    assert.strictEqual(Todo.ItemArguments.fields.content, Todo.Item.fields.content)
    assert.isTrue(Schema.is(TodoProjection.todos.schema)([{ content: "a", status: "completed", evidence: "tests pass" }]))
    assert.isFalse(Schema.is(TodoProjection.todos.schema)([{ content: "a", status: "completed", evidence: " " }]))
  })

  it("counts statuses and says them in one line", () => {
    const counts = Todo.count([
      { content: "a", status: "pending" },
      { content: "b", status: "in_progress" },
      { content: "c", status: "pending" }
    ])
    assert.deepStrictEqual(counts, { pending: 2, in_progress: 1, completed: 0 })
    assert.strictEqual(Todo.summary(counts), "Updated todo list: 2 pending, 1 in progress, 0 completed.")
  })

  it("adds one short hint when work is pending and nothing is in_progress", () => {
    assert.strictEqual(
      Todo.summary({ pending: 2, in_progress: 0, completed: 1 }),
      "Updated todo list: 2 pending, 0 in progress, 1 completed. Hint: mark your current step in_progress."
    )
    assert.isUndefined(Todo.hint({ pending: 0, in_progress: 0, completed: 3 }))
    assert.isUndefined(Todo.hint({ pending: 2, in_progress: 1, completed: 0 }))
  })

  // Inputs near the valid shapes, so the fast paths accept often and reject in every way.
  const Content = Schema.Union([Schema.String, Schema.Literals(["a", " a", "b", ""])])
  const NearItem = Schema.Union([
    Schema.Struct({ content: Content, status: Schema.Union([Todo.Status, Schema.String]) }),
    Schema.Struct({ content: Content, status: Todo.Status, evidence: Schema.Union([Content, Schema.Null, Schema.Json]) }),
    Schema.Struct({ content: Content, status: Todo.Status, extra: Schema.Json }),
    Schema.Struct({ content: Content })
  ])
  const Near = Schema.Union([
    Schema.Struct({ todos: Schema.Array(NearItem).check(Schema.isMaxLength(5)) }),
    Schema.Struct({ todos: Schema.Array(NearItem), more: Schema.Json }),
    Schema.Json
  ])
  const strictItem = Schema.decodeUnknownResult(Todo.ItemArguments, { onExcessProperty: "error" })
  const strictStored = Schema.decodeUnknownResult(Todo.StoredWrite, { onExcessProperty: "error" })

  it.prop("the fast paths accept only what the schemas accept, with the same result", { input: Near }, ({ input }) => {
    const items: ReadonlyArray<unknown> = typeof input === "object" && input !== null && "todos" in input && Array.isArray(input.todos) ? input.todos : []
    for (const item of items) {
      if (TodoShape.isExactItemArguments(item)) {
        const decoded = strictItem(item)
        assert.isTrue(Result.isSuccess(decoded))
        if (Result.isSuccess(decoded)) assert.deepStrictEqual(item, decoded.success)
      }
      // and the common case really is fast: a schema-valid plain item takes the fast path
      if (Result.isSuccess(strictItem(item))) assert.isTrue(TodoShape.isExactItemArguments(JSON.parse(JSON.stringify(item))))
    }
    if (TodoShape.isExactStoredWrite(input)) assert.isTrue(Result.isSuccess(strictStored(input)))
    // and the common case really is fast: a schema-valid plain input takes the fast path
    if (Result.isSuccess(strictStored(input))) assert.isTrue(TodoShape.isExactStoredWrite(JSON.parse(JSON.stringify(input))))
  }, { arbitrary: { runs: 300 } })
})
