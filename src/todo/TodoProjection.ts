/**
 * The current todo list of a session, as a projection of its log.
 *
 * @since 0.2.0
 */
import * as Schema from "effect/Schema"
import * as SessionEvent from "../log/SessionEvent.ts"
import * as Projection from "../projection/Projection.ts"
import * as Todo from "./Todo.ts"
import * as TodoEvents from "./TodoEvents.ts"

/**
 * The current todo list. `todo/write` replaces it (last write wins); `turn/start` clears it to
 * `null` (a plan belongs to a turn); everything else, `turn/end` included, leaves it as it is, so a
 * finished checklist stays visible. `null` (no plan this turn) and `[]` (an empty list was written)
 * are different states. Folded over a `CheckedSessionLog`, whose invariant guarantees every
 * `todo/write` payload has the stored shape. Version 2: the state carries items' `evidence`, so a
 * checkpoint folded by version 1 (which dropped nothing, but predates evidence) is refolded, never
 * trusted.
 *
 * @since 0.2.0
 * @category projections
 */
export const todos: Projection.Projection<Todo.List | null> = Projection.make({
  key: "todos",
  version: 2,
  initial: null,
  schema: Schema.NullOr(Todo.StoredList),
  step: (state, entry) => {
    if (entry.type === TodoEvents.turnStart.type) return null
    return SessionEvent.payload(TodoEvents.write, entry)?.todos ?? state
  }
})
