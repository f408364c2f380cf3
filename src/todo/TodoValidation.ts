/**
 * The write-time rules of `todo_write`, which follow the deployment's policy. The arguments' size is
 * bounded first (a call over the bound is refused before anything else is read); then each item
 * decodes on its own (closed objects, known statuses), and the value rules run over every field
 * that decoded: content is trimmed, must show something, be one line of plain text within the size
 * bound and unique (compared in a folded form); evidence likewise, and only on completed items (on
 * every one when the policy requires it); at most one item is in_progress unless the policy allows
 * parallel work. Shape and rule problems are reported together, in argument order, in one reply.
 *
 * @since 0.2.0
 */
import * as Arr from "effect/Array"
import * as Result from "effect/Result"
import * as Todo from "./Todo.ts"
import type { Options as Policy } from "./TodoPolicy.ts"
import { fitsIn } from "./internal/jsonSize.ts"
import { decodeItem, describe, isObject, shapeViolations } from "./internal/itemShape.ts"
import * as TodoText from "./TodoText.ts"
import { TodoValidationError, type Violation } from "./TodoWriteError.ts"
import * as TodoShape from "./TodoShape.ts"

type Path = ReadonlyArray<string | number>

/**
 * The most bytes the arguments may take as UTF-8 JSON, derived from the item bounds: the largest
 * valid call is `maxItems` items whose content and evidence hold `maxContentLength` characters of up
 * to 4 bytes each, plus keys, status and punctuation; twice that leaves room for padding that
 * trimming removes and for a near miss to be answered in detail.
 *
 * @since 0.2.0
 * @category bounds
 */
export const maxArgumentBytes = (policy: Pick<Policy, "maxItems" | "maxContentLength">): number =>
  2 * policy.maxItems * (8 * policy.maxContentLength + 96) + 1024

/**
 * Checks one text field (content or evidence) that decoded; answers it trimmed, and whether it can be
 * compared with others (it shows something and is within the bound).
 */
const checkText = (
  policy: Policy,
  field: "content" | "evidence",
  value: string,
  index: number,
  out: Array<Violation>
): { readonly text: string; readonly comparable: boolean } => {
  const text = value.trim()
  // The path is built only for a violation.
  const path = () => ["todos", index, field]
  // Counting stops just past the bound: nothing else looks at a text that is over it.
  if (text.length > policy.maxContentLength && TodoText.length(text, policy.maxContentLength) > policy.maxContentLength) {
    out.push({
      code: field === "content" ? "content_too_long" : "evidence_too_long",
      path: path(),
      message: `${field} has more than ${policy.maxContentLength} characters, the most allowed: shorten it`
    })
    return { text, comparable: false }
  }
  if (TodoText.isBlank(text)) {
    out.push({
      code: field === "content" ? "empty_content" : "empty_evidence",
      path: path(),
      message: text.length === 0
        ? `${field} is empty`
        : `${field} shows nothing: it holds only invisible characters`
    })
    return { text, comparable: false }
  }
  const surrogate = TodoText.unpairedSurrogate(text)
  if (surrogate !== undefined) {
    out.push({ code: "invalid_unicode", path: path(), message: `${field} contains ${surrogate}, an unpaired surrogate: not valid text` })
  }
  const unprintable = TodoText.unprintableCharacter(text)
  if (unprintable !== undefined) {
    out.push({
      code: "control_character",
      path: path(),
      message: `${field} contains ${unprintable}, a control character: write one line of plain text`
    })
  }
  return { text, comparable: true }
}

interface ListState {
  readonly firstByKey: Map<string, number>
  readonly contents: Array<string>
  readonly inProgress: Array<number>
}

/** Checks the item at index `i`; answers it canonical (trimmed, frozen) if it passes. */
const checkItem = (policy: Policy, raw: unknown, i: number, state: ListState, out: Array<Violation>): Todo.Item | undefined => {
  const at: Path = ["todos", i]
  const found: Array<Violation> = []
  let fields: { readonly content?: unknown; readonly status?: unknown; readonly evidence?: unknown } = {}
  let failed: ReadonlySet<unknown> = new Set()
  if (TodoShape.isExactItemArguments(raw)) {
    fields = raw
  } else {
    const decoded = decodeItem(raw)
    if (Result.isSuccess(decoded)) {
      fields = decoded.success
    } else {
      shapeViolations(decoded.failure.issue, raw, at, [], found)
      if (isObject(raw)) {
        // Rules run over every field that decoded, whatever else is wrong with the item.
        failed = new Set(found.map((v) => v.path[2]))
        fields = {
          ...(failed.has("content") ? {} : { content: raw.content }),
          ...(failed.has("status") ? {} : { status: raw.status }),
          ...(failed.has("evidence") ? {} : { evidence: raw.evidence })
        }
      }
    }
  }
  const status = TodoShape.isStatus(fields.status) ? fields.status : undefined
  if (status === "in_progress") state.inProgress.push(i)
  let content: string | undefined
  if (typeof fields.content === "string") {
    const checked = checkText(policy, "content", fields.content, i, found)
    content = checked.text
    if (checked.comparable) {
      const key = TodoText.comparisonKey(content)
      const first = state.firstByKey.get(key)
      if (first === undefined) {
        state.firstByKey.set(key, i)
      } else {
        found.push({
          code: "duplicate_content",
          path: [...at, "content"],
          message: `same content as todos[${first}] (${TodoText.quote(state.contents[first]!)}); each item must be distinct`
        })
      }
    }
    state.contents[i] = content
  }
  let evidence: string | undefined
  if (typeof fields.evidence === "string") {
    evidence = checkText(policy, "evidence", fields.evidence, i, found).text
    if (status !== undefined && status !== "completed") {
      found.push({
        code: "evidence_not_completed",
        path: [...at, "evidence"],
        message: `evidence belongs only on a completed item; this one is ${status}: remove it, or mark the item completed`
      })
    }
  } else if (status === "completed" && policy.requireCompletedEvidence && !failed.has("evidence")) {
    found.push({
      code: "missing_evidence",
      path: [...at, "evidence"],
      message: "a completed item needs evidence: one line naming the check that passed or the artifact that proves it"
    })
  }
  if (found.length > 0) {
    // In argument order: the item itself, then its keys in the order they were sent.
    const keys = isObject(raw) ? Object.keys(raw) : []
    const rank = (v: Violation) => {
      const key = v.path[2]
      if (key === undefined) return -1
      const k = keys.indexOf(String(key))
      return k === -1 ? keys.length : k
    }
    for (const v of found.length > 1 ? found.sort((a, b) => rank(a) - rank(b)) : found) out.push(v)
    return undefined
  }
  // No violation means both decoded; frozen, the list is logged as it is, without a defensive copy.
  if (content === undefined || status === undefined) return undefined
  return Object.freeze(evidence === undefined ? { content, status } : { content, status, evidence })
}

