/**
 * Sub-agents: an agent's session runs another agent with a session and list of its own, linked to
 * it in both logs. `run` links the child under the current `AgentSession`, runs an effect as the
 * child, and records how the child's run ended in the parent's log, whatever happens; `link` and
 * `end` are the two halves, for servers whose children connect and leave on their own (MCP).
 *
 * Links are bounded: at most `maxDepth` levels below a root and `maxChildren` sub-agents per
 * session, and a session is never linked under itself or one of its descendants. Each link is checked
 * against what is committed when it is made, so links made at the same moment (from several fibers or
 * processes) don't see each other: serialize them where they can race (the HTTP server does).
 *
 * @since 0.2.0
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Stream from "effect/Stream"
import { CheckedSessionLog } from "../log/CheckedSessionLog.ts"
import type { SessionId } from "../log/SessionId.ts"
import type { SessionLogError } from "../log/SessionLogError.ts"
import { ProjectionStore } from "../projection/ProjectionStore.ts"
import { AgentSession, provide } from "./AgentSession.ts"
import { Cycle, NotNew, OtherParent, SubagentError, TooDeep, TooManyChildren } from "./SubagentError.ts"
import * as SubagentEvents from "./SubagentEvents.ts"
import * as SubagentProjection from "./SubagentProjection.ts"

/**
 * How far a tree of sub-agents may grow.
 *
 * @since 0.2.0
 * @category models
 */
export interface Limits {
  /** The deepest a sub-agent may sit below its root (a root's children are at depth 1). */
  readonly maxDepth: number
  /** The most sub-agents one session may start. */
  readonly maxChildren: number
}

/**
 * The bounds used when none are given: 8 levels, 64 sub-agents per session.
 *
 * @since 0.2.0
 * @category models
 */
export const defaultLimits: Limits = { maxDepth: 8, maxChildren: 64 }

/**
 * A session's ancestors, nearest first, following each session's first event. Fails when the chain
 * is longer than `maxDepth` (it stops reading there) or when stored links loop.
 *
 * @since 0.2.0
 * @category reading
 */
export const ancestors = Effect.fn("Subagent.ancestors")(
  function*(session: SessionId, limits: Limits = defaultLimits) {
    const store = yield* ProjectionStore
    const chain: Array<SessionId> = []
    let current = session
    while (true) {
      const next = yield* store.get(SubagentProjection.parent, current)
      if (next === null) return chain
      const walked = [session, ...chain]
      if (walked.includes(next)) {
        const path = [...walked.slice(walked.indexOf(next)), next]
        return yield* SubagentError.fromReason({ method: "ancestors", session, reason: new Cycle({ path }) })
      }
      chain.push(next)
      if (chain.length > limits.maxDepth) {
        return yield* SubagentError.fromReason({
          method: "ancestors",
          session,
          reason: new TooDeep({ depth: chain.length, max: limits.maxDepth })
        })
      }
      current = next
    }
  }
)

/**
 * Whether `child` may be linked under `parent` (`undefined`: a session not named yet, so new),
 * without writing anything: fails with the reason `link` would. Answers what `link` has to write.
 *
 * @since 0.2.0
 * @category linking
 */
export const check = Effect.fn("Subagent.check")(
  function*(parent: SessionId, child: SessionId | undefined, limits: Limits = defaultLimits) {
    const log = yield* CheckedSessionLog
    const store = yield* ProjectionStore
    const refuse = (reason: SubagentError["reason"]) =>
      SubagentError.fromReason({ method: "link", session: parent, child, reason })
    const above = yield* ancestors(parent, limits)
    const cycleAt = child === undefined ? -1 : [parent, ...above].indexOf(child)
    if (child !== undefined && cycleAt !== -1) {
      return yield* refuse(new Cycle({ path: [child, ...[parent, ...above].slice(0, cycleAt), child] }))
    }
    if (above.length + 1 > limits.maxDepth) {
      return yield* refuse(new TooDeep({ depth: above.length + 1, max: limits.maxDepth }))
    }
    const siblings = yield* store.get(SubagentProjection.children, parent)
    const existing = siblings.find((c) => c.child === child)
    if (existing === undefined && siblings.length >= limits.maxChildren) {
      return yield* refuse(new TooManyChildren({ count: siblings.length + 1, max: limits.maxChildren }))
    }
    if (child === undefined) return { nameParent: true, start: true }
    const linked = yield* store.get(SubagentProjection.parent, child)
    if (linked !== null && linked !== parent) return yield* refuse(new OtherParent({ parent: linked }))
    if (linked === null && (yield* log.read(child).pipe(Stream.take(1), Stream.runCollect)).length > 0) {
      return yield* refuse(new NotNew())
    }
    return { nameParent: linked === null, start: existing?.status !== "running" }
  }
)

