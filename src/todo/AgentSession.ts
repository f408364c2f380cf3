/**
 * The calling agent's session: which log a tool call writes to. The agent loop provides it per call
 * (or per turn with `turn`); `todo_write` without it fails instead of writing nowhere.
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import { CheckedSessionLog } from "../log/CheckedSessionLog.ts"
import type { SessionId } from "../log/SessionId.ts"
import type { SessionLogError } from "../log/SessionLogError.ts"
import * as TodoEvents from "./TodoEvents.ts"

/**
 * The calling agent's session, provided per call or per turn by the agent loop.
 *
 * @since 0.2.0
 * @category services
 */
export class AgentSession extends Context.Service<AgentSession, {
  readonly sessionId: SessionId
}>()("effect-todo-write/AgentSession") {}

/**
 * Provides a fixed session: for a server or process that serves one agent.
 *
 * @since 0.2.0
 * @category layers
 */
export const layer = (sessionId: SessionId): Layer.Layer<AgentSession> =>
  Layer.succeed(AgentSession, AgentSession.of({ sessionId }))

/** Runs an effect as a call of the given session's agent. */
export const provide = (sessionId: SessionId) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.provideService(effect, AgentSession, AgentSession.of({ sessionId }))

const endReason = <A, E>(exit: Exit.Exit<A, E>): TodoEvents.TurnEndReason =>
  Exit.isSuccess(exit) ? "completed" : Cause.hasInterruptsOnly(exit.cause) ? "interrupted" : "error"

/**
 * Runs an effect as one turn of a session: appends `turn/start`, provides the `AgentSession`, and
 * appends `turn/end` with how the turn ended (completed, interrupted or error), whatever happens.
 */
export const turn = (sessionId: SessionId) =>
<A, E, R>(
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, E | SessionLogError, Exclude<R, AgentSession> | CheckedSessionLog> =>
  Effect.uninterruptibleMask((restore) =>
    Effect.gen(function*() {
      const log = yield* CheckedSessionLog
      yield* log.append(sessionId, TodoEvents.turnStart.type, {})
      const exit = yield* Effect.exit(restore(provide(sessionId)(effect)))
      const ended = yield* Effect.exit(log.append(sessionId, TodoEvents.turnEnd.type, { reason: endReason(exit) }))
      // The turn's own failure matters more than a failure to record its end.
      if (Exit.isSuccess(exit) && Exit.isFailure(ended)) return yield* Effect.failCause(ended.cause)
      return yield* exit
    })
  ).pipe(Effect.withSpan("AgentSession.turn"))
