/**
 * A projection: a pure fold over a session's events, with a key, an initial state, a state schema
 * (for checkpoints) and a version that changes whenever the fold does, so stored state from an older
 * fold is never trusted.
 */
import { Schema } from "effect"
import * as SessionEvent from "./SessionEvent.ts"
import * as Todo from "./Todo.ts"

export interface Projection<S> {
  readonly key: string
  readonly version: number
  readonly initial: S
  readonly step: (state: S, entry: SessionEvent.Entry) => S
  readonly schema: Schema.Codec<S, unknown>
}

export const make = <S>(projection: Projection<S>): Projection<S> => projection

/**
 * The current todo list. `todo/write` replaces it (last write wins); `turn/start` clears it to
 * `null` (a plan belongs to a turn); everything else, `turn/end` included, leaves it as it is, so a
 * finished checklist stays visible. `null` (no plan this turn) and `[]` (an empty list was written)
 * are different states. Payloads are trusted here because the invariant middleware checked them.
 */
export const todos: Projection<Todo.List | null> = make({
  key: "todos",
  version: 1,
  initial: null,
  schema: Schema.NullOr(Todo.StoredList),
  step: (state, entry) =>
    entry.type === SessionEvent.TodoWrite
      ? (entry.data as Todo.Write).todos
      : entry.type === SessionEvent.TurnStart
      ? null
      : state
})
