import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Layer, Stream } from "effect"
import * as AgentSession from "../../src/todo/AgentSession.ts"
import * as SessionId from "../../src/log/SessionId.ts"
import * as SessionLog from "../../src/log/SessionLog.ts"
import { CheckedSessionLog } from "../../src/log/CheckedSessionLog.ts"
import * as TodoEvents from "../../src/todo/TodoEvents.ts"

const session = SessionId.decodeSync("turns")
const Log = TodoEvents.layerChecked.pipe(Layer.provide(SessionLog.layerMemory))

const types = Effect.gen(function*() {
  const log = yield* CheckedSessionLog
  return (yield* Stream.runCollect(log.read(session))).map((e) => [e.type, e.data])
})

describe("AgentSession.turn", () => {
  it.effect("provides the session and brackets the work with turn/start and turn/end", () =>
    Effect.gen(function*() {
      const seen = yield* Effect.map(AgentSession.AgentSession, (s) => s.sessionId).pipe(AgentSession.turn(session))
      assert.strictEqual(seen, session)
      assert.deepStrictEqual(yield* types, [["turn/start", {}], ["turn/end", { reason: "completed" }]])
    }).pipe(Effect.provide(Log)))

  it.effect("records an error ending and keeps the turn's own failure", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(Effect.fail("boom").pipe(AgentSession.turn(session)))
      assert.isTrue(Exit.isFailure(exit))
      assert.deepStrictEqual(yield* types, [["turn/start", {}], ["turn/end", { reason: "error" }]])
    }).pipe(Effect.provide(Log)))

  it.effect("records an interrupted ending", () =>
    Effect.gen(function*() {
      const fiber = yield* Effect.never.pipe(AgentSession.turn(session), Effect.forkChild)
      yield* Effect.yieldNow
      yield* Fiber.interrupt(fiber)
      assert.deepStrictEqual(yield* types, [["turn/start", {}], ["turn/end", { reason: "interrupted" }]])
    }).pipe(Effect.provide(Log)))
})
