/**
 * The todo item: the one schema that the tool's parameters, the `todo/write` event payload and the
 * `todos` projection state all derive from.
 */
import { Schema } from "effect"

export const Status = Schema.Literals(["pending", "in_progress", "completed"]).annotate({
  description: "The step's status"
})
export type Status = typeof Status.Type

export const Item = Schema.Struct({
  content: Schema.String.annotate({ description: "One concrete step" }),
  status: Status
})
export type Item = typeof Item.Type

export const List = Schema.Array(Item)
export type List = typeof List.Type

/** The tool's arguments and the `todo/write` payload: the complete list, which replaces the previous one. */
export const Write = Schema.Struct({
  todos: List.annotate({ description: "The ENTIRE list; replaces the previous one" })
})
export type Write = typeof Write.Type

/**
 * What a stored `todo/write` payload must look like under ANY policy: content already trimmed and
 * non-empty, compared exactly for uniqueness. The in_progress count is deliberately absent, so a log
 * written while parallel work was allowed still replays after the policy tightens.
 */
export const StoredItem = Schema.Struct({
  content: Schema.Trimmed.check(Schema.isNonEmpty()),
  status: Status
})

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

export const StoredWrite = Schema.Struct({ todos: StoredList })

// Fast paths. Most arguments and stored payloads have exactly the schema's shape; these guards
// recognise that case without running the schema's general decoder. They only ever accept what the
// schema accepts (a property test holds them to it); anything else goes to the schema, which stays
// the authority and explains what is wrong.

const statuses: ReadonlySet<string> = new Set(Status.literals)

const isPlainObject = (u: unknown): u is Record<string, unknown> => {
  if (typeof u !== "object" || u === null || Array.isArray(u)) return false
  const proto = Object.getPrototypeOf(u)
  return proto === Object.prototype || proto === null
}

/** A plain object with no symbol keys (the schema counts enumerable ones as excess). */
const isPlainRecord = (u: unknown): u is Record<string, unknown> =>
  isPlainObject(u) && Object.getOwnPropertySymbols(u).length === 0

/** `u` is an object whose own keys are exactly `a` and, if given, `b`. */
const hasExactly = (u: Record<string, unknown>, a: string, b?: string): boolean => {
  let n = 0
  for (const key in u) {
    if (key !== a && key !== b) return false
    n++
  }
  return n === (b === undefined ? 1 : 2) && Object.hasOwn(u, a) && (b === undefined || Object.hasOwn(u, b))
}

/** The items of arguments shaped exactly like `Write`, or `undefined` to let the schema decide. */
export const itemsOfExactWrite = (u: unknown): ReadonlyArray<Item> | undefined => {
  if (!isPlainRecord(u) || !hasExactly(u, "todos")) return undefined
  const todos = u.todos
  if (!Array.isArray(todos)) return undefined
  const items: Array<Item> = new Array(todos.length)
  for (let i = 0; i < todos.length; i++) {
    const item: unknown = todos[i]
    if (!isPlainRecord(item) || !hasExactly(item, "content", "status")) return undefined
    const { content, status } = item
    if (typeof content !== "string" || typeof status !== "string" || !statuses.has(status)) return undefined
    items[i] = { content, status: status as Status }
  }
  return items
}

/**
 * Marks a frozen payload that write-time validation accepted. Validation's rules imply the stored
 * shape (trimmed, non-empty, unique even when normalized, known statuses), and a frozen value can't
 * change afterwards, so the durable check needn't repeat the work. The mark is a non-enumerable
 * symbol: invisible to JSON, to iteration and to the schema.
 */
export const markValidated = <A extends object>(payload: A): Readonly<A> =>
  Object.freeze(Object.defineProperty(payload, validated, { value: true }))

const validated = Symbol.for("effect-todo-write/Todo/validated")

/**
 * `u` has the type of a `todo/write` payload: an object whose `todos` are objects with string
 * content and a known status. The cheap guard reads use on a checked log, where the invariant has
 * already held the payload to the full stored shape.
 */
export const isWrite = (u: unknown): u is Write => {
  if (typeof u !== "object" || u === null) return false
  const todos = (u as { readonly todos?: unknown }).todos
  if (!Array.isArray(todos)) return false
  for (const item of todos) {
    if (typeof item !== "object" || item === null) return false
    const { content, status } = item as { readonly content?: unknown; readonly status?: unknown }
    if (typeof content !== "string" || typeof status !== "string" || !statuses.has(status)) return false
  }
  return true
}

/**
 * `u` is exactly a valid `StoredWrite`; `false` means "ask the schema", not "invalid". Symbol keys
 * aren't looked for: no backend stores them (JSON has none), so they can't make a stored value invalid.
 */
export const isExactStoredWrite = (u: unknown): boolean => {
  if (typeof u === "object" && u !== null && (u as { [validated]?: boolean })[validated] === true && Object.isFrozen(u)) {
    return true
  }
  if (!isPlainObject(u) || !hasExactly(u, "todos")) return false
  const todos = u.todos
  if (!Array.isArray(todos)) return false
  // Short lists: comparing pairs is cheaper than hashing every content into a set.
  const seen = todos.length > 32 ? new Set<string>() : undefined
  for (let i = 0; i < todos.length; i++) {
    const item: unknown = todos[i]
    if (!isPlainObject(item) || !hasExactly(item, "content", "status")) return false
    const { content, status } = item
    if (typeof content !== "string" || typeof status !== "string" || !statuses.has(status)) return false
    if (content.length === 0 || content.trim() !== content) return false
    if (seen !== undefined) {
      if (seen.has(content)) return false
      seen.add(content)
    } else {
      for (let j = 0; j < i; j++) if ((todos[j] as Item).content === content) return false
    }
  }
  return true
}

export const Counts = Schema.Struct({
  pending: Schema.Int,
  in_progress: Schema.Int,
  completed: Schema.Int
})
export type Counts = typeof Counts.Type

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

/** The one line the model reads after a successful write. */
export const summary = (counts: Counts): string =>
  `Updated todo list: ${counts.pending} pending, ${counts.in_progress} in progress, ${counts.completed} completed.`
