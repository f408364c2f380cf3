/**
 * The invariant middleware on its own: which invariants a checker runs for an event, what a
 * violation says, and that the wrapped log checks appends, reads (with `fromSeq`) and passes the
 * rest of the service through. (Written to kill the mutants StrykerJS found surviving in
 * SessionInvariant: see scratch/mutation/README.md.)
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Schema, Stream } from "effect"
import { CheckedSessionLog } from "../../src/log/CheckedSessionLog.ts"
import * as SessionEvent from "../../src/log/SessionEvent.ts"
import * as SessionId from "../../src/log/SessionId.ts"
import * as SessionInvariant from "../../src/log/SessionInvariant.ts"
import * as SessionLog from "../../src/log/SessionLog.ts"
import { failureOf } from "./SessionLogConformance.ts"

const positive: SessionInvariant.Invariant = {
  rule: "positive",
  eventType: "n",
  check: (data) => typeof data === "number" && data > 0 ? undefined : `${String(data)} is not positive`
}
const even: SessionInvariant.Invariant = {
  rule: "even",
  eventType: "n",
  check: (data) => typeof data === "number" && data % 2 === 0 ? undefined : `${String(data)} is odd`
}
const named: SessionInvariant.Invariant = {
  rule: "named",
  eventType: "m",
  check: (data) => typeof data === "string" ? undefined : "not a name"
}

const session = SessionId.decodeSync("invariants")

describe("SessionInvariant", () => {
  describe("checker", () => {
    const violation = SessionInvariant.checker([positive, named, even])

    it("runs every invariant of the event's type, in order, and answers the first one broken", () => {
      assert.isUndefined(violation("n", 4))
      assert.deepInclude(violation("n", -2), { rule: "positive", detail: "-2 is not positive" })
      // the second invariant registered for a type runs too
      assert.deepInclude(violation("n", 3), { rule: "even", detail: "3 is odd" })
      // where both break, the first registered is reported
      assert.deepInclude(violation("n", -3), { rule: "positive", detail: "-3 is not positive" })
    })

    it("runs only the invariants of the event's type; a type none is registered for passes", () => {
      assert.isUndefined(violation("m", "a name"))
      assert.deepInclude(violation("m", 4), { rule: "named", detail: "not a name" })
      assert.isUndefined(violation("other", -3))
      assert.isUndefined(SessionInvariant.checker([])("n", -3))
    })

    it("names the seq when it is given one (a read), and none when it isn't (an append)", () => {
      const onRead = violation("n", 3, 7)
      assert.strictEqual(onRead?.seq, 7)
      assert.strictEqual(onRead?._tag, "InvariantViolation")
      const onAppend = violation("n", 3)
      assert.isFalse(onAppend !== undefined && "seq" in onAppend, "an append's violation has no seq")
      assert.strictEqual(violation("n", 3, 0)?.seq, 0)
    })
  })

  describe("fromSchema", () => {
    const point = SessionInvariant.fromSchema("point shape", "point", Schema.Struct({ x: Schema.Number }))

    it("holds for a payload the schema decodes; names the rule and the event type", () => {
      assert.strictEqual(point.rule, "point shape")
      assert.strictEqual(point.eventType, "point")
      assert.isUndefined(point.check({ x: 1 }))
    })

    it("is broken by a payload the schema refuses, saying why", () => {
      const detail = point.check({ x: "1" })
      assert.isString(detail)
      assert.include(detail, "x")
      assert.include(detail, "number")
    })

    it("is strict: a property the schema doesn't know breaks it", () => {
      const detail = point.check({ x: 1, y: 2 })
      assert.isString(detail)
      assert.include(detail, "y")
    })

    it("fromDefinition checks the definition's schema under its event type", () => {
      const invariant = SessionInvariant.fromDefinition("turn end shape", SessionEvent.define("t/end", Schema.Struct({ reason: Schema.String })))
      assert.strictEqual(invariant.eventType, "t/end")
      assert.strictEqual(invariant.rule, "turn end shape")
      assert.isUndefined(invariant.check({ reason: "done" }))
      assert.isString(invariant.check({ reason: "done", extra: 1 }))
    })
  })

  describe("wrap", () => {
    const withLogs = <A, E>(use: (raw: SessionLog.Service, checked: SessionLog.Service) => Effect.Effect<A, E>) =>
      Effect.gen(function*() {
        const raw = yield* SessionLog.SessionLog
        return yield* use(raw, SessionInvariant.wrap(raw, [positive, even]))
      }).pipe(Effect.provide(SessionLog.layerMemory))

    it.effect("an append that breaks an invariant fails, names the method, session and rule, and writes nothing", () =>
      withLogs((raw, log) =>
        Effect.gen(function*() {
          assert.strictEqual((yield* log.append(session, "n", 2)).seq, 0)
          const error = failureOf(yield* Effect.exit(log.append(session, "n", 3)))
          assert.strictEqual(error.method, "append")
          assert.strictEqual(error.session, session)
          assert.deepInclude(error.reason, { _tag: "InvariantViolation", rule: "even", detail: "3 is odd" })
          assert.deepStrictEqual((yield* Stream.runCollect(raw.read(session))).map((e) => e.data), [2])
        })
      ))

    it.effect("a read fails at the first stored event that breaks one, naming its seq; reads from after it succeed", () =>
      withLogs((raw, log) =>
        Effect.gen(function*() {
          yield* raw.append(session, "n", 2)
          yield* raw.append(session, "n", 4)
          yield* raw.append(session, "n", -4)
          yield* raw.append(session, "n", 6)
          const error = failureOf(yield* Effect.exit(Stream.runCollect(log.read(session))))
          assert.strictEqual(error.method, "read")
          assert.strictEqual(error.session, session)
          assert.deepInclude(error.reason, { _tag: "InvariantViolation", rule: "positive", seq: 2 })
          // the options reach the inner log: from seq 3, the bad event is never read
          assert.deepStrictEqual((yield* Stream.runCollect(log.read(session, { fromSeq: 3 }))).map((e) => e.data), [6])
        })
      ))

    it.effect("the rest of the service is the inner log's", () =>
      withLogs((raw, log) =>
        Effect.gen(function*() {
          yield* log.append(session, "n", 2)
          assert.deepStrictEqual(yield* log.sessions, yield* raw.sessions)
          assert.strictEqual(log.subscribe, raw.subscribe)
        })
      ))

    it.effect("layer provides the checked log over the SessionLog it is given", () =>
      Effect.gen(function*() {
        const log = yield* CheckedSessionLog
        const error = failureOf(yield* Effect.exit(log.append(session, "n", -1)))
        assert.deepInclude(error.reason, { _tag: "InvariantViolation", rule: "positive" })
        assert.strictEqual((yield* log.append(session, "n", 8)).seq, 0)
      }).pipe(Effect.provide(SessionInvariant.layer([positive, even]).pipe(Layer.provide(SessionLog.layerMemory)))))
  })
})
