/**
 * The todo item: the one schema that the tool's parameters, the `todo/write` event payload and the
 * `todos` projection state all derive from.
 *
 * @since 0.2.0
 */
import { Schema } from "effect"

/**
 * A step's status.
 *
 * @since 0.2.0
 * @category schemas
 */
export const Status = Schema.Literals(["pending", "in_progress", "completed"]).annotate({
  description: "The step's status"
})
/**
 * @since 0.2.0
 * @category schemas
 */
export type Status = typeof Status.Type

/**
 * One step of the plan. `evidence` is optional: one line naming the check that passed or the
 * artifact that proves a completed step done.
 *
 * @since 0.2.0
 * @category schemas
 */
export const Item = Schema.Struct({
  content: Schema.String.annotate({ description: "One concrete step" }),
  status: Status,
  evidence: Schema.optionalKey(Schema.String.annotate({ description: "Completed only: proof it is done" }))
})
/**
 * @since 0.2.0
 * @category schemas
 */
export type Item = typeof Item.Type

/**
 * An item as a call may send it: `evidence` may also be `null`, which means absent (OpenAI's
 * strict mode sends every key, so an optional one arrives as `null`).
 *
 * @since 0.2.0
 * @category schemas
 */
export const ItemArguments = Schema.Struct({
  ...Item.fields,
  evidence: Schema.optionalKey(Schema.NullOr(Item.fields.evidence.schema))
})

/**
 * @since 0.2.0
 * @category schemas
 */
export const List = Schema.Array(Item)
/**
 * @since 0.2.0
 * @category schemas
 */
export type List = typeof List.Type

/**
 * The tool's arguments and the `todo/write` payload: the complete list, which replaces the previous one.
 *
 * @since 0.2.0
 * @category schemas
 */
export const Write = Schema.Struct({
  todos: List.annotate({ description: "The ENTIRE list" })
})
/**
 * @since 0.2.0
 * @category schemas
 */
export type Write = typeof Write.Type

const NonBlank = Schema.Trimmed.check(Schema.isNonEmpty())

/**
 * What a stored item must look like under ANY policy: content and evidence already trimmed and
 * non-empty. Evidence is accepted whatever the deployment's evidence setting, so a log written with
 * evidence loads under a deployment without it.
 *
 * @since 0.2.0
 * @category schemas
 */
export const StoredItem = Schema.Struct({
  content: NonBlank,
  status: Status,
  evidence: Schema.optionalKey(NonBlank)
})

/**
 * A stored list: contents compared exactly for uniqueness (the write-time comparison is looser, and
 * may grow looser still; the durable one stays exact so old logs keep loading). The in_progress
 * count is deliberately absent, so a log written while parallel work was allowed still replays
 * after the policy tightens.
 *
 * @since 0.2.0
 * @category schemas
 */
export const StoredList = Schema.Array(StoredItem).check(
  Schema.makeFilter((todos: ReadonlyArray<{ readonly content: string }>) => {
    const seen = new Set<string>()
    for (const { content } of todos) {
      if (seen.has(content)) return `duplicate content ${JSON.stringify(content)}`
      seen.add(content)
    }
    return true
  }, { expected: "unique content" })
)

/**
 * A stored `todo/write` payload.
 *
 * @since 0.2.0
 * @category schemas
 */
export const StoredWrite = Schema.Struct({ todos: StoredList })

// Fast paths. Most arguments and stored payloads have exactly the schema's shape; these guards
// recognise that case without running the schema's general decoder. They only ever accept what the
// schema accepts (a property test holds them to it); anything else goes to the schema, which stays
// the authority and explains what is wrong.

const statuses: ReadonlySet<string> = new Set(Status.literals)

/**
 * `status` is one of the known statuses.
 *
 * @since 0.2.0
 * @category guards
 */
export const isStatus = (status: unknown): status is Status => typeof status === "string" && statuses.has(status)

const isPlainObject = (u: unknown): u is Record<string, unknown> => {
  if (typeof u !== "object" || u === null || Array.isArray(u)) return false
  const proto = Object.getPrototypeOf(u)
  return proto === Object.prototype || proto === null
}

/**
 * A plain object with no symbol keys (the schema counts enumerable ones as excess).
 *
 * @since 0.2.0
 * @category guards
 */
export const isPlainRecord = (u: unknown): u is Record<string, unknown> =>
  isPlainObject(u) && Object.getOwnPropertySymbols(u).length === 0

/** The own keys of `u` are `content`, `status` and at most `evidence`. */
const hasItemKeys = (u: Record<string, unknown>): boolean => {
  let n = 0
  for (const key in u) {
    if (key !== "content" && key !== "status" && key !== "evidence") return false
    n++
  }
  return n === (Object.hasOwn(u, "evidence") ? 3 : 2) && Object.hasOwn(u, "content") && Object.hasOwn(u, "status")
}

