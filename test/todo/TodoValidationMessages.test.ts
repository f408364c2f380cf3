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

  // Second pass (2026-12-01): the messages and orders the rewrite's survivors showed unasserted.

  it("content of only invisible characters says so, apart from empty content", () => {
    assert.deepStrictEqual(rejected(policy(), { todos: [item("\u200b\u200b")] }), [
      { code: "empty_content", path: ["todos", 0, "content"], message: "content shows nothing: it holds only invisible characters" }
    ])
  })

  it("an unpaired surrogate and a control character are named, each in its own violation", () => {
    const violations = rejected(policy(), { todos: [item("a\ud800b\u0007")] })
    assert.deepStrictEqual(violations.map(({ code, path }) => ({ code, path })), [
      { code: "invalid_unicode", path: ["todos", 0, "content"] },
      { code: "control_character", path: ["todos", 0, "content"] }
    ])
    assert.match(violations[0]!.message, /^content contains .*D800.*, an unpaired surrogate: not valid text$/)
    assert.match(violations[1]!.message, /^content contains .*0007.*, a control character: write one line of plain text$/)
    const evidence = rejected(policy(), { todos: [{ ...item("a", "completed"), evidence: "ok\udc00" }] })
    assert.deepStrictEqual(evidence.map(({ code, path }) => ({ code, path })), [{ code: "invalid_unicode", path: ["todos", 0, "evidence"] }])
    assert.match(evidence[0]!.message, /^evidence contains .*DC00.*, an unpaired surrogate/)
  })

  it("evidence on an item that isn't completed names its status; a completed item without it, when required", () => {
    assert.deepStrictEqual(rejected(policy(), { todos: [{ ...item("a", "pending"), evidence: "ok" }] }), [
      {
        code: "evidence_not_completed",
        path: ["todos", 0, "evidence"],
        message: "evidence belongs only on a completed item; this one is pending: remove it, or mark the item completed"
      }
    ])
    assert.deepStrictEqual(rejected(policy({ requireCompletedEvidence: true }), { todos: [item("a", "completed")] }), [
      {
        code: "missing_evidence",
        path: ["todos", 0, "evidence"],
        message: "a completed item needs evidence: one line naming the check that passed or the artifact that proves it"
      }
    ])
  })

  it("evidence on an item whose status didn't decode is not judged against that status", () => {
    assert.deepStrictEqual(rejected(policy(), { todos: [{ ...item("a", "done"), evidence: "ok" }] }).map(({ code, path }) => ({ code, path })), [
      { code: "invalid_status", path: ["todos", 0, "status"] }
    ])
  })

  it("the rules run over the fields that decoded, whatever else is wrong with the item", () => {
    const violations = rejected(policy({ requireCompletedEvidence: true }), {
      todos: [{ content: 5, status: "pending", evidence: "  " }, { content: 5, status: "completed", evidence: "proof" }]
    })
    assert.deepStrictEqual(violations.map(({ code, path }) => ({ code, path })), [
      { code: "invalid_type", path: ["todos", 0, "content"] },
      { code: "empty_evidence", path: ["todos", 0, "evidence"] },
      { code: "evidence_not_completed", path: ["todos", 0, "evidence"] },
      // the evidence given is seen: not reported missing
      { code: "invalid_type", path: ["todos", 1, "content"] }
    ])
  })

  it("an item's problems come in the order of its keys as sent; a missing key's come last", () => {
    const violations = rejected(policy(), { todos: [{ evidence: "", status: "done" }] })
    assert.deepStrictEqual(violations.map(({ code, path }) => ({ code, path })), [
      { code: "empty_evidence", path: ["todos", 0, "evidence"] },
      { code: "invalid_status", path: ["todos", 0, "status"] },
      { code: "missing_key", path: ["todos", 0, "content"] }
    ])
  })

  it("too many in_progress: five are all named; past five, the first five and how many more", () => {
    const inProgress = (n: number) => Array.from({ length: n }, (_, i) => item(`step ${i}`, "in_progress"))
    assert.deepStrictEqual(rejected(policy(), { todos: inProgress(5) }).map((v) => v.message), [
      "todos[0], todos[1], todos[2], todos[3] and todos[4] are all in_progress; only one may be: keep one in_progress and set the others to pending or completed"
    ])
    assert.deepStrictEqual(rejected(policy(), { todos: inProgress(7) }).map((v) => v.message), [
      "todos[0], todos[1], todos[2], todos[3], todos[4] and 2 more are all in_progress; only one may be: keep one in_progress and set the others to pending or completed"
    ])
    assert.deepStrictEqual(rejected(policy(), { todos: inProgress(2) }).map((v) => v.message), [
      "todos[0] and todos[1] are both in_progress; only one may be: keep one in_progress and set the others to pending or completed"
    ])
  })

  it("arguments that aren't an object, todos that isn't an array, todos missing", () => {
    assert.deepStrictEqual(rejected(policy(), [1]), [
      { code: "invalid_type", path: [], message: `the arguments must be an object {"todos": [...]}; got an array` }
    ])
    assert.deepStrictEqual(rejected(policy(), { todos: 5 }), [
      { code: "invalid_type", path: ["todos"], message: "todos must be an array of items; got 5" }
    ])
    assert.deepStrictEqual(rejected(policy(), {}), [
      { code: "missing_key", path: ["todos"], message: "todos is missing: send the ENTIRE list as todos" }
    ])
  })

  it("arguments over the byte bound: refused as a whole; too many items is said only past the bound", () => {
    const small = policy({ maxItems: 2, maxContentLength: 10 })
    const bound = TodoValidation.maxArgumentBytes(small)
    const big = "x".repeat(bound)
    assert.deepStrictEqual(rejected(small, { todos: [item(big), item("b")] }), [
      {
        code: "arguments_too_large",
        path: [],
        message: `the arguments exceed ${bound} bytes, more than any valid list needs (2 items of 10 characters at most); nothing else was checked`
      }
    ])
    assert.deepStrictEqual(rejected(small, { todos: [item(big), item("b"), item("c")] }).map(({ code }) => code), [
      "too_many_items",
      "arguments_too_large"
    ])
  })

  it("an item that isn't a plain object (another prototype) is decoded by the schema, and accepted", () => {
    const result = TodoValidation.validate(policy(), { todos: [Object.assign(Object.create({ inherited: true }), item(" a "))] })
    assert.deepStrictEqual(Result.getOrThrow(result), [{ content: "a", status: "pending" }])
  })
})
