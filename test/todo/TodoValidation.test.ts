import { assert, describe, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import * as TodoEvents from "../../src/todo/TodoEvents.ts"
import * as Todo from "../../src/todo/Todo.ts"
import * as TodoPolicy from "../../src/todo/TodoPolicy.ts"
import * as TodoValidation from "../../src/todo/TodoValidation.ts"
import { TodoValidationError, ViolationCode } from "../../src/todo/TodoWriteError.ts"

const single: TodoPolicy.Options = {
  allowParallelInProgress: false,
  maxItems: TodoPolicy.defaultMaxItems,
  maxContentLength: TodoPolicy.defaultMaxContentLength
}
const parallel: TodoPolicy.Options = { ...single, allowParallelInProgress: true }

const violations = (policy: TodoPolicy.Options, input: unknown) => {
  const result = TodoValidation.validate(policy, input)
  assert.isTrue(Result.isFailure(result), "expected the input to be rejected")
  return Result.isFailure(result) ? result.failure.violations.map((v) => ({ code: v.code, path: v.path })) : []
}

describe("TodoValidation", () => {
  it("accepts a list and answers with content trimmed", () => {
    const result = TodoValidation.validate(single, {
      todos: [{ content: "  Write tests ", status: "in_progress" }, { content: "Ship\t", status: "pending" }]
    })
    assert.deepStrictEqual(Result.getOrThrow(result), [
      { content: "Write tests", status: "in_progress" },
      { content: "Ship", status: "pending" }
    ])
  })

  it("accepts an empty list", () => {
    assert.deepStrictEqual(Result.getOrThrow(TodoValidation.validate(single, { todos: [] })), [])
  })

  it("rejects empty and whitespace-only content", () => {
    assert.deepStrictEqual(violations(single, { todos: [{ content: "", status: "pending" }, { content: " \n\t", status: "pending" }] }), [
      { code: "empty_content", path: ["todos", 0, "content"] },
      { code: "empty_content", path: ["todos", 1, "content"] }
    ])
  })

  it("rejects exact and normalized duplicates", () => {
    assert.deepStrictEqual(
      violations(single, {
        todos: [
          { content: "Fix X", status: "pending" },
          { content: "Fix X", status: "completed" },
          { content: "fix  x", status: "pending" },
          { content: " FIX\u00a0X ", status: "pending" },
          { content: "ｆｉｘ x", status: "pending" }
        ]
      }),
      [1, 2, 3, 4].map((i) => ({ code: "duplicate_content" as const, path: ["todos", i, "content"] }))
    )
  })

  it("rejects two in_progress items under single-active, naming the count, and accepts them under parallel", () => {
    const input = {
      todos: [
        { content: "a", status: "in_progress" },
        { content: "b", status: "in_progress" },
        { content: "c", status: "in_progress" }
      ]
    }
    const result = TodoValidation.validate(single, input)
    assert.isTrue(Result.isFailure(result))
    if (Result.isFailure(result)) {
      assert.strictEqual(result.failure.violations[0].code, "too_many_in_progress")
      assert.include(result.failure.violations[0].message, "3 items are in_progress")
    }
    assert.isTrue(Result.isSuccess(TodoValidation.validate(parallel, input)))
  })

  it("enforces the size bounds of the policy", () => {
    const small = { ...single, maxItems: 2, maxContentLength: 5 }
    assert.deepStrictEqual(
      violations(small, {
        todos: [{ content: "123456", status: "pending" }, { content: "b", status: "pending" }, { content: "c", status: "pending" }]
      }),
      [{ code: "too_many_items", path: ["todos"] }, { code: "content_too_long", path: ["todos", 0, "content"] }]
    )
    // bounds count characters (code points) of the trimmed content, not UTF-16 units or padding
    assert.isTrue(Result.isSuccess(TodoValidation.validate(small, { todos: [{ content: "  😀😀😀😀😀  ", status: "pending" }] })))
  })

  it("reports shape errors from the schema with their paths", () => {
    assert.deepStrictEqual(violations(single, { todos: "not a list" }), [{ code: "invalid_type", path: ["todos"] }])
    assert.deepStrictEqual(violations(single, {}), [{ code: "missing_key", path: ["todos"] }])
    assert.deepStrictEqual(violations(single, null), [{ code: "invalid_type", path: [] }])
    assert.deepStrictEqual(violations(single, { todos: [{ content: "a", status: "done" }] }), [
      { code: "invalid_status", path: ["todos", 0, "status"] }
    ])
    assert.deepStrictEqual(violations(single, { todos: [{ content: 7, status: "pending" }] }), [
      { code: "invalid_type", path: ["todos", 0, "content"] }
    ])
    assert.deepStrictEqual(violations(single, { todos: [{ content: "a" }] }), [
      { code: "missing_key", path: ["todos", 0, "status"] }
    ])
  })

  it("rejects excess keys in an item and at the top level, never strips them", () => {
    assert.deepStrictEqual(violations(single, { todos: [{ content: "a", status: "pending", id: 1 }], merge: true }), [
      { code: "excess_property", path: ["merge"] },
      { code: "excess_property", path: ["todos", 0, "id"] }
    ])
  })

  it("reports several violations together, in one message", () => {
    const result = TodoValidation.validate(single, {
      todos: [
        { content: " ", status: "in_progress" },
        { content: "a", status: "in_progress" },
        { content: "A", status: "pending" }
      ]
    })
    assert.isTrue(Result.isFailure(result))
    if (Result.isFailure(result)) {
      const error = result.failure
      assert.deepStrictEqual(error.violations.map((v) => v.code), ["empty_content", "duplicate_content", "too_many_in_progress"])
      assert.include(error.message, "these 3 problems")
      assert.include(error.message, "todos[0].content")
      assert.include(error.message, "send the ENTIRE list again")
    }
  })

  // Inputs near the valid shape, so that both acceptances and every kind of rejection are generated.
  const Content = Schema.Union([Schema.String, Schema.Literals(["a", " a", "A ", "b", "fix  x", "Fix X", "", " "])])
  const NearItem = Schema.Struct({
    content: Content,
    status: Schema.Union([Todo.Status, Schema.String])
  })
  const NearArgs = Schema.Struct({ todos: Schema.Array(NearItem).check(Schema.isMaxLength(6)) })
  const AnyArgs = Schema.Union([NearArgs, Schema.Json])

  it.prop("any input is either a canonical list or a coded error", { input: AnyArgs }, ({ input }) => {
    for (const policy of [single, parallel]) {
      const result = TodoValidation.validate(policy, input)
      if (Result.isSuccess(result)) {
        // every accepted list satisfies the durable invariant, and re-validation is the identity
        assert.strictEqual(TodoEvents.writeInvariant.check({ todos: result.success }), undefined)
        assert.deepStrictEqual(Result.getOrThrow(TodoValidation.validate(policy, { todos: result.success })), result.success)
      } else {
        assert.instanceOf(result.failure, TodoValidationError)
        assert.isAbove(result.failure.violations.length, 0)
        for (const v of result.failure.violations) assert.isTrue(Schema.is(ViolationCode)(v.code))
      }
    }
  })

  it.prop(
    "the normalized form's fast path agrees with NFKC, case folding and whitespace collapsing",
    { s: Schema.Union([Schema.String, Schema.Literals(["Fix X", "fix  x", "A\tb", "ﬁ x", "Ǆ", " a  b "])]) },
    ({ s }) => TodoValidation.normalizeContent(s) === s.normalize("NFKC").toLowerCase().replace(/\s+/g, " ")
  )
})