/**
 * `u` is exactly an `ItemArguments`: a plain object with string content, a known status and, if
 * present, string or `null` evidence. `false` means "ask the schema", not "invalid".
 *
 * @since 0.2.0
 * @category guards
 */
export const isExactItemArguments = (u: unknown): u is typeof ItemArguments.Type =>
  isPlainRecord(u) && hasItemKeys(u) && typeof u.content === "string" && isStatus(u.status) &&
  (u.evidence === undefined ? !Object.hasOwn(u, "evidence") : u.evidence === null || typeof u.evidence === "string")

/**
 * Marks a frozen payload that write-time validation accepted. Validation's rules imply the stored
 * shape (trimmed, non-empty, unique even when normalized, known statuses), and a frozen value can't
 * change afterwards, so the durable check needn't repeat the work. The mark is a non-enumerable
 * symbol: invisible to JSON, to iteration and to the schema.
 *
 * @since 0.2.0
 * @category guards
 */
export const markValidated = <A extends object>(payload: A): Readonly<A> =>
  Object.freeze(Object.defineProperty(payload, validated, { value: true }))

const validated = Symbol.for("effect-todo-write/Todo/validated")

/**
 * `u` has the type of a `todo/write` payload: an object whose `todos` are objects with string
 * content, a known status and string evidence if any. The cheap guard reads use on a checked log,
 * where the invariant has already held the payload to the full stored shape.
 *
 * @since 0.2.0
 * @category guards
 */
export const isWrite = (u: unknown): u is Write => {
  if (typeof u !== "object" || u === null) return false
  const todos = (u as { readonly todos?: unknown }).todos
  if (!Array.isArray(todos)) return false
  for (const item of todos) {
    if (typeof item !== "object" || item === null) return false
    const { content, status, evidence } = item as Record<string, unknown>
    if (typeof content !== "string" || !isStatus(status)) return false
    if (evidence !== undefined && typeof evidence !== "string") return false
  }
  return true
}

const isStoredText = (s: unknown): s is string => typeof s === "string" && s.length > 0 && s.trim() === s

/**
 * `u` is exactly a valid `StoredWrite`; `false` means "ask the schema", not "invalid". Symbol keys
 * aren't looked for: no backend stores them (JSON has none), so they can't make a stored value invalid.
 *
 * @since 0.2.0
 * @category guards
 */
export const isExactStoredWrite = (u: unknown): boolean => {
  if (typeof u === "object" && u !== null && (u as { [validated]?: boolean })[validated] === true && Object.isFrozen(u)) {
    return true
  }
  if (!isPlainObject(u)) return false
  for (const key in u) if (key !== "todos") return false
  const todos = u.todos
  if (!Array.isArray(todos)) return false
  // Short lists: comparing pairs is cheaper than hashing every content into a set.
  const seen = todos.length > 32 ? new Set<string>() : undefined
  const contents: Array<string> = []
  for (const item of todos) {
    if (!isPlainObject(item) || !hasItemKeys(item)) return false
    const { content, status, evidence } = item
    if (!isStoredText(content) || !isStatus(status)) return false
    if (Object.hasOwn(item, "evidence") && !isStoredText(evidence)) return false
    if (seen !== undefined) {
      if (seen.has(content)) return false
      seen.add(content)
    } else {
      if (contents.includes(content)) return false
      contents.push(content)
    }
  }
  return true
}

/**
 * How many items have each status.
 *
 * @since 0.2.0
 * @category models
 */
export const Counts = Schema.Struct({
  pending: Schema.Int,
  in_progress: Schema.Int,
  completed: Schema.Int
})
/**
 * @since 0.2.0
 * @category models
 */
export type Counts = typeof Counts.Type

/**
 * Counts a list's statuses.
 *
 * @since 0.2.0
 * @category models
 */
export const count = (todos: List): Counts => {
  let pending = 0
  let in_progress = 0
  let completed = 0
  for (const { status } of todos) {
    if (status === "pending") pending++
    else if (status === "in_progress") in_progress++
    else completed++
  }
  return { pending, in_progress, completed }
}

/**
 * One short hint when an accepted list still breaks the description's own advice: pending work
 * with nothing in_progress (every policy asks for the step being worked on to be marked).
 *
 * @since 0.2.0
 * @category models
 */
export const hint = (counts: Counts): string | undefined =>
  counts.pending > 0 && counts.in_progress === 0 ? "Hint: mark your current step in_progress." : undefined

/**
 * The one line the model reads after a successful write, with the hint, if any, after it.
 *
 * @since 0.2.0
 * @category models
 */
export const summary = (counts: Counts): string => {
  const line =
    `Updated todo list: ${counts.pending} pending, ${counts.in_progress} in progress, ${counts.completed} completed.`
  const advice = hint(counts)
  return advice === undefined ? line : `${line} ${advice}`
}
