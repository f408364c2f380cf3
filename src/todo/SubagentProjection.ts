/**
 * The sub-agent links of a session, as projections of its log: whose sub-agent it is (its first
 * event), and which sub-agents it started and how each one's last run stands.
 *
 * @since 0.2.0
 */
import * as Schema from "effect/Schema"
import * as SessionEvent from "../log/SessionEvent.ts"
import { SessionId } from "../log/SessionId.ts"
import * as Projection from "../projection/Projection.ts"
import * as SubagentEvents from "./SubagentEvents.ts"

/**
 * The session this one is a sub-agent of, from its first event; `null` for a session started on its
 * own (a root). A `subagent/parent` anywhere but first is not a link.
 *
 * @since 0.2.0
 * @category projections
 */
export const parent: Projection.Projection<SessionId | null> = Projection.make({
  key: "subagent-parent",
  version: 1,
  initial: null,
  schema: Schema.NullOr(SessionId),
  step: (state, entry) => entry.seq === 0 ? SessionEvent.payload(SubagentEvents.parent, entry)?.parent ?? null : state
})

/**
 * Where a sub-agent's last run stands: still running, or how it ended.
 *
 * @since 0.2.0
 * @category models
 */
export const Status = Schema.Literals(["running", ...SubagentEvents.EndReason.literals])

/**
 * @since 0.2.0
 * @category models
 */
export type Status = typeof Status.Type

/**
 * One sub-agent of a session and the status of its last run.
 *
 * @since 0.2.0
 * @category models
 */
export const Child = Schema.Struct({ child: SessionId, status: Status })

/**
 * @since 0.2.0
 * @category models
 */
export type Child = typeof Child.Type

const setStatus = (state: ReadonlyArray<Child>, child: SessionId, status: Status): ReadonlyArray<Child> => {
  const index = state.findIndex((c) => c.child === child)
  if (index === -1) return [...state, { child, status }]
  const next = state.slice()
  next[index] = { child, status }
  return next
}

/**
 * The session's sub-agents in the order they were first started, each with the status of its last
 * run: `subagent/start` marks it running, `subagent/end` records how it ended.
 *
 * @since 0.2.0
 * @category projections
 */
export const children: Projection.Projection<ReadonlyArray<Child>> = Projection.make({
  key: "subagent-children",
  version: 1,
  initial: [],
  schema: Schema.Array(Child),
  step: (state, entry) => {
    const started = SessionEvent.payload(SubagentEvents.start, entry)
    if (started !== undefined) return setStatus(state, started.child, "running")
    const ended = SessionEvent.payload(SubagentEvents.end, entry)
    return ended === undefined ? state : setStatus(state, ended.child, ended.reason)
  }
})
