/**
 * What the model reads when todo_write rejects a list: each violation's code, path and message,
 * exactly, and the bounds at their edges. (Written to kill the mutants StrykerJS found surviving in
 * TodoValidation: see scratch/mutation/README.md.)
 */
import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import * as TodoPolicy from "../../src/todo/TodoPolicy.ts"
import * as TodoValidation from "../../src/todo/TodoValidation.ts"

const policy = (options: Partial<TodoPolicy.Options> = {}): TodoPolicy.Options => ({
  allowParallelInProgress: false,
  requireCompletedEvidence: false,
  maxItems: TodoPolicy.defaultMaxItems,
  maxContentLength: TodoPolicy.defaultMaxContentLength,
  ...options
})

const rejected = (options: TodoPolicy.Options, input: unknown) => {
  const result = TodoValidation.validate(options, input)
  assert.isTrue(Result.isFailure(result), "expected the input to be rejected")
  return Result.isFailure(result) ? result.failure.violations.map(({ code, path, message }) => ({ code, path, message })) : []
}

const item = (content: string, status = "pending") => ({ content, status })

describe("TodoValidation messages", () => {
  it("every shape problem is reported, not only the first", () => {
    const violations = rejected(policy(), { todos: [item("a", "done"), { status: "pending" }] })
    assert.deepStrictEqual(violations.map(({ code, path }) => ({ code, path })), [
      { code: "invalid_status", path: ["todos", 0, "status"] },
      { code: "missing_key", path: ["todos", 1, "content"] }
    ])
  })

  it("an excess key says what items hold", () => {
    assert.deepStrictEqual(rejected(policy(), { todos: [{ ...item("a"), id: 1 }] }), [
      { code: "excess_property", path: ["todos", 0, "id"], message: "unknown property: items hold only content, status and evidence" }
    ])
  })

  it("too many items: the count and the bound; exactly the bound is accepted", () => {
    const three = [item("a"), item("b"), item("c")]
    assert.deepStrictEqual(rejected(policy({ maxItems: 2 }), { todos: three }), [
      { code: "too_many_items", path: ["todos"], message: "3 items; at most 2 are allowed: merge or drop steps (items after todos[1] were not checked)" }
    ])
    assert.isTrue(Result.isSuccess(TodoValidation.validate(policy({ maxItems: 3 }), { todos: three })))
  })

  it("empty content", () => {
    assert.deepStrictEqual(rejected(policy(), { todos: [item("  ")] }), [
      { code: "empty_content", path: ["todos", 0, "content"], message: "content is empty" }
    ])
  })

  it("content too long: counted in characters (code points), not UTF-16 units; exactly the bound is accepted", () => {
    assert.deepStrictEqual(rejected(policy({ maxContentLength: 5 }), { todos: [item("abcdef")] }), [
      { code: "content_too_long", path: ["todos", 0, "content"], message: "content has more than 5 characters, the most allowed: shorten it" }
    ])
    assert.isTrue(Result.isSuccess(TodoValidation.validate(policy({ maxContentLength: 6 }), { todos: [item("abcdef")] })))
    // Three emoji are six UTF-16 units but three characters.
    assert.isTrue(Result.isSuccess(TodoValidation.validate(policy({ maxContentLength: 3 }), { todos: [item("😀😀😀")] })))
    assert.deepStrictEqual(rejected(policy({ maxContentLength: 2 }), { todos: [item("😀😀😀")] }), [
      { code: "content_too_long", path: ["todos", 0, "content"], message: "content has more than 2 characters, the most allowed: shorten it" }
    ])
  })

  it("a duplicate names the item it repeats, as written (trimmed)", () => {
    assert.deepStrictEqual(rejected(policy(), { todos: [item(" Fix X "), item("fix  x")] }), [
      {
        code: "duplicate_content",
        path: ["todos", 1, "content"],
        message: `same content as todos[0] ("Fix X"); each item must be distinct`
      }
    ])
  })

  it("too many in_progress: the count, on the list", () => {
    assert.deepStrictEqual(rejected(policy(), { todos: [item("a", "in_progress"), item("b", "in_progress"), item("c", "in_progress")] }), [
      { code: "too_many_in_progress", path: ["todos"], message:
        "todos[0], todos[1] and todos[2] are all in_progress; only one may be: keep one in_progress and set the others to pending or completed" }
    ])
  })
})