const tooManyItems = (n: number, policy: Policy): Violation => ({
  code: "too_many_items",
  path: ["todos"],
  message: `${n} items; at most ${policy.maxItems} are allowed: merge or drop steps (items after todos[${
    policy.maxItems - 1
  }] were not checked)`
})

/** `todos[1] and todos[3]`, or the first few of many and how many more. */
const nameIndexes = (indexes: ReadonlyArray<number>): string => {
  const names = indexes.slice(0, 5).map((i) => `todos[${i}]`)
  if (indexes.length > 5) return `${names.join(", ")} and ${indexes.length - 5} more`
  return `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`
}

/** Checks the list; answers it canonical if every item passes (the caller knows from `out`). */
const checkList = (policy: Policy, value: unknown, out: Array<Violation>): Array<Todo.Item> => {
  if (!Array.isArray(value)) {
    out.push({ code: "invalid_type", path: ["todos"], message: `todos must be an array of items; got ${describe(value)}` })
    return []
  }
  if (value.length > policy.maxItems) out.push(tooManyItems(value.length, policy))
  // Past the bound, items aren't examined: the list must shrink anyway, and the work stays bounded.
  const examined = Math.min(value.length, policy.maxItems)
  const todos: Array<Todo.Item> = new Array(examined)
  const state: ListState = { firstByKey: new Map(), contents: [], inProgress: [] }
  for (let i = 0; i < examined; i++) {
    const item = checkItem(policy, value[i], i, state, out)
    if (item !== undefined) todos[i] = item
  }
  if (state.inProgress.length > 1 && !policy.allowParallelInProgress) {
    out.push({
      code: "too_many_in_progress",
      path: ["todos"],
      message: `${nameIndexes(state.inProgress)} are ${
        state.inProgress.length === 2 ? "both" : "all"
      } in_progress; only one may be: keep one in_progress and set the others to pending or completed`
    })
  }
  return todos
}

const conclude = <A>(violations: Array<Violation>, value: A): Result.Result<A, TodoValidationError> =>
  Arr.isArrayNonEmpty(violations) ? Result.fail(TodoValidationError.fromViolations(violations)) : Result.succeed(value)

/**
 * The canonical list (content and evidence trimmed, `null` evidence dropped), or every rule the
 * arguments break.
 *
 * @since 0.2.0
 * @category validation
 */
export const validate = (policy: Policy, input: unknown): Result.Result<Todo.List, TodoValidationError> => {
  const violations: Array<Violation> = []
  const bound = maxArgumentBytes(policy)
  if (!fitsIn(input, bound)) {
    const todos = isObject(input) ? input.todos : undefined
    if (Array.isArray(todos) && todos.length > policy.maxItems) violations.push(tooManyItems(todos.length, policy))
    violations.push({
      code: "arguments_too_large",
      path: [],
      message: `the arguments exceed ${bound} bytes, more than any valid list needs (${policy.maxItems} items of ${policy.maxContentLength} characters at most); nothing else was checked`
    })
    return conclude<Todo.List>(violations, [])
  }
  if (!isObject(input)) {
    violations.push({ code: "invalid_type", path: [], message: `the arguments must be an object {"todos": [...]}; got ${describe(input)}` })
    return conclude<Todo.List>(violations, [])
  }
  let todos: Array<Todo.Item> = []
  let sawTodos = false
  for (const key of Object.keys(input)) {
    if (key === "todos") {
      sawTodos = true
      todos = checkList(policy, input.todos, violations)
    } else {
      violations.push({ code: "excess_property", path: [key], message: "unknown property: the arguments hold only todos" })
    }
  }
  if (!sawTodos) {
    violations.push({ code: "missing_key", path: ["todos"], message: "todos is missing: send the ENTIRE list as todos" })
  }
  return conclude<Todo.List>(violations, Object.freeze(todos))
}
