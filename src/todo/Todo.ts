/**
 * The todo item: the one schema that the tool's parameters, the `todo/write` event payload and the
 * `todos` projection state all derive from.
 *
 * @since 0.2.0
 */
import * as Schema from "effect/Schema"

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
