/**
 * Why a sub-agent link or a plan tree was refused: one error naming the operation and the sessions,
 * with a `reason` saying which bound or rule was broken.
 *
 * @since 0.2.0
 */
import * as Schema from "effect/Schema"

/**
 * The link would make a session its own ancestor, or a stored tree already loops.
 *
 * @since 0.2.0
 * @category reasons
 */
export class Cycle extends Schema.TaggedClass<Cycle>()("Cycle", {
  /** The sessions going up, each a sub-agent of the next, from the repeated one to where it reappears. */
  path: Schema.Array(Schema.String)
}) {}

/**
 * The tree would be, or is, deeper than the bound.
 *
 * @since 0.2.0
 * @category reasons
 */
export class TooDeep extends Schema.TaggedClass<TooDeep>()("TooDeep", {
  depth: Schema.Int,
  max: Schema.Int
}) {}

/**
 * A session would have, or has, more sub-agents than the bound.
 *
 * @since 0.2.0
 * @category reasons
 */
export class TooManyChildren extends Schema.TaggedClass<TooManyChildren>()("TooManyChildren", {
  count: Schema.Int,
  max: Schema.Int
}) {}

/**
 * The child is already the sub-agent of another session.
 *
 * @since 0.2.0
 * @category reasons
 */
export class OtherParent extends Schema.TaggedClass<OtherParent>()("OtherParent", {
  parent: Schema.String
}) {}

/**
 * The child session already has events of its own, so its first event can't name the parent.
 *
 * @since 0.2.0
 * @category reasons
 */
export class NotNew extends Schema.TaggedClass<NotNew>()("NotNew", {}) {}

/**
 * Every way a link or a tree can be refused.
 *
 * @since 0.2.0
 * @category reasons
 */
export const Reason = Schema.Union([Cycle, TooDeep, TooManyChildren, OtherParent, NotNew])

/**
 * @since 0.2.0
 * @category reasons
 */
export type Reason = typeof Reason.Type

const describe = (reason: Reason): string => {
  switch (reason._tag) {
    case "Cycle":
      return `a session would be its own ancestor (${reason.path.join(" -> ")})`
    case "TooDeep":
      return `the tree is ${reason.depth} levels deep, more than the ${reason.max} allowed`
    case "TooManyChildren":
      return `${reason.count} sub-agents, more than the ${reason.max} allowed per session`
    case "OtherParent":
      return `it is already a sub-agent of ${reason.parent}`
    case "NotNew":
      return "it already has events of its own, so it can't become a sub-agent"
  }
}

/**
 * The error of `Subagent.link`, `Subagent.run` and `PlanTree.get`.
 *
 * @since 0.2.0
 * @category errors
 */
export class SubagentError extends Schema.TaggedError<SubagentError>()("SubagentError", {
  method: Schema.String,
  session: Schema.String,
  child: Schema.optionalKey(Schema.String),
  reason: Reason,
  message: Schema.String
}) {
  /** Builds the error with a message naming the operation, the sessions and what was refused. */
  static fromReason(options: {
    readonly method: string
    readonly session: string
    readonly child?: string | undefined
    readonly reason: Reason
  }): SubagentError {
    const target = options.child === undefined ? options.session : `${options.session} -> ${options.child}`
    return new SubagentError({
      method: options.method,
      session: options.session,
      ...(options.child === undefined ? {} : { child: options.child }),
      reason: options.reason,
      message: `Subagent.${options.method}(${target}): ${describe(options.reason)}`
    })
  }
}
