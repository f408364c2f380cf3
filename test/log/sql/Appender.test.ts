/**
 * How the SQL backend gathers appends across sessions, against the real server:
 * - the batches of several sessions that arrive while a statement is in flight go together in the
 *   next statement, each session's seqs running on from its own last;
 * - a group is bounded (1,000 events); what gathered beyond goes in the next;
 * - a group commits all or none: a row the database refuses fails every append of its group, stores
 *   none of them, and the sessions go on from where they were;
 * - an append never joins a transaction its caller has open: it is committed when it returns;
 * - two instances appending to the same sessions at once (groups, try-locks failing, the waiting
 *   path) keep every session's seqs contiguous and every acknowledged append stored.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Deferred, Duration, Effect, Exit, Fiber, Latch, Layer, Scheduler, Scope, Stream } from "effect"
import { PgClient } from "@effect/sql-pg"
import { Redacted } from "effect"
import { SqlClient, SqlError } from "effect/sql"
import * as SessionId from "../../../src/log/SessionId.ts"
import * as SessionLog from "../../../src/log/SessionLog.ts"
import * as Appender from "../../../src/log/sql/Appender.ts"
import * as SessionLogSql from "../../../src/log/sql/SessionLogSql.ts"
import { failureOf } from "../SessionLogConformance.ts"
import * as PgTest from "./PgTest.ts"

const { direct, freshTable, instance, rowsOf } = PgTest

/** The statement that stores a group of appends. */
const isAppend = (text: string) => text.includes("pg_try_advisory_xact_lock")

/** The sessions a group's statement carries (its rows are one JSON parameter). */
const sessionsIn = (args: ReadonlyArray<unknown>): Array<string> => {
  const rows = args.find((arg): arg is string => typeof arg === "string" && arg.startsWith("[{"))
  return rows === undefined ? [] : [...new Set((JSON.parse(rows) as Array<{ s: string }>).map((row) => row.s))].sort()
}

const id = SessionId.decodeSync

/**
 * Hooks that record each group's sessions, and `hold`, which forks an append and answers once its
 * statement is in flight, held there until `release` opens: what arrives meanwhile gathers.
 */
const holding = Effect.gen(function*() {
  const groups: Array<Array<string>> = []
  const release = yield* Latch.make(false)
  let inFlight: Deferred.Deferred<void> | undefined
  const hooks: PgTest.Hooks = {
    statement: (text, run, args) => {
      if (!isAppend(text)) return run
      const held = inFlight
      inFlight = undefined
      return Effect.andThen(
        Effect.sync(() => groups.push(sessionsIn(args))),
        held === undefined ? run : Effect.andThen(Effect.andThen(Deferred.succeed(held, undefined), release.await), run)
      )
    }
  }
  const hold = <A, E>(append: Effect.Effect<A, E>) =>
    Effect.gen(function*() {
      const started = yield* Deferred.make<void>()
      inFlight = started
      const fiber = yield* Effect.forkChild(append)
      yield* Deferred.await(started)
      return fiber
    })
  return { groups, hold, hooks, release }
})

