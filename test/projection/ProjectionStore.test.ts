import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Logger, Schema, Stream } from "effect"
import { KeyValueStore } from "effect/persistence"
import * as AgentSession from "../../src/todo/AgentSession.ts"
import * as Projection from "../../src/projection/Projection.ts"
import * as ProjectionStore from "../../src/projection/ProjectionStore.ts"
import * as SessionId from "../../src/log/SessionId.ts"
import * as SessionLog from "../../src/log/SessionLog.ts"
import * as Todo from "../../src/todo/Todo.ts"
import * as TodoPolicy from "../../src/todo/TodoPolicy.ts"
import * as TodoWrite from "../../src/todo/TodoWrite.ts"
import * as TodoProjection from "../../src/todo/TodoProjection.ts"
import * as TodoEvents from "../../src/todo/TodoEvents.ts"
import { CheckedSessionLog } from "../../src/log/CheckedSessionLog.ts"

const session = SessionId.decodeSync("projected")

const Env = ProjectionStore.layer.pipe(
  Layer.provideMerge(TodoEvents.layerChecked.pipe(Layer.provideMerge(SessionLog.layerMemory)))
)

const services = Effect.all([CheckedSessionLog, ProjectionStore.ProjectionStore])

const list = (...contents: Array<string>) => contents.map((content) => ({ content, status: "pending" as const }))