/**
 * Links `child` under `parent` in both logs: `subagent/parent` as the child's first event (unless
 * the child already names this parent), then `subagent/start` in the parent's log (unless the child
 * is already running there). Refused, with nothing written, when the child is the parent or one of
 * its ancestors, when the child would sit deeper than `maxDepth` or be one sub-agent too many, when
 * the child already belongs to another parent, or when it has events of its own.
 *
 * @since 0.2.0
 * @category linking
 */
export const link = Effect.fn("Subagent.link")(
  function*(parent: SessionId, child: SessionId, limits: Limits = defaultLimits) {
    const log = yield* CheckedSessionLog
    const todo = yield* check(parent, child, limits)
    // The child's side first: a crash in between leaves a back-link the ancestor checks still see.
    if (todo.nameParent) yield* log.append(child, SubagentEvents.parent.type, { parent })
    if (todo.start) yield* log.append(parent, SubagentEvents.start.type, { child })
  }
)

/**
 * Records in the parent's log that `child`'s run ended, and how; nothing when `child` has no parent
 * or its run already ended.
 *
 * @since 0.2.0
 * @category linking
 */
export const end = Effect.fn("Subagent.end")(function*(child: SessionId, reason: SubagentEvents.EndReason) {
  const store = yield* ProjectionStore
  const parent = yield* store.get(SubagentProjection.parent, child)
  if (parent === null) return
  const status = (yield* store.get(SubagentProjection.children, parent)).find((c) => c.child === child)?.status
  if (status !== "running") return
  yield* (yield* CheckedSessionLog).append(parent, SubagentEvents.end.type, { child, reason })
})

const endReason = <A, E>(exit: Exit.Exit<A, E>): SubagentEvents.EndReason =>
  Exit.isSuccess(exit) ? "completed" : Cause.hasInterruptsOnly(exit.cause) ? "interrupted" : "error"

/**
 * Runs an effect as a sub-agent of the current `AgentSession`: links `child` under it (see
 * `link`), provides `child` as the `AgentSession`, and appends `subagent/end` to the parent's log
 * with how the effect ended (completed, error or interrupted), whatever happens.
 *
 * @since 0.2.0
 * @category running
 */
export const run = (child: SessionId, limits: Limits = defaultLimits) =>
<A, E, R>(
  effect: Effect.Effect<A, E, R>
): Effect.Effect<
  A,
  E | SessionLogError | SubagentError,
  Exclude<R, AgentSession> | AgentSession | CheckedSessionLog | ProjectionStore
> =>
  Effect.uninterruptibleMask((restore) =>
    Effect.gen(function*() {
      const parent = (yield* AgentSession).sessionId
      const log = yield* CheckedSessionLog
      yield* link(parent, child, limits)
      const exit = yield* Effect.exit(restore(provide(child)(effect)))
      const ended = yield* Effect.exit(
        log.append(parent, SubagentEvents.end.type, { child, reason: endReason(exit) })
      )
      // The child's own failure matters more than a failure to record its end.
      if (Exit.isSuccess(exit) && Exit.isFailure(ended)) return yield* Effect.failCause(ended.cause)
      return yield* exit
    })
  ).pipe(Effect.withSpan("Subagent.run"))