describe.skipIf(PgTest.skipReason !== undefined)("SessionLogSql appends gathered across sessions (PostgreSQL)", () => {
  it.live("the log closing while a group is in flight: the group is answered, and the appends gathered behind it fail, saying so", () =>
    Effect.gen(function*() {
      const table = yield* freshTable
      const { hold, hooks, release } = yield* holding
      const scope = yield* Scope.make()
      const log = yield* SessionLog.SessionLog.pipe(Effect.provide(yield* Layer.buildWithScope(instance(table, hooks), scope)))
      yield* log.append(id("a"), "n", { i: 0 })
      const inFlight = yield* hold(Effect.exit(log.append(id("a"), "n", { i: 1 })))
      const behind = yield* Effect.forkChild(Effect.exit(log.append(id("b"), "n", { i: 0 })), { startImmediately: true })
      yield* Effect.sleep("20 millis")
      const closing = yield* Effect.forkChild(Scope.close(scope, Exit.void))
      yield* Effect.sleep("50 millis")
      yield* release.open
      yield* Fiber.join(closing).pipe(Effect.timeout("5 seconds"))
      const first = yield* Fiber.join(inFlight).pipe(Effect.timeout("5 seconds"))
      assert.isTrue(Exit.isSuccess(first), `the group in flight was stored and answered: ${String(first)}`)
      const error = failureOf(yield* Fiber.join(behind).pipe(Effect.timeout("5 seconds")))
      assert.match(error.message, /closed/)
      assert.deepStrictEqual((yield* rowsOf(table, "a")).map((row) => row.seq), [0, 1])
      assert.deepStrictEqual(yield* rowsOf(table, "b"), [], "nothing of the append that failed")
    }), 30_000)

  it.live("an append interrupted wherever its fiber yields leaves the appender storing: the next append is answered", () =>
    Effect.gen(function*() {
      const table = yield* freshTable
      // Over the log's own table: the layer creates it.
      yield* Layer.build(instance(table, {}))
      const sql = yield* SqlClient.SqlClient
      const appender = yield* Appender.make({ sql, table, channel: `${table}_commits`, connectionTimeout: Duration.seconds(30) })
      const prepared = (i: number) => [{ type: "n", time: 0, data: { i }, json: JSON.stringify({ i }) }]
      for (let ops = 3; ops <= 24; ops++) {
        for (let yields = 0; yields <= 3; yields++) {
          const fiber = yield* Effect.forkChild(
            appender.append("s", prepared(ops)).pipe(Effect.provideService(Scheduler.MaxOpsBeforeYield, ops))
          )
          for (let i = 0; i < yields; i++) yield* Effect.yieldNow
          yield* Fiber.interrupt(fiber)
          const next = yield* Effect.exit(appender.append("s", prepared(-ops)).pipe(Effect.timeout("5 seconds")))
          assert.isTrue(Exit.isSuccess(next), `an append after one interrupted (ops ${ops}, ${yields} yields) was answered: ${String(next)}`)
        }
      }
      const seqs = (yield* rowsOf(table, "s")).map((row) => row.seq)
      assert.deepStrictEqual(seqs, seqs.map((_, i) => i))
    }).pipe(Effect.provide(PgTest.client)), 60_000)

  it.live("the batches of several sessions that arrive while a statement is in flight go together in the next one", () =>
    Effect.gen(function*() {
      const table = yield* freshTable
      const { groups, hold, hooks, release } = yield* holding
      yield* Effect.flatMap(SessionLog.SessionLog, (log) =>
        Effect.gen(function*() {
          yield* log.append(id("b"), "n", { i: 0 })
          const first = yield* hold(log.append(id("a"), "n", { i: 0 }))
          // While a's statement is held, b and c arrive; b twice (the core gathers a session's own appends).
          const rest = yield* Effect.forkChild(
            Effect.all([
              log.append(id("b"), "n", { i: 1 }),
              log.append(id("c"), "n", { i: 0 }),
              log.append(id("b"), "n", { i: 2 })
            ], { concurrency: "unbounded" }),
            { startImmediately: true }
          )
          yield* release.open
          assert.strictEqual((yield* Fiber.join(first)).seq, 0)
          assert.deepStrictEqual((yield* Fiber.join(rest)).map((entry) => entry.seq), [1, 0, 2])
          // b's second append waited in the core for its first, then went alone.
          assert.deepStrictEqual(groups, [["b"], ["a"], ["b", "c"], ["b"]])
        })).pipe(Effect.provide(instance(table, hooks)), Effect.ensuring(release.open))
      assert.deepStrictEqual(yield* rowsOf(table, "b"), [0, 1, 2].map((i) => ({ seq: i, data: { i } })))
      assert.deepStrictEqual(yield* rowsOf(table, "c"), [{ seq: 0, data: { i: 0 } }])
    }))

  it.live("a group commits all or none: a row the database refuses fails every append of its group and stores none", () =>
    Effect.gen(function*() {
      const table = yield* freshTable
      const { groups, hold, hooks, release } = yield* holding
      yield* Effect.flatMap(SessionLog.SessionLog, (log) =>
        Effect.gen(function*() {
          for (const session of ["a", "bad", "c"]) yield* log.append(id(session), "n", { i: 0 })
          // From now on the database refuses any new row of session "bad" (not an error worth retrying).
          yield* direct((sql) => sql.unsafe(`ALTER TABLE ${table} ADD CONSTRAINT ${table}_no_bad CHECK (session <> 'bad' OR seq = 0)`))
          groups.length = 0
          const holder = yield* hold(log.append(id("held"), "n", { i: 0 }))
          const group = yield* Effect.forkChild(
            Effect.all(["a", "bad", "c"].map((session) => Effect.exit(log.append(id(session), "n", { i: 1 }))), {
              concurrency: "unbounded"
            }),
            { startImmediately: true }
          )
          yield* release.open
          assert.strictEqual((yield* Fiber.join(holder)).seq, 0)
          const exits = yield* Fiber.join(group)
          assert.deepStrictEqual(groups, [["held"], ["a", "bad", "c"]], "one statement for the three sessions, not retried")
          for (const [i, session] of ["a", "bad", "c"].entries()) {
            const exit = exits[i]!
            assert.isTrue(Exit.isFailure(exit), `${session}'s append succeeded though its group failed`)
            const error = failureOf(exit)
            assert.strictEqual(error.reason._tag, "StorageFailure")
            assert.strictEqual(error.session, session)
            assert.isTrue(SqlError.isSqlError(error.cause), `the driver's error is kept as the cause: ${error.cause}`)
            assert.strictEqual(SqlError.isSqlError(error.cause) ? error.cause.reason._tag : "", "ConstraintError")
          }
          // Nothing of the group was stored; the sessions go on from where they were.
          for (const session of ["a", "c"]) {
            assert.deepStrictEqual((yield* rowsOf(table, session)).map((row) => row.seq), [0])
            assert.strictEqual((yield* log.append(id(session), "n", { i: 2 })).seq, 1)
          }
          assert.deepStrictEqual((yield* rowsOf(table, "bad")).map((row) => row.seq), [0])
        })).pipe(Effect.provide(instance(table, hooks)), Effect.ensuring(release.open))
    }))

  it.live("a group is bounded: of 1,100 sessions' appends that gathered, 1,000 go in one statement, the rest in the next", () =>
    Effect.gen(function*() {
      const table = yield* freshTable
      const { groups, hold, hooks, release } = yield* holding
      yield* Effect.flatMap(SessionLog.SessionLog, (log) =>
        Effect.gen(function*() {
          const holder = yield* hold(log.append(id("held"), "n", {}))
          const many = yield* Effect.forkChild(
            Effect.forEach(Array.from({ length: 1100 }, (_, i) => id(`s${i}`)), (session) => log.append(session, "n", {}), {
              concurrency: "unbounded"
            }),
            { startImmediately: true }
          )
          yield* release.open
          yield* Fiber.join(holder)
          assert.isTrue((yield* Fiber.join(many)).every((entry) => entry.seq === 0))
          assert.deepStrictEqual(groups.map((group) => group.length), [1, 1000, 100])
        })).pipe(Effect.provide(instance(table, hooks)), Effect.ensuring(release.open))
    }), 60_000)

  it.effect("an append made inside a transaction of the caller's is not part of it: it is committed when it returns", () =>
    Effect.gen(function*() {
      const table = yield* freshTable
      yield* Effect.gen(function*() {
        const log = yield* SessionLog.SessionLog
        const sql = yield* SqlClient.SqlClient
        // The caller's transaction rolls back after the append returned: the append stays.
        const rolledBack = yield* Effect.exit(sql.withTransaction(Effect.andThen(
          log.append(id("inside"), "n", { i: 0 }),
          Effect.fail("the caller's own failure")
        )))
        assert.isTrue(Exit.isFailure(rolledBack))
        assert.deepStrictEqual(yield* rowsOf(table, "inside"), [{ seq: 0, data: { i: 0 } }])
        assert.strictEqual((yield* log.append(id("inside"), "n", { i: 1 })).seq, 1)
      }).pipe(Effect.provide(SessionLogSql.layer({ table }).pipe(Layer.provideMerge(PgTest.client))))
    }))

  it.live("callers inside transactions of their own, holding every connection of the pool, each appending: the appends fail, not stored, rather than wait forever", () =>
    onPoolOf(3, (log, sql, table) =>
      Effect.gen(function*() {
        // Each caller holds a connection for its transaction while its append waits for one.
        const appended = yield* Effect.forEach(
          [0, 1, 2],
          (i) => Effect.exit(sql.withTransaction(Effect.andThen(Effect.sleep("50 millis"), log.append(id(`own-${i}`), "n", { i })))),
          { concurrency: "unbounded" }
        )
        // The first to give up frees its connection, and the others' appends may get it.
        const failed = appended.flatMap((exit, i) => Exit.isFailure(exit) ? [i] : [])
        assert.isNotEmpty(failed, "with every connection held, a group can't be stored")
        for (const i of failed) {
          const error = failureOf(appended[i]!)
          assert.deepInclude(error.reason, { _tag: "StorageFailure" })
          assert.include(error.message, "no connection of the SQL client's came free within 1s, so this append was not stored")
        }
        const stored = yield* sql<{ readonly session: string }>`SELECT session FROM ${sql(table)} ORDER BY session`
        const succeeded = [0, 1, 2].filter((i) => !failed.includes(i)).map((i) => `own-${i}`)
        assert.deepStrictEqual(stored.map((row) => row.session), succeeded, "a failed append was not stored")
        // The callers' transactions over, their connections are free again.
        assert.strictEqual((yield* log.append(id(`own-${failed[0]}`), "n", {})).seq, 0)
      })), 30_000)

  it.live("a plain append's group waiting for a connection while callers in transactions hold them all and join its session, or another: none waits forever", () =>
    onPoolOf(3, (log, sql, table) =>
      Effect.gen(function*() {
        const holding = yield* Latch.make()
        let held = 0
        const go = yield* Latch.make()
        // Three callers, each in a transaction holding a connection, append once a plain caller's
        // group waits for one: two to the plain caller's session (joining its lane), one to another.
        const caller = (session: string) =>
          Effect.exit(sql.withTransaction(Effect.gen(function*() {
            yield* sql`SELECT 1`
            if (++held === 3) yield* holding.open
            yield* go.await
            return yield* log.append(id(session), "n", {})
          })))
        const callers = yield* Effect.forkChild(
          Effect.all([caller("led"), caller("led"), caller("other")], { concurrency: "unbounded" }),
          { startImmediately: true }
        )
        yield* holding.await
        const plain = yield* Effect.forkChild(Effect.exit(log.append(id("led"), "n", {})), { startImmediately: true })
        yield* Effect.sleep("100 millis")
        yield* go.open
        const exits = [yield* Fiber.join(plain), ...(yield* Fiber.join(callers))]
        for (const exit of exits.filter(Exit.isFailure)) {
          assert.include(failureOf(exit).message, "came free within 1s, so this append was not stored")
        }
        assert.isTrue(Exit.isFailure(exits[0]!), "no connection came free for the plain caller's group")
        const stored = yield* sql<{ readonly n: number | bigint }>`SELECT count(*) AS n FROM ${sql(table)}`
        assert.strictEqual(Number(stored[0]!.n), exits.filter(Exit.isSuccess).length, "what failed was not stored")
      }).pipe(Effect.timeout("20 seconds"))), 30_000)

  it.live("a session another process holds, waited for on a connection of its own: the wait for that connection is bounded too", () =>
    Effect.gen(function*() {
      const table = yield* freshTable
      const session = id("held-elsewhere")
      // Another process holds the session's lock until released.
      const released = yield* Deferred.make<void>()
      const locked = yield* Deferred.make<void>()
      const other = yield* Effect.forkChild(PgTest.direct((sql) =>
        sql.withTransaction(Effect.gen(function*() {
          yield* sql`SELECT pg_advisory_xact_lock(hashtextextended(${`${table}:${session}`}, 0))`
          yield* Deferred.succeed(locked, undefined)
          yield* Deferred.await(released)
        }))
      ), { startImmediately: true })
      yield* Deferred.await(locked)
      // Once the group has found the session held, two transactions of the caller's take both connections.
      const blockers = yield* Deferred.make<void>()
      let client: SqlClient.SqlClient | undefined
      const hooks: PgTest.Hooks = {
        statement: (text, run) =>
          !text.includes("pg_try_advisory_xact_lock") ? run : Effect.tap(run, () =>
            Effect.gen(function*() {
              const sql = client!
              // Transactions of their own, not on the group's connection the hook runs on.
              const outside = <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, E> =>
                Effect.updateContext(effect, Context.omit(sql.transactionService))
              const blocker = outside(sql.withTransaction(Effect.andThen(sql`SELECT 1`, Deferred.await(blockers))))
              yield* Effect.forkDetach(blocker, { startImmediately: true })
              yield* Effect.forkDetach(blocker, { startImmediately: true })
              yield* Effect.sleep("50 millis")
            }))
      }
      const pooled = Layer.fresh(PgClient.layer({ url: Redacted.make(PgTest.url), maxConnections: 2 }))
      yield* Effect.gen(function*() {
        const log = yield* SessionLog.SessionLog
        const failed = failureOf(yield* Effect.exit(log.append(session, "n", {})))
        assert.include(failed.message, "came free within 1s, so this append was not stored")
        yield* Deferred.succeed(blockers, undefined)
      }).pipe(
        Effect.timeout("20 seconds"),
        Effect.ensuring(Effect.andThen(Deferred.succeed(blockers, undefined), Deferred.succeed(released, undefined))),
        Effect.provide(SessionLogSql.layer({ table, connectionTimeout: "1 second" }).pipe(
          Layer.provide(Layer.effect(SqlClient.SqlClient, Effect.map(SqlClient.SqlClient, (real) => PgTest.wrap(client = real, hooks)))),
          Layer.provideMerge(pooled)
        ))
      )
      yield* Fiber.join(other)
    }), 30_000)

  it.live("two instances appending to the same sessions at once: contiguous seqs, every acknowledged append stored", () =>
    Effect.gen(function*() {
      const table = yield* freshTable
      const sessions = Array.from({ length: 6 }, (_, i) => id(`shared-${i}`))
      const perInstance = 25
      // Counts the transactions that waited for a lock the other instance held.
      let waited = 0
      const counting: PgTest.Hooks = {
        statement: (text, run) => text.includes("WITH ORDINALITY") ? Effect.andThen(Effect.sync(() => waited++), run) : run
      }
      const a = yield* Layer.build(instance(table, counting))
      const b = yield* Layer.build(instance(table, counting))
      const logs = [yield* SessionLog.SessionLog.pipe(Effect.provide(a)), yield* SessionLog.SessionLog.pipe(Effect.provide(b))]
      // Each instance, each session: one append after another, all sessions and both instances at once;
      // again (up to 5 rounds) until the instances have contended, which a loaded machine can delay.
      const acked: Array<{ readonly session: SessionId.SessionId; readonly seq: number; readonly writer: number; readonly i: number }> = []
      let rounds = 0
      while (rounds === 0 || (waited === 0 && rounds < 5)) {
        const from = rounds++ * perInstance
        acked.push(
          ...(yield* Effect.forEach(
            logs.flatMap((log, writer) => sessions.map((session) => ({ log, writer, session }))),
            ({ log, session, writer }) =>
              Effect.forEach(Array.from({ length: perInstance }, (_, k) => from + k), (i) =>
                Effect.map(log.append(session, "n", { writer, i }), (entry) => ({ session, seq: entry.seq, writer, i }))),
            { concurrency: "unbounded" }
          )).flat()
        )
      }
      // Typically about 50 of the 300 appends of a round: the instances really did contend for the sessions.
      assert.isAbove(waited, 0, `no append found a session's lock held by the other instance in ${rounds} rounds`)
      for (const session of sessions) {
        const stored = yield* Stream.runCollect(logs[0]!.read(session))
        assert.deepStrictEqual(stored.map((entry) => entry.seq), Array.from({ length: 2 * perInstance * rounds }, (_, i) => i))
        for (const ack of acked.filter((ack) => ack.session === session)) {
          assert.deepStrictEqual(stored[ack.seq]!.data, { writer: ack.writer, i: ack.i }, `${session} seq ${ack.seq}`)
        }
      }
    }).pipe(Effect.scoped), 60_000)
})

/**
 * Runs `f` with a log over a fresh table whose client has a pool of `maxConnections` (the log's
 * statements wait at most a second for one), and that client.
 */
const onPoolOf = <A, E>(
  maxConnections: number,
  f: (log: SessionLog.Service, sql: SqlClient.SqlClient, table: string) => Effect.Effect<A, E>
) =>
  Effect.gen(function*() {
    const table = yield* freshTable
    const pooled = Layer.fresh(PgClient.layer({ url: Redacted.make(PgTest.url), maxConnections }))
    return yield* Effect.gen(function*() {
      return yield* f(yield* SessionLog.SessionLog, yield* SqlClient.SqlClient, table)
    }).pipe(Effect.provide(SessionLogSql.layer({ table, connectionTimeout: "1 second" }).pipe(Layer.provideMerge(pooled))))
  })
