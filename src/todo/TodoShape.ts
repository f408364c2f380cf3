/**
 * Exact-shape guards for todo payloads: the fast paths. Most arguments and stored payloads have
 * exactly the schema's shape; these guards recognise that case without running the schema's general
 * decoder. They only ever accept what the schema accepts (a property test holds them to it);
 * anything else goes to the schema, which stays the authority and explains what is wrong. They live
 * beside `Todo`, the types they protect, and `markValidated` is named for the one trust it carries.
 *
 * @since 0.2.0
 */
import * as Todo from "./Todo.ts"

const statuses: ReadonlySet<string> = new Set(Todo.Status.literals)

/**
 * `status` is one of the known statuses.
 *
 * @since 0.2.0
 * @category guards
 */
export const isStatus = (status: unknown): status is Todo.Status => typeof status === "string" && statuses.has(status)

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
export const isExactItemArguments = (u: unknown): u is typeof Todo.ItemArguments.Type =>
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
export const isWrite = (u: unknown): u is Todo.Write => {
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