describe("ProjectionStore: todos", () => {
  it.effect("is null before any write, then the last write wins", () =>
    Effect.gen(function*() {
      const [log, store] = yield* services
      assert.isNull(yield* store.get(TodoProjection.todos, session))
      yield* log.append(session, TodoEvents.write.type, { todos: list("a") })
      yield* log.append(session, TodoEvents.write.type, { todos: list("b", "c") })
      assert.deepStrictEqual(yield* store.get(TodoProjection.todos, session), list("b", "c"))
    }).pipe(Effect.provide(Env)))

  it.effect("turn/end keeps the list, turn/start clears it, unrelated events change nothing", () =>
    Effect.gen(function*() {
      const [log, store] = yield* services
      yield* log.append(session, TodoEvents.turnStart.type, {})
      yield* log.append(session, TodoEvents.write.type, { todos: list("a") })
      yield* log.append(session, "tool/bash", { command: "ls" })
      assert.deepStrictEqual(yield* store.get(TodoProjection.todos, session), list("a"))
      yield* log.append(session, TodoEvents.turnEnd.type, { reason: "completed" })
      assert.deepStrictEqual(yield* store.get(TodoProjection.todos, session), list("a"))
      yield* log.append(session, TodoEvents.turnStart.type, {})
      assert.isNull(yield* store.get(TodoProjection.todos, session))
    }).pipe(Effect.provide(Env)))

  it.effect("keeps null (no plan) and [] (an empty list was written) apart", () =>
    Effect.gen(function*() {
      const [log, store] = yield* services
      yield* log.append(session, TodoEvents.write.type, { todos: [] })
      assert.deepStrictEqual(yield* store.get(TodoProjection.todos, session), [])
    }).pipe(Effect.provide(Env)))

  it.effect("applies only new entries: a read after a write never refolds the log", () =>
    Effect.gen(function*() {
      const raw = yield* CheckedSessionLog
      let readFrom: Array<number | undefined> = []
      const counting = CheckedSessionLog.of({
        ...raw,
        read: (s, options) => {
          readFrom.push(options?.fromSeq)
          return raw.read(s, options)
        }
      })
      const store = yield* ProjectionStore.ProjectionStore.pipe(
        Effect.provide(ProjectionStore.layer.pipe(Layer.provide(Layer.succeed(CheckedSessionLog, counting))))
      )
      for (let i = 0; i < 5; i++) yield* raw.append(session, TodoEvents.write.type, { todos: list(`v${i}`) })
      yield* store.get(TodoProjection.todos, session)
      yield* raw.append(session, TodoEvents.write.type, { todos: list("last") })
      assert.deepStrictEqual(yield* store.get(TodoProjection.todos, session), list("last"))
      yield* store.get(TodoProjection.todos, session)
      assert.deepStrictEqual(readFrom, [0, 5, 6])
      readFrom = []
    }).pipe(Effect.provide(TodoEvents.layerChecked.pipe(Layer.provide(SessionLog.layerMemory)))))

  it.effect("keeps the state of at most 10,000 sessions per projection: the least recently read is folded again", () =>
    Effect.gen(function*() {
      const raw = yield* CheckedSessionLog
      const readFrom = new Map<string, Array<number>>()
      const counting = CheckedSessionLog.of({
        ...raw,
        read: (s, options) => {
          readFrom.set(s, [...(readFrom.get(s) ?? []), options?.fromSeq ?? 0])
          return raw.read(s, options)
        }
      })
      const store = yield* ProjectionStore.ProjectionStore.pipe(
        Effect.provide(ProjectionStore.layer.pipe(Layer.provide(Layer.succeed(CheckedSessionLog, counting))))
      )
      const ids = Array.from({ length: 10_001 }, (_, i) => SessionId.decodeSync(`s${i}`))
      const first = ids[0]!
      yield* raw.append(first, TodoEvents.write.type, { todos: list("kept") })
      // with an entry, a cell kept would read on from seq 1: only an evicted one reads from 0 again
      yield* raw.append(ids[1]!, TodoEvents.write.type, { todos: list("evicted") })
      yield* store.get(TodoProjection.todos, first)
      // Reading the first again keeps it recent; the second one read is then the oldest.
      for (const id of ids.slice(1, 3)) yield* store.get(TodoProjection.todos, id)
      yield* store.get(TodoProjection.todos, first)
      for (const id of ids.slice(3)) yield* store.get(TodoProjection.todos, id)
      yield* store.get(TodoProjection.todos, ids[1]!)
      assert.deepStrictEqual(readFrom.get(ids[1]!), [0, 0], "the least recently read was evicted: folded from the start")
      assert.deepStrictEqual(yield* store.get(TodoProjection.todos, ids[1]!), list("evicted"))
      assert.deepStrictEqual(yield* store.get(TodoProjection.todos, first), list("kept"))
      assert.deepStrictEqual(readFrom.get(first), [0, 1, 1], "the first session stayed: read on from where it was")
    }).pipe(Effect.provide(TodoEvents.layerChecked.pipe(Layer.provide(SessionLog.layerMemory)))))

  it.effect("streams the current list, then each change", () =>
    Effect.gen(function*() {
      const [log, store] = yield* services
      yield* log.append(session, TodoEvents.write.type, { todos: list("a") })
      const fiber = yield* store.changes(TodoProjection.todos, session).pipe(Stream.take(4), Stream.runCollect, Effect.forkChild)
      yield* Effect.yieldNow
      yield* log.append(session, TodoEvents.write.type, { todos: list("b") })
      yield* log.append(SessionId.decodeSync("elsewhere"), TodoEvents.write.type, { todos: list("x") })
      yield* log.append(session, TodoEvents.turnStart.type, {})
      yield* log.append(session, TodoEvents.write.type, { todos: list("c") })
      assert.deepStrictEqual(yield* Fiber.join(fiber), [list("a"), list("b"), null, list("c")])
    }).pipe(Effect.provide(Env)))

  // A session as a sequence of accepted writes and turn events, in any order.
  const Step = Schema.Union([
    Schema.Struct({
      write: Schema.Array(Schema.Struct({ content: Schema.Literals(["a", "b", "c", "d"]), status: Todo.Status })).check(
        Schema.isMaxLength(4)
      )
    }),
    Schema.Literals(["turn/start", "turn/end", "other"])
  ])
  const dedupe = (items: ReadonlyArray<Todo.Item>) => items.filter((item, i) => items.findIndex((o) => o.content === item.content) === i)

  it.effect.prop(
    "equals the last write since the last turn/start, after any sequence of calls and turn events",
    { steps: Schema.Array(Step).check(Schema.isMaxLength(12)) },
    ({ steps }) =>
      Effect.gen(function*() {
        const [log, store] = yield* services
        let expected: Todo.List | null = null
        for (const step of steps) {
          if (typeof step === "string") {
            yield* log.append(session, step, {})
            if (step === "turn/start") expected = null
          } else {
            const result = yield* TodoWrite.execute({ todos: dedupe(step.write) })
            expected = result.todos
          }
        }
        assert.deepStrictEqual(yield* store.get(TodoProjection.todos, session), expected)
      }).pipe(
        AgentSession.provide(session),
        Effect.provide(Layer.merge(Env, TodoPolicy.layer({ allowParallelInProgress: true })))
      ),
    { arbitrary: { runs: 50 } }
  )

  describe("checkpoints", () => {
    // One log and one checkpoint store shared by successive "reopenings" (fresh projection stores).
    const withShared = <A, E>(
      body: (
        log: SessionLog.Service,
        kv: KeyValueStore.KeyValueStore,
        reopen: (projection?: Projection.Projection<Todo.List | null>) => Effect.Effect<{
          readonly todos: Todo.List | null
          readonly readFrom: ReadonlyArray<number>
        }, unknown>
      ) => Effect.Effect<A, E>
    ) =>
      Effect.gen(function*() {
        const log = yield* CheckedSessionLog
        const kv = yield* KeyValueStore.KeyValueStore
        const reopen = (projection: Projection.Projection<Todo.List | null> = TodoProjection.todos) =>
          Effect.gen(function*() {
            const readFrom: Array<number> = []
            const counting = CheckedSessionLog.of({
              ...log,
              read: (s, options) => {
                readFrom.push(options?.fromSeq ?? 0)
                return log.read(s, options)
              }
            })
            const store = yield* ProjectionStore.ProjectionStore.pipe(
              Effect.provide(ProjectionStore.layerCheckpointed({ every: 10 }).pipe(
                Layer.provide(Layer.succeed(CheckedSessionLog, counting)),
                Layer.provide(Layer.succeed(KeyValueStore.KeyValueStore, kv))
              ))
            )
            return { todos: yield* store.get(projection, session), readFrom }
          })
        return yield* body(log, kv, reopen)
      }).pipe(Effect.provide(Layer.merge(TodoEvents.layerChecked.pipe(Layer.provideMerge(SessionLog.layerMemory)), KeyValueStore.layerMemory)))

    const writes = (log: SessionLog.Service, from: number, to: number) =>
      Effect.forEach(Array.from({ length: to - from }, (_, i) => from + i), (i) =>
        log.append(session, TodoEvents.write.type, { todos: list(`v${i}`) }), { discard: true })

    it.effect("reopening folds only the tail after the saved checkpoint", () =>
      withShared((log, _kv, reopen) =>
        Effect.gen(function*() {
          yield* writes(log, 0, 25)
          const first = yield* reopen()
          assert.deepStrictEqual(first.todos, list("v24"))
          assert.deepStrictEqual(first.readFrom, [0])
          yield* writes(log, 25, 27)
          const second = yield* reopen()
          assert.deepStrictEqual(second.todos, list("v26"))
          // one read, from the checkpoint's own entry (to check it) through the tail
          assert.deepStrictEqual(second.readFrom, [24])
        })
      ))

    it.effect("a changed fold version refolds from the start", () =>
      withShared((log, _kv, reopen) =>
        Effect.gen(function*() {
          yield* writes(log, 0, 15)
          yield* reopen()
          const changed = { ...TodoProjection.todos, version: TodoProjection.todos.version + 1 }
          const reopened = yield* reopen(changed)
          assert.deepStrictEqual(reopened.todos, list("v14"))
          assert.deepStrictEqual(reopened.readFrom, [0])
        })
      ))

    it.effect("a checkpoint of version 1, from before items carried evidence, is refolded, never trusted", () =>
      withShared((log, kv, reopen) =>
        Effect.gen(function*() {
          assert.strictEqual(TodoProjection.todos.version, 2)
          yield* writes(log, 0, 4)
          const withEvidence = [{ content: "v4", status: "completed" as const, evidence: "tests pass" }]
          yield* log.append(session, TodoEvents.write.type, { todos: withEvidence })
          const [last] = yield* Stream.runCollect(log.read(session, { fromSeq: 4 }))
          // exactly what a version-1 fold saved for this very entry: the right seq, type and time
          yield* kv.set(
            `todos.${session}`,
            JSON.stringify({ version: 1, seq: 4, type: last!.type, time: last!.time, state: list("v4") })
          )
          const reopened = yield* reopen()
          assert.deepStrictEqual(reopened.todos, withEvidence)
          assert.deepStrictEqual(reopened.readFrom, [0])
        })
      ))

    it.effect("a checkpoint ahead of the log, or from another log, is refused", () =>
      withShared((log, kv, reopen) =>
        Effect.gen(function*() {
          yield* writes(log, 0, 5)
          const key = `todos.${session}`
          yield* kv.set(key, JSON.stringify({ version: TodoProjection.todos.version, seq: 1000, type: "todo/write", time: 0, state: list("future") }))
          const ahead = yield* reopen()
          assert.deepStrictEqual(ahead.todos, list("v4"))
          assert.strictEqual(ahead.readFrom.at(-1), 0)
          yield* kv.set(key, JSON.stringify({ version: TodoProjection.todos.version, seq: 3, type: "turn/start", time: 0, state: list("other") }))
          const other = yield* reopen()
          assert.deepStrictEqual(other.todos, list("v4"))
          assert.strictEqual(other.readFrom.at(-1), 0)
        })
      ))

    it.effect("a damaged checkpoint is ignored, never trusted", () =>
      withShared((log, kv, reopen) =>
        Effect.gen(function*() {
          yield* writes(log, 0, 5)
          const key = `todos.${session}`
          for (const damaged of [`{"version":2,"seq":4`, `{"version":2,"seq":4,"type":"todo/write","time":0,"state":[{"content":" untrimmed","status":"pending"}]}`, `null`]) {
            yield* kv.set(key, damaged)
            const reopened = yield* reopen()
            assert.deepStrictEqual(reopened.todos, list("v4"))
            assert.deepStrictEqual(reopened.readFrom, [0])
          }
        })
      ))
  })

  // Second pass (2026-12-01, mutation testing): what a reopened store does with a checkpoint, measured
  // with a projection that counts entries (applying one twice, or missing one, shows), when it saves
  // the next one, and what it tells the operator when it ignores one.
  describe("checkpoints: exactly once, saved on schedule, and said why ignored", () => {
    const count = Projection.make<number>({
      key: "count",
      version: 1,
      initial: 0,
      step: (n) => n + 1,
      schema: Schema.Number
    })
    const logged: Array<unknown> = []
    const capture = Logger.make(({ message }) => logged.push(message))
    const warnings = () => logged.map((m) => (Array.isArray(m) ? m.join(" ") : String(m)))

    const withStore = <A, E>(
      body: (
        log: SessionLog.Service,
        kv: KeyValueStore.KeyValueStore,
        reopen: () => Effect.Effect<{
          readonly get: <S>(projection: Projection.Projection<S>) => Effect.Effect<S, unknown>
          readonly readFrom: Array<number>
        }>
      ) => Effect.Effect<A, E>
    ) =>
      Effect.gen(function*() {
        logged.length = 0
        const log = yield* CheckedSessionLog
        const kv = yield* KeyValueStore.KeyValueStore
        const reopen = () =>
          Effect.gen(function*() {
            const readFrom: Array<number> = []
            const counting = CheckedSessionLog.of({
              ...log,
              read: (s, options) => {
                readFrom.push(options?.fromSeq ?? 0)
                return log.read(s, options)
              }
            })
            const store = yield* ProjectionStore.ProjectionStore.pipe(
              Effect.provide(ProjectionStore.layerCheckpointed({ every: 10 }).pipe(
                Layer.provide(Layer.succeed(CheckedSessionLog, counting)),
                Layer.provide(Layer.succeed(KeyValueStore.KeyValueStore, kv))
              ))
            )
            return { get: <S>(projection: Projection.Projection<S>) => store.get(projection, session), readFrom }
          })
        return yield* body(log, kv, reopen)
      }).pipe(
        Effect.provide(Layer.mergeAll(
          TodoEvents.layerChecked.pipe(Layer.provideMerge(SessionLog.layerMemory)),
          KeyValueStore.layerMemory,
          Logger.layer([capture])
        ))
      )

    const writes = (log: SessionLog.Service, n: number) =>
      Effect.forEach(Array.from({ length: n }, (_, i) => i), () => log.append(session, "tick", {}), { discard: true })
    const savedSeq = (kv: KeyValueStore.KeyValueStore) =>
      Effect.map(kv.get(`count.${session}`), (text) => (text === undefined ? undefined : JSON.parse(text).seq))

    it.effect("a store reopened at its checkpoint applies every entry exactly once, with or without a tail", () =>
      withStore((log, kv, reopen) =>
        Effect.gen(function*() {
          yield* writes(log, 25)
          const first = yield* reopen()
          assert.strictEqual(yield* first.get(count), 25)
          assert.strictEqual(yield* savedSeq(kv), 24)
          // nothing after the checkpoint: its state, read on from it, and again
          const atCheckpoint = yield* reopen()
          assert.strictEqual(yield* atCheckpoint.get(count), 25)
          assert.strictEqual(yield* atCheckpoint.get(count), 25)
          assert.deepStrictEqual(atCheckpoint.readFrom, [24, 25])
          // a tail of two: each applied once, and a later read goes on after them
          yield* writes(log, 2)
          const withTail = yield* reopen()
          assert.strictEqual(yield* withTail.get(count), 27)
          assert.strictEqual(yield* withTail.get(count), 27)
          assert.deepStrictEqual(withTail.readFrom, [24, 27])
          assert.deepStrictEqual(warnings(), [])
        })
      ))

    it.effect("a checkpoint is saved once `every` entries were applied since the last, not before", () =>
      withStore((log, kv, reopen) =>
        Effect.gen(function*() {
          yield* writes(log, 9)
          const store = yield* reopen()
          assert.strictEqual(yield* store.get(count), 9)
          assert.isUndefined(yield* savedSeq(kv), "9 entries: no checkpoint yet")
          yield* writes(log, 1)
          assert.strictEqual(yield* store.get(count), 10)
          assert.strictEqual(yield* savedSeq(kv), 9)
          // reopened at that checkpoint, the count starts again from it
          const reopened = yield* reopen()
          yield* writes(log, 9)
          assert.strictEqual(yield* reopened.get(count), 19)
          assert.strictEqual(yield* savedSeq(kv), 9, "9 since the checkpoint: not yet")
          yield* writes(log, 1)
          assert.strictEqual(yield* reopened.get(count), 20)
          assert.strictEqual(yield* savedSeq(kv), 19)
        })
      ))

    it.effect("a checkpoint whose entry has another time is from another log: refused", () =>
      withStore((log, kv, reopen) =>
        Effect.gen(function*() {
          yield* writes(log, 5)
          const [entry] = yield* Stream.runCollect(log.read(session, { fromSeq: 4 }))
          yield* kv.set(`count.${session}`, JSON.stringify({ version: 1, seq: 4, type: entry!.type, time: entry!.time + 1, state: 100 }))
          const store = yield* reopen()
          assert.strictEqual(yield* store.get(count), 5)
          assert.deepStrictEqual(store.readFrom, [4, 0])
        })
      ))

    it.effect("says why it ignores a checkpoint, naming the projection and the session; nothing when there is none", () =>
      withStore((log, kv, reopen) =>
        Effect.gen(function*() {
          yield* writes(log, 5)
          const key = `count.${session}`
          const at = (why: string) => `ProjectionStore: ignoring the count checkpoint of ${session}: ${why}; refolding`
          const reopenedCount = () => Effect.flatMap(reopen(), (store) => store.get(count))
          assert.strictEqual(yield* reopenedCount(), 5)
          assert.deepStrictEqual(warnings(), [], "no checkpoint is not a problem")
          const [entry] = yield* Stream.runCollect(log.read(session, { fromSeq: 4 }))
          const checkpoint = { version: 1, seq: 4, type: entry!.type, time: entry!.time, state: 5 }
          for (
            const [text, why] of [
              ["{", "it is damaged"],
              // JSON, but not a checkpoint: a seq that isn't a number
              [JSON.stringify({ ...checkpoint, seq: "4" }), "it is damaged"],
              [JSON.stringify({ ...checkpoint, version: 7 }), "it is of fold version 7"],
              [JSON.stringify({ ...checkpoint, state: "five" }), "its state doesn't decode"],
              [JSON.stringify({ ...checkpoint, seq: 1000 }), "the log no longer holds its entry at seq 1000 (it is ahead of the log, or of another log)"]
            ] as const
          ) {
            logged.length = 0
            yield* kv.set(key, text)
            assert.strictEqual(yield* reopenedCount(), 5, why)
            assert.deepStrictEqual(warnings(), [at(why)])
          }
        })
      ))

    it.effect("a state its schema can't encode is not saved: no checkpoint rather than one that can't be read back", () =>
      withStore((log, kv, reopen) =>
        Effect.gen(function*() {
          const halves = Projection.make<number>({ key: "halves", version: 1, initial: 0, step: (n) => n + 0.5, schema: Schema.Int })
          yield* writes(log, 11)
          const store = yield* reopen()
          assert.strictEqual(yield* store.get(halves), 5.5)
          assert.isUndefined(yield* kv.get(`halves.${session}`))
        })
      ))

    it.effect("a checkpoint store that fails is worked around: the log is folded, and the operator told", () =>
      withStore((log, kv) =>
        Effect.gen(function*() {
          yield* writes(log, 12)
          const failing = KeyValueStore.KeyValueStore.of({
            ...kv,
            get: (key) => Effect.fail(new KeyValueStore.KeyValueStoreError({ message: "disk gone", method: "get", key })),
            set: (key) => Effect.fail(new KeyValueStore.KeyValueStoreError({ message: "disk full", method: "set", key }))
          })
          const store = yield* ProjectionStore.ProjectionStore.pipe(
            Effect.provide(ProjectionStore.layerCheckpointed({ every: 10 }).pipe(
              Layer.provide(Layer.succeed(CheckedSessionLog, log)),
              Layer.provide(Layer.succeed(KeyValueStore.KeyValueStore, failing))
            ))
          )
          assert.strictEqual(yield* store.get(count, session), 12)
          assert.deepStrictEqual(warnings(), [
            `ProjectionStore: ignoring the count checkpoint of ${session}: it can't be read: disk gone; refolding`,
            "ProjectionStore: can't save a checkpoint: disk full"
          ])
        })
      ))
  })
})
