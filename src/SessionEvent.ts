/**
 * The envelope every session log stores, and the event types this package knows. The log is shared
 * with the rest of an agent, so `type` is open and `data` of unknown types is kept untouched.
 */
import { Schema } from "effect"
import * as SessionId from "./SessionId.ts"
import * as Todo from "./Todo.ts"

export const Entry = Schema.Struct({
  type: Schema.String.check(Schema.isNonEmpty()),
  seq: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)),
  time: Schema.Int,
  data: Schema.Unknown
})
export type Entry = typeof Entry.Type

/** An entry together with the session it was committed to: what live readers receive. */
export interface Committed {
  readonly session: SessionId.SessionId
  readonly entry: Entry
}

export const TodoWrite = "todo/write"
export const TurnStart = "turn/start"
export const TurnEnd = "turn/end"

export const TurnEndReason = Schema.Literals(["completed", "interrupted", "error"])
export type TurnEndReason = typeof TurnEndReason.Type

/** The payloads of the known event types, keyed by type. */
export const payloads = {
  [TodoWrite]: Todo.StoredWrite,
  [TurnStart]: Schema.Struct({}),
  [TurnEnd]: Schema.Struct({ reason: TurnEndReason })
} as const
