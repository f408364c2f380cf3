/**
 * A re-anchor text: a session's current list as a short text for the model, to re-inject after the
 * agent compacts its context (which drops the plan along with the calls that wrote it) or at the
 * start of a turn. It says what is done, what is in progress and what is next, with the exact
 * contents and evidence, and that the next `todo_write` call must send the ENTIRE list.
 *
 * @since 0.2.0
 */
import * as Effect from "effect/Effect"
import type { SessionId } from "../log/SessionId.ts"
import type { SessionLogError } from "../log/SessionLogError.ts"
import { ProjectionStore } from "../projection/ProjectionStore.ts"
import type * as Todo from "./Todo.ts"
import * as TodoProjection from "./TodoProjection.ts"
import * as TodoText from "./TodoText.ts"

const order: ReadonlyArray<Todo.Status> = ["completed", "in_progress", "pending"]

/**
 * The re-anchor text of a list, grouped under its statuses (completed, in_progress, pending), one
 * item per line with its evidence, if any; an empty string when there is no list (`null`) or it is empty, so there is nothing to inject.
 *
 * @since 0.2.0
 * @category rendering
 */
export const render = (todos: Todo.List | null): string => {
  if (todos === null || todos.length === 0) return ""
  const lines = ["Your todo list; send it ENTIRE, updated, in your next todo_write call:"]
  for (const status of order) {
    const items = todos.filter((item) => item.status === status)
    if (items.length === 0) continue
    lines.push(`${status}:`)
    for (const item of items) {
      const evidence = item.evidence === undefined ? "" : ` (evidence: ${TodoText.printable(item.evidence)})`
      // One item per line, no bullet: a bullet is a token per item, and a content can't hold a line break.
      lines.push(`${TodoText.printable(item.content)}${evidence}`)
    }
  }
  return lines.join("\n")
}

/**
 * The re-anchor text of a session's current list, read from the `todos` projection.
 *
 * @since 0.2.0
 * @category rendering
 */
export const forSession = (session: SessionId): Effect.Effect<string, SessionLogError, ProjectionStore> =>
  Effect.flatMap(ProjectionStore, (store) => Effect.map(store.get(TodoProjection.todos, session), render))
