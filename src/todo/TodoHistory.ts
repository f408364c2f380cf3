/**
 * How a session's todo list stood over time: after each write, or at the end of each turn. Folds
 * with the `todos` projection's own step, so it can't disagree with it.
 */
import * as Stream from "effect/Stream"
import * as SessionEvent from "../log/SessionEvent.ts"
import type * as Todo from "./Todo.ts"
import * as TodoEvents from "./TodoEvents.ts"
import * as TodoProjection from "./TodoProjection.ts"

/**
 * Which snapshots a replay keeps: after each write, or at the end of each turn.
 *
 * @since 0.2.0
 * @category models
 */
export type By = "writes" | "turns"

/**
 * The list as it stood at one point of the session.
 *
 * @since 0.2.0
 * @category models
 */
export interface Snapshot {
  readonly seq: number
  readonly time: number
  /** For `turns`: how the turn ended. */
  readonly reason?: string
  readonly todos: Todo.List | null
}

/**
 * What one pass over a session found: its events, the last time, the list now and the snapshots asked for.
 *
 * @since 0.2.0
 * @category models
 */
export interface Replay {
  readonly events: number
  readonly lastTime: number | undefined
  readonly todos: Todo.List | null
  readonly history: ReadonlyArray<Snapshot>
}

/** Replays a session's entries in one pass; keeps snapshots only when asked for them. */
export const replay = <E, R>(entries: Stream.Stream<SessionEvent.Entry, E, R>, by?: By) =>
  Stream.runFold(
    entries,
    (): { events: number; lastTime: number | undefined; todos: Todo.List | null; history: Array<Snapshot> } => ({
      events: 0,
      lastTime: undefined,
      todos: TodoProjection.todos.initial,
      history: []
    }),
    (acc, entry) => {
      acc.events++
      acc.lastTime = entry.time
      acc.todos = TodoProjection.todos.step(acc.todos, entry)
      if (by === "writes" && entry.type === TodoEvents.write.type) {
        acc.history.push({ seq: entry.seq, time: entry.time, todos: acc.todos })
      } else if (by === "turns" && entry.type === TodoEvents.turnEnd.type) {
        const reason = SessionEvent.payload(TodoEvents.turnEnd, entry)?.reason
        acc.history.push({
          seq: entry.seq,
          time: entry.time,
          ...(typeof reason === "string" ? { reason } : {}),
          todos: acc.todos
        })
      }
      return acc
    }
  )
