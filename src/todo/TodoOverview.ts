/**
 * A session at a glance, as a projection of its log: the current list (folded by the `todos`
 * projection's own step, so the two can't disagree), how many events the session holds, when the
 * list was last written and when anything was last appended. What live views show per session.
 *
 * @since 0.2.0
 */
import * as Schema from "effect/Schema"
import * as Projection from "../projection/Projection.ts"
import * as Todo from "./Todo.ts"
import * as TodoEvents from "./TodoEvents.ts"
import * as TodoProjection from "./TodoProjection.ts"

/**
 * The state: the list (`null`: no plan in this turn), the number of events (the next seq), the time
 * of the last `todo/write` and of the last event of any type (`null` before there is one).
 *
 * @since 0.2.0
 * @category models
 */
export const Overview = Schema.Struct({
  todos: Schema.NullOr(Todo.StoredList),
  events: Schema.Int,
  lastWrite: Schema.NullOr(Schema.Int),
  lastActivity: Schema.NullOr(Schema.Int)
})

/**
 * @since 0.2.0
 * @category models
 */
export type Overview = typeof Overview.Type

/**
 * The overview of a session.
 *
 * @since 0.2.0
 * @category projections
 */
export const overview: Projection.Projection<Overview> = Projection.make({
  key: "todo-overview",
  // Changes with the todos fold too (its own part is the last two digits), so no checkpoint of an
  // older fold of either is trusted.
  version: TodoProjection.todos.version * 100 + 1,
  initial: { todos: TodoProjection.todos.initial, events: 0, lastWrite: null, lastActivity: null },
  schema: Overview,
  step: (state, entry) => ({
    todos: TodoProjection.todos.step(state.todos, entry),
    events: entry.seq + 1,
    lastWrite: entry.type === TodoEvents.write.type ? entry.time : state.lastWrite,
    lastActivity: entry.time
  })
})
