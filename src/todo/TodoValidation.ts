/**
 * The write-time rules of `todo_write`, which follow the deployment's policy: the arguments decode
 * strictly (closed objects, known statuses), then content is trimmed, must be non-empty, within the
 * size bounds and unique (compared in a normalized form), and at most one item is in_progress unless
 * the policy allows parallel work. All problems are collected, so one reply lists them all.
 */
import { Result, Schema, SchemaIssue } from "effect"
import * as Todo from "./Todo.ts"
import type { Options as Policy } from "./TodoPolicy.ts"
import { TodoValidationError, type Violation, type ViolationCode } from "./TodoWriteError.ts"

const decodeWrite = Schema.decodeUnknownResult(Todo.Write, { onExcessProperty: "error", errors: "all" })
const formatLeaf = SchemaIssue.makeFormatterDefault()

type Path = ReadonlyArray<string | number>

const pathOf = (path: ReadonlyArray<PropertyKey>): Path =>
  path.map((key) => typeof key === "number" ? key : String(key))

const shapeCode = (issue: SchemaIssue.Issue, path: Path): ViolationCode => {
  switch (issue._tag) {
    case "MissingKey":
      return "missing_key"
    case "UnexpectedKey":
      return "excess_property"
    case "InvalidType":
    case "AnyOf":
      return path.at(-1) === "status" ? "invalid_status" : "invalid_type"
    default:
      return "invalid_value"
  }
}

/** Flattens a schema issue tree into one violation per leaf, each with its path. */
const shapeViolations = (issue: SchemaIssue.Issue, path: Path, out: Array<Violation>): void => {
  switch (issue._tag) {
    case "Pointer":
      return shapeViolations(issue.issue, [...path, ...pathOf(issue.path)], out)
    case "Composite":
      for (const inner of issue.issues) shapeViolations(inner, path, out)
      return
    case "Encoding":
      return shapeViolations(issue.issue, path, out)
    case "UnexpectedKey":
      out.push({ code: "excess_property", path, message: "unknown property: items hold only content and status" })
      return
    default: {
      const code = shapeCode(issue, path)
      out.push({ code, path, message: formatLeaf(issue) })
    }
  }
}

/**
 * The form in which two contents count as the same: Unicode NFKC, case-folded, inner whitespace
 * collapsed, so `Fix X` and `fix  x` collide.
 */
export const normalizeContent = (content: string): string =>
  // Plain ASCII with single spaces, the common case, is already NFKC and collapsed.
  isPlain.test(content)
    ? content.toLowerCase()
    : content.normalize("NFKC").toLowerCase().replace(/\s+/g, " ")

const isPlain = /^(?:[\x21-\x7e]| (?! ))*$/

const codePointLength = (s: string): number => {
  let n = 0
  for (const _ of s) n++
  return n
}

/** The canonical list (content trimmed), or every rule the arguments break. */
export const validate = (policy: Policy, input: unknown): Result.Result<Todo.List, TodoValidationError> => {
  const violations: Array<Violation> = []
  let items = Todo.itemsOfExactWrite(input)
  if (items === undefined) {
    const decoded = decodeWrite(input)
    if (Result.isFailure(decoded)) {
      shapeViolations(decoded.failure.issue, [], violations)
      return Result.fail(TodoValidationError.fromViolations(violations as [Violation, ...Array<Violation>]))
    }
    items = decoded.success.todos
  }
  if (items.length > policy.maxItems) {
    violations.push({
      code: "too_many_items",
      path: ["todos"],
      message: `${items.length} items; at most ${policy.maxItems} are allowed`
    })
  }
  const todos: Array<Todo.Item> = new Array(items.length)
  const firstIndexOf = new Map<string, number>()
  let inProgress = 0
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!
    const content = item.content.trim()
    // Frozen: the list is logged as it is, without a defensive copy.
    todos[i] = Object.freeze(content === item.content ? item : { content, status: item.status })
    if (item.status === "in_progress") inProgress++
    if (content.length === 0) {
      violations.push({ code: "empty_content", path: ["todos", i, "content"], message: "content is empty" })
      continue
    }
    if (content.length > policy.maxContentLength && codePointLength(content) > policy.maxContentLength) {
      violations.push({
        code: "content_too_long",
        path: ["todos", i, "content"],
        message: `content has ${codePointLength(content)} characters; at most ${policy.maxContentLength} are allowed`
      })
    }
    const key = normalizeContent(content)
    const first = firstIndexOf.get(key)
    if (first === undefined) {
      firstIndexOf.set(key, i)
    } else {
      violations.push({
        code: "duplicate_content",
        path: ["todos", i, "content"],
        message: `same content as todos[${first}] (${JSON.stringify(todos[first]!.content)}); each item must be distinct`
      })
    }
  }
  if (inProgress > 1 && !policy.allowParallelInProgress) {
    violations.push({
      code: "too_many_in_progress",
      path: ["todos"],
      message: `${inProgress} items are in_progress; at most one may be in_progress at a time`
    })
  }
  return violations.length === 0
    ? Result.succeed(Object.freeze(todos))
    : Result.fail(TodoValidationError.fromViolations(violations as [Violation, ...Array<Violation>]))
}
