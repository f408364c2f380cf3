import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import * as Projection from "../src/Projection.ts"
import * as Todo from "../src/Todo.ts"

describe("Todo", () => {
  it("derives the payload, the stored shape and the projection state from one item schema", () => {
    assert.strictEqual(Todo.Write.fields.todos.value, Todo.Item)
    assert.strictEqual(Todo.StoredItem.fields.status, Todo.Item.fields.status)
    assert.isTrue(Schema.is(Projection.todos.schema)(null))
    assert.isTrue(Schema.is(Projection.todos.schema)([{ content: "a", status: "pending" }]))
    assert.isFalse(Schema.is(Projection.todos.schema)([{ content: " a", status: "pending" }]))
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
})
