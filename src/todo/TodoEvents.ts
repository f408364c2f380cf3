/**
 * The events of the todo domain, and the invariant it registers with the log. The log itself knows
 * no event types: `todo/write` carries a list the model wrote; `turn/start` and `turn/end` bracket
 * one turn of the calling agent (`AgentSession.turn`).
 *
 * @since 0.2.0
 */
import type * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type { CheckedSessionLog } from "../log/CheckedSessionLog.ts"
import * as SessionEvent from "../log/SessionEvent.ts"
import * as SessionInvariant from "../log/SessionInvariant.ts"
import type { SessionLog } from "../log/SessionLog.ts"
import * as Todo from "./Todo.ts"
import * as TodoShape from "./TodoShape.ts"

/**
 * `todo/write`: the complete list, as validated and stored.
 *
 * @since 0.2.0
 * @category events
 */
export const write: SessionEvent.Definition<Todo.Write> = SessionEvent.define("todo/write", Todo.StoredWrite, TodoShape.isWrite)

/**
 * `turn/start`: a turn of the agent begins; its plan starts empty.
 *
 * @since 0.2.0
 * @category events
 */
export const turnStart = SessionEvent.define("turn/start", Schema.Struct({}))

/**
 * How a turn ended.
 *
 * @since 0.2.0
 * @category events
 */
export const TurnEndReason = Schema.Literals(["completed", "interrupted", "error"])

/**
 * @since 0.2.0
 * @category events
 */
export type TurnEndReason = typeof TurnEndReason.Type

/**
 * `turn/end`: the turn is over, and how it ended.
 *
 * @since 0.2.0
 * @category events
 */
export const turnEnd = SessionEvent.define("turn/end", Schema.Struct({ reason: TurnEndReason }))

const writeShape = SessionInvariant.fromDefinition("todo/write shape", write)

/**
 * The durable shape of `todo/write`: `todos` is an array of closed objects with non-empty,
 * already-trimmed, exactly unique content, a known status and, if present, non-empty trimmed
 * evidence. Not the in_progress count nor whether evidence is required, which are the deployment's
 * policy: a log written under one policy still loads under another.
 *
 * @since 0.2.0
 * @category invariants
 */
export const writeInvariant: SessionInvariant.Invariant = {
  ...writeShape,
  check: (data) => TodoShape.isExactStoredWrite(data) ? undefined : writeShape.check(data)
}

/**
 * Every invariant the todo domain registers.
 *
 * @since 0.2.0
 * @category invariants
 */
export const invariants: ReadonlyArray<SessionInvariant.Invariant> = [writeInvariant]

/**
 * The checked log the todo domain needs, over any `SessionLog` backend: `SessionInvariant.layer`
 * with the todo invariants (add your own with `SessionInvariant.layer([...invariants, ...yours])`).
 *
 * @since 0.2.0
 * @category layers
 */
export const layerChecked: Layer.Layer<CheckedSessionLog, never, SessionLog> = SessionInvariant.layer(invariants)
