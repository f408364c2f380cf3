import { assert, describe, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import { createInterface } from "node:readline"
import { PgClient } from "@effect/sql-pg"
import { Context, Deferred, Effect, Exit, Fiber, Layer, Logger, Redacted, Schedule, Stream } from "effect"
import * as ProjectionStore from "../../../src/projection/ProjectionStore.ts"
import * as SessionId from "../../../src/log/SessionId.ts"
import * as SessionLog from "../../../src/log/SessionLog.ts"
import * as SessionLogSql from "../../../src/log/sql/SessionLogSql.ts"
import * as PgTest from "./PgTest.ts"
import { conformance, failureOf, readAll } from "../SessionLogConformance.ts"
import * as TodoProjection from "../../../src/todo/TodoProjection.ts"
import * as TodoEvents from "../../../src/todo/TodoEvents.ts"
import { sqlAppender as appender } from "../../support/Executables.ts"

const backend = (table: string) => SessionLogSql.layer({ table, pageSize: 7 }).pipe(Layer.provide(PgTest.client))

const freshBackend = () =>
  Layer.unwrap(Effect.gen(function*() {
    const table = PgTest.uniqueTable()
    yield* PgTest.dropAfter(table)
    return backend(table)
  }))

const session = SessionId.decodeSync("shared-session")

/**
 * Two instances over a fresh table, each with a client of its own (so they hear each other's
 * commits), the first subscribed: what its subscriber has seen, and `until`, which waits for that
 * many entries.
 */
const twoListening = Effect.gen(function*() {
  const table = PgTest.uniqueTable()
  yield* PgTest.dropAfter(table)
  const listening = Effect.map(
    Layer.build(SessionLogSql.layer({ table }).pipe(Layer.provide(Layer.fresh(PgTest.client)))),
    Context.get(SessionLog.SessionLog)
  )
  const mine = yield* listening
  const others = yield* listening
  const seen: Array<number> = []
  yield* Effect.forkScoped(Stream.runForEach(yield* mine.subscribe, ({ entry }) => Effect.sync(() => void seen.push(entry.seq))))
  const until = (count: number) =>
    Effect.suspend(() => seen.length >= count ? Effect.void : Effect.fail("not yet")).pipe(
      Effect.retry(Schedule.spaced("10 millis")),
      Effect.timeout("10 seconds")
    )
  return { mine, others, seen, table, until }
})

describe.skipIf(PgTest.skipReason !== undefined)("SessionLogSql (PostgreSQL)", () => {
  conformance("PostgreSQL", freshBackend)

  it.effect("refuses a payload jsonb can't hold, or a type text can't, and writes nothing", () =>
    Effect.gen(function*() {
      const log = yield* SessionLog.SessionLog
      for (const [type, data] of [["x", { text: "a\u0000b" }], ["a\u0000b", {}]] as const) {
        const error = failureOf(yield* Effect.exit(log.append(session, type, data)))
        assert.strictEqual(error.reason._tag, "InvalidPayload")
      }
      assert.deepStrictEqual(yield* log.sessions, [])
    }).pipe(Effect.provide(freshBackend())))

  it.live("an event PostgreSQL can't hold is refused on its own: the appends gathered with it are stored", () =>
    Effect.gen(function*() {
      const log = yield* SessionLog.SessionLog
      const appends = [
        ...Array.from({ length: 20 }, (_, i) => [SessionId.decodeSync(`ok-${i}`), "x", { i }] as const),
        [session, "t\u0000", {}] as const,
        [session, "x", { text: "a\u0000b" }] as const,
        [session, "x", { fine: true }] as const
      ]
      const exits = yield* Effect.forEach(appends, ([s, type, data]) => Effect.exit(log.append(s, type, data)), { concurrency: "unbounded" })
      assert.deepStrictEqual(exits.map(Exit.isSuccess), [...Array.from({ length: 20 }, () => true), false, false, true])
      assert.deepStrictEqual((yield* readAll(log, session)).map((entry) => entry.data), [{ fine: true }])
    }).pipe(Effect.provide(freshBackend())))

  it.effect("options are validated when the layer is built: a bad page size, table or connection timeout fails with InvalidOptions", () =>
    Effect.gen(function*() {
      const bad: ReadonlyArray<readonly [SessionLogSql.Options, string]> = [
        [{ pageSize: 0 }, "pageSize"], // reads would never end
        [{ pageSize: 1.5 }, "pageSize"], // reads would stop after the first page
        [{ pageSize: -1 }, "pageSize"],
        [{ table: "bad-table" }, "table"],
        [{ table: "x; DROP TABLE y" }, "table"],
        [{ table: "" }, "table"],
        // @ts-expect-error: not a duration, as an untyped caller may pass
        [{ connectionTimeout: "soon" }, "connectionTimeout"],
        // Zero, negative or infinite: no wait at all, or a wait forever.
        [{ connectionTimeout: 0 }, "connectionTimeout"],
        [{ connectionTimeout: -5 }, "connectionTimeout"],
        [{ connectionTimeout: "-1 seconds" }, "connectionTimeout"],
        [{ connectionTimeout: Number.NaN }, "connectionTimeout"],
        [{ connectionTimeout: Number.POSITIVE_INFINITY }, "connectionTimeout"]
      ]
      for (const [options, key] of bad) {
        const error = failureOf(yield* Effect.exit(Layer.build(SessionLogSql.layer(options)).pipe(Effect.provide(PgTest.client))))
        assert.strictEqual(error._tag, "SessionLogError")
        if (error._tag !== "SessionLogError") continue
        assert.deepInclude(error.reason, { _tag: "InvalidOptions" })
        assert.include(error.message, key, JSON.stringify(options))
      }
    }))

  it.live("a server whose lock_timeout is shorter than another instance's creation of the table: the layer starts once it is done", () =>
    Effect.gen(function*() {
      const table = yield* PgTest.freshTable
      const created = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      // Another instance creating the table: it holds the creation's lock for 300 ms.
      const creating = yield* Effect.forkChild(PgTest.direct((sql) =>
        sql.withTransaction(Effect.gen(function*() {
          yield* sql`SELECT pg_advisory_xact_lock(hashtextextended(${`${table}:create`}, 0))`
          yield* Deferred.succeed(created, undefined)
          yield* Deferred.await(release)
        }))
      ), { startImmediately: true })
      yield* Deferred.await(created)
      yield* Effect.forkChild(Effect.andThen(Effect.sleep("300 millis"), Deferred.succeed(release, undefined)), { startImmediately: true })
      const strict = Layer.fresh(PgClient.layer({ url: Redacted.make(PgTest.url), startupParameters: { lock_timeout: "50ms" } }))
      const entry = yield* Effect.flatMap(SessionLog.SessionLog, (log) => log.append(SessionId.decodeSync("after-wait"), "n", {})).pipe(
        Effect.provide(SessionLogSql.layer({ table }).pipe(Layer.provide(strict)))
      )
      assert.strictEqual(entry.seq, 0)
      yield* Fiber.join(creating)
    }), 30_000)

  it.live("a subscriber gets, in order, every entry another instance commits to a session this one appends to as well", () =>
    Effect.gen(function*() {
      const { mine, others, until, seen } = yield* twoListening
      const s = SessionId.decodeSync("both-append")
      // The other instance's first commit is heard first: from then on, this one's commits to the
      // session must not let the other's go unpublished, however late their announcements come.
      yield* others.append(s, "other", { i: 0 })
      yield* until(1)
      for (let i = 1; i <= 40; i++) {
        yield* others.append(s, "other", { i })
        yield* mine.append(s, "mine", { i })
      }
      yield* until(81)
      assert.deepStrictEqual(seen, Array.from({ length: 81 }, (_, i) => i))
    }).pipe(Effect.scoped), 30_000)

  it.live("a dropped LISTEN connection: what was committed while it was down reaches the subscriber once it listens again", () =>
    Effect.gen(function*() {
      const { others, seen, table, until } = yield* twoListening
      const s = SessionId.decodeSync("listen-dropped")
      yield* others.append(s, "other", { i: 0 })
      yield* until(1)
      // The listener's connection is lost, and another process commits seq 1 (as the log does: the row
      // and its NOTIFY) in the same transaction, right after; nothing after it. Whether its NOTIFY comes
      // before the listener listens again (lost: the core reads on once it listens) or after, it arrives.
      const [row] = yield* PgTest.direct((sql) =>
        sql.withTransaction(Effect.andThen(
          sql<{ n: number | bigint }>`SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity
            WHERE query ILIKE ${`LISTEN %${table}_commits%`} AND pid <> pg_backend_pid()`,
          (terminated) =>
            Effect.as(
              Effect.andThen(
                sql`INSERT INTO ${sql(table)} (session, seq, type, time, data) VALUES (${s}, 1, 'other', 0, '{"i":1}'::jsonb)`,
                sql`SELECT pg_notify(${`${table}_commits`}, ${`1-1 ${s}`})`
              ),
              terminated
            )
        ))
      )
      assert.strictEqual(Number(row!.n), 1, "the listener's connection was found")
      yield* until(2)
      assert.deepStrictEqual(seen, [0, 1])
    }).pipe(Effect.scoped, Effect.provide(Logger.layer([]))), 30_000)

  it.live("two processes appending to one session get seqs 0..n-1, and every acknowledged append is there", () =>
    Effect.gen(function*() {
      const table = PgTest.uniqueTable()
      yield* PgTest.dropAfter(table)
      // create the table first, so both children find it
      yield* Effect.flatMap(SessionLog.SessionLog, (log) => log.sessions).pipe(Effect.provide(backend(table)))
      const perProcess = 300
      // A child that fails or hangs (killed after a minute) doesn't end the test: what it left is checked.
      // Both connect first, then start together, so that their appends interleave.
      const children = [0, 1].map(() => {
        const child = spawn(process.execPath, [appender, PgTest.url, table, session, String(perProcess)], {
          stdio: ["pipe", "pipe", "pipe"],
          timeout: 60_000
        })
        const acked: Array<number> = []
        let stderr = ""
        let markReady: () => void
        const ready = new Promise<void>((resolve) => (markReady = resolve))
        child.stderr.on("data", (chunk) => (stderr += chunk))
        createInterface({ input: child.stdout }).on("line", (line) =>
          line === "ready" ? markReady() : acked.push(Number(line)))
        const exited = new Promise<{ acked: Array<number>; code: number | null; stderr: string }>((resolve) =>
          child.on("exit", (code) => (markReady(), resolve({ acked, code, stderr }))))
        return { child, ready, exited }
      })
      yield* Effect.promise(() => Promise.all(children.map((c) => c.ready)))
      for (const { child } of children) child.stdin.end("go\n")
      const [a, b] = yield* Effect.promise(() => Promise.all([children[0]!.exited, children[1]!.exited]))
      const entries = yield* Effect.flatMap(SessionLog.SessionLog, (log) => Stream.runCollect(log.read(session))).pipe(
        Effect.provide(backend(table))
      )
      const seqs = entries.map((e) => e.seq)
      assert.deepStrictEqual(seqs, Array.from({ length: seqs.length }, (_, i) => i), "seqs are contiguous from 0")
      const acked = new Set([...a.acked, ...b.acked])
      assert.strictEqual(acked.size, a.acked.length + b.acked.length, "no seq acknowledged twice")
      for (const seq of acked) assert.isBelow(seq, seqs.length, `acknowledged seq ${seq} is stored`)
      assert.strictEqual(a.code, 0, `the first appender failed: ${a.stderr}`)
      assert.strictEqual(b.code, 0, `the second appender failed: ${b.stderr}`)
      assert.strictEqual(seqs.length, 2 * perProcess)
      assert.strictEqual(acked.size, 2 * perProcess, "every append was acknowledged")
      // the two processes really interleaved
      const writers = entries.map((e) => (e.data as { writer: number }).writer)
      assert.isAbove(writers.filter((w, i) => i > 0 && w !== writers[i - 1]).length, 1)
    }), 120_000)

  it.live("a write through one instance shows up in another instance's projection stream", () =>
    Effect.gen(function*() {
      const table = PgTest.uniqueTable()
      yield* PgTest.dropAfter(table)
      // Two instances: each its own pool, its own SessionLog, its own projection store.
      const instance = () =>
        ProjectionStore.layer.pipe(
          Layer.provideMerge(TodoEvents.layerChecked),
          Layer.provideMerge(SessionLogSql.layer({ table })),
          Layer.provide(Layer.fresh(PgTest.client))
        )
      const a = yield* Layer.build(instance())
      const b = yield* Layer.build(instance())
      const storeB = (yield* ProjectionStore.ProjectionStore.pipe(Effect.provide(b)))
      const logA = yield* SessionLog.SessionLog.pipe(Effect.provide(a))
      // B's stream has shown the current state (so it is subscribed) before A writes.
      const subscribed = yield* Deferred.make<void>()
      const sawFirst = yield* Deferred.make<void>()
      let states = 0
      const seen = yield* storeB.changes(TodoProjection.todos, session).pipe(
        Stream.tap(() => Deferred.succeed(++states === 1 ? subscribed : sawFirst, undefined)),
        Stream.take(3),
        Stream.runCollect,
        Effect.forkChild
      )
      yield* Deferred.await(subscribed)
      yield* logA.append(session, "todo/write", { todos: [{ content: "from A", status: "in_progress" }] })
      // B folds what it reads when told of a commit: had A's second append landed before that read, the
      // two would show as one change.
      yield* Deferred.await(sawFirst)
      yield* logA.append(session, "turn/start", {})
      assert.deepStrictEqual(yield* Fiber.join(seen).pipe(Effect.timeout("10 seconds")), [null, [{ content: "from A", status: "in_progress" }], null])
    }).pipe(Effect.scoped), 60_000)
})

if (PgTest.skipReason !== undefined) {
  // Visible in the report: why the suite above didn't run.
  describe("SessionLogSql (PostgreSQL)", () => it.skip(`skipped: ${PgTest.skipReason}`, () => {}))
}
