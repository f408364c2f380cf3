/**
 * The events that link a sub-agent's session to its parent's, and the invariants this module
 * registers with the log. A link is written in both logs: `subagent/parent` as the child's first
 * event (the back-link that ancestor and cycle checks follow) and `subagent/start` in the parent's
 * log (the forward link the plan tree follows); `subagent/end` in the parent's log says how the
 * child's run ended. Logs written before these events existed have none of them and load as they did.
 *
 * @since 0.2.0
 */
import type * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type { CheckedSessionLog } from "../log/CheckedSessionLog.ts"
import * as SessionEvent from "../log/SessionEvent.ts"
import { SessionId } from "../log/SessionId.ts"
import * as SessionInvariant from "../log/SessionInvariant.ts"
import type { SessionLog } from "../log/SessionLog.ts"
import * as TodoEvents from "./TodoEvents.ts"

/**
 * `subagent/start`, in the parent's log: a run of the named child session begins.
 *
 * @since 0.2.0
 * @category events
 */
export const start = SessionEvent.define("subagent/start", Schema.Struct({ child: SessionId }))

/**
 * `subagent/parent`, the child's first event: the session whose sub-agent this one is.
 *
 * @since 0.2.0
 * @category events
 */
export const parent = SessionEvent.define("subagent/parent", Schema.Struct({ parent: SessionId }))

/**
 * How a sub-agent's run ended: the same three outcomes as a turn, plus `closed` when an MCP client
 * ended its session (it said it was done, nothing more is known).
 *
 * @since 0.2.0
 * @category events
 */
export const EndReason = Schema.Literals([...TodoEvents.TurnEndReason.literals, "closed"])

/**
 * @since 0.2.0
 * @category events
 */
export type EndReason = typeof EndReason.Type

/**
 * `subagent/end`, in the parent's log: the named child's run is over, and how it ended.
 *
 * @since 0.2.0
 * @category events
 */
export const end = SessionEvent.define("subagent/end", Schema.Struct({ child: SessionId, reason: EndReason }))

/**
 * The durable shape of the three link events: closed objects naming valid session ids, and a known
 * end reason.
 *
 * @since 0.2.0
 * @category invariants
 */
export const invariants: ReadonlyArray<SessionInvariant.Invariant> = [
  SessionInvariant.fromDefinition("subagent/start shape", start),
  SessionInvariant.fromDefinition("subagent/parent shape", parent),
  SessionInvariant.fromDefinition("subagent/end shape", end)
]

/**
 * The checked log of the todo domain with sub-agents: the todo invariants and these, over any
 * `SessionLog` backend.
 *
 * @since 0.2.0
 * @category layers
 */
export const layerChecked: Layer.Layer<CheckedSessionLog, never, SessionLog> = SessionInvariant.layer([
  ...TodoEvents.invariants,
  ...invariants
])
