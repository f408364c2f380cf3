/**
 * The todo item: the one schema that the tool's parameters, the `todo/write` event payload and the
 * `todos` projection state all derive from.
 */
import { Schema } from "effect"

export const Status = Schema.Literals(["pending", "in_progress", "completed"]).annotate({
  description: "pending: not started; in_progress: being worked on now; completed: done"
})
export type Status = typeof Status.Type

export const Item = Schema.Struct({
  content: Schema.String.annotate({ description: "One concrete step, in imperative form" }),
  status: Status
})
export type Item = typeof Item.Type

export const List = Schema.Array(Item)
export type List = typeof List.Type

/** The tool's arguments and the `todo/write` payload: the complete list, which replaces the previous one. */
export const Write = Schema.Struct({
  todos: List.annotate({ description: "The ENTIRE todo list; it replaces the previous one" })
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
