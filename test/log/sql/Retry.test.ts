/**
 * What the SQL backend retries, what it refuses to, and how it reads, against the real server:
 * - a connection lost after the append's statement reached the server (the outcome unknown to the
 *   client) fails the append and is NOT retried: a retry would store the event twice;
 * - a serialization failure (raised by the server, before commit) rolled back, so it is retried, once;
 * - appenders on different instances are serialized per session by the advisory lock: an append to a
 *   session whose lock another process holds waits for that process's commit, then follows it;
 * - reads page through a session: one query per page.
 *
 * The client is the real `PgClient` behind a thin `SqlClient` wrapper that sees every statement and
 * transaction.
 */
import { assert, describe, it } from "@effect/vitest"
import { PgClient } from "@effect/sql-pg"
import { Deferred, Effect, Exit, Fiber, Latch, Layer, Redacted, Stream } from "effect"
import { type SqlClient, SqlError } from "effect/sql"
import * as SessionId from "../../../src/log/SessionId.ts"
import * as SessionLog from "../../../src/log/SessionLog.ts"
import * as SessionLogSql from "../../../src/log/sql/SessionLogSql.ts"
import { failureOf } from "../SessionLogConformance.ts"
import * as PgTest from "./PgTest.ts"

const { direct, freshTable, instance, rowsOf } = PgTest

/** The statement that stores a group of appends (an autocommitted statement of its own). */
const isAppend = (text: string) => text.includes("pg_try_advisory_xact_lock")

const session = SessionId.decodeSync("retry-session")

describe.skipIf(PgTest.skipReason !== undefined)("SessionLogSql retries and reads (PostgreSQL)", () => {
  it.live("a connection lost after the append reached the server fails the append, which is not retried: the event is stored once", () =>
    Effect.gen(function*() {
      const table = yield* freshTable
      let statements = 0
      let loseNext = false
      const hooks: PgTest.Hooks = {
        statement: (text, run) =>
          !isAppend(text) ? run : Effect.andThen(
            Effect.sync(() => statements++),
            Effect.flatMap(run, (value) => {
              if (!loseNext) return Effect.succeed(value)
              loseNext = false
              // The statement reached the server and committed; the client never heard.
              return Effect.fail(
                new SqlError.SqlError({
                  reason: new SqlError.ConnectionError({ cause: new Error("socket closed"), message: "connection lost after commit" })
                })
              )
            })
          )
      }
      yield* Effect.flatMap(SessionLog.SessionLog, (log) =>
        Effect.gen(function*() {
          yield* log.append(session, "n", { i: 0 })
          loseNext = true
          const before = statements
          const lost = yield* Effect.exit(log.append(session, "n", { i: 1 }))
          assert.strictEqual(
            statements - before,
            1,
            `an append whose commit may have happened was retried (${lost}): it may be stored twice`
          )
          const error = failureOf(lost)
          assert.strictEqual(error.reason._tag, "StorageFailure")
          assert.include(error.message, "connection lost after commit")
          assert.strictEqual((yield* log.append(session, "n", { i: 2 })).seq, 2)
        })).pipe(Effect.provide(instance(table, hooks)))
      // The commit the client never heard of is there, once: a retry would have stored { i: 1 } twice.
      assert.deepStrictEqual(yield* rowsOf(table, session), [
        { seq: 0, data: { i: 0 } },
        { seq: 1, data: { i: 1 } },
        { seq: 2, data: { i: 2 } }
      ])
    }))

  it.live("a serialization failure raised by the server before commit is retried, and the event stored once", () =>
    Effect.gen(function*() {
      const table = yield* freshTable
      let statements = 0
      const failures: Array<string> = []
      const hooks: PgTest.Hooks = {
        statement: (text, run) =>
          !isAppend(text) ? run : run.pipe(
            Effect.tapError((error) => Effect.sync(() => failures.push(error.reason._tag))),
            Effect.ensuring(Effect.sync(() => statements++))
          )
      }
      yield* Effect.flatMap(SessionLog.SessionLog, (log) =>
        Effect.gen(function*() {
          yield* log.append(session, "n", { i: 0 })
          // The server refuses the next insert once with SQLSTATE 40001; a sequence counts the tries
          // (sequences are not rolled back).
          const counter = `${table}_tries`
          yield* direct((sql) =>
            Effect.gen(function*() {
              yield* sql.unsafe(`CREATE SEQUENCE ${counter}`)
              yield* sql.unsafe(`CREATE FUNCTION ${table}_fail_once() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                  IF nextval('${counter}') = 1 THEN
                    RAISE EXCEPTION 'injected serialization failure' USING ERRCODE = '40001';
                  END IF;
                  RETURN NEW;
                END $$`)
              yield* sql.unsafe(`CREATE TRIGGER ${table}_fail_once BEFORE INSERT ON ${table}
                FOR EACH ROW EXECUTE FUNCTION ${table}_fail_once()`)
            })
          )
          const before = statements
          const appended = yield* Effect.exit(log.append(session, "n", { i: 1 }))
          assert.isTrue(Exit.isSuccess(appended), `a serialization failure (rolled back) was not retried: ${appended}`)
          assert.strictEqual(Exit.isSuccess(appended) ? appended.value.seq : -1, 1)
          assert.deepStrictEqual(failures, ["SerializationError"])
          assert.strictEqual(statements - before, 2, "the rolled-back statement was retried once")
          const [tries] = yield* direct((sql) => sql<{ last_value: number | bigint }>`SELECT last_value FROM ${sql(counter)}`)
          assert.strictEqual(Number(tries!.last_value), 2)
          yield* direct((sql) =>
            Effect.andThen(sql.unsafe(`DROP FUNCTION ${table}_fail_once() CASCADE`), sql.unsafe(`DROP SEQUENCE ${counter}`))
          )
        })).pipe(Effect.provide(instance(table, hooks)))
      assert.deepStrictEqual(yield* rowsOf(table, session), [{ seq: 0, data: { i: 0 } }, { seq: 1, data: { i: 1 } }])
    }))

  it.live("an append to a session whose lock another process holds waits for that process's commit, then follows it", () =>
    Effect.gen(function*() {
      const table = yield* freshTable
      const waits: Array<string> = []
      let built = false
      // The transaction each statement after the wait runs in: the wait and the insert, one transaction.
      const transactions: Array<string> = []
      let client: SqlClient.SqlClient | undefined
      const inTransaction = Effect.suspend(() => client!<{ readonly id: string }>`SELECT txid_current()::text AS id`).pipe(
        Effect.map(([row]) => void transactions.push(row!.id))
      )
      const hooks: PgTest.Hooks = {
        real: (real) => void (client = real),
        statement: (text, run) =>
          built && text.includes("pg_advisory_xact_lock(")
            ? Effect.andThen(Effect.sync(() => waits.push(text)), Effect.tap(run, () => inTransaction))
            : built && waits.length > 0 && isAppend(text)
            ? Effect.tap(run, () => inTransaction)
            : run
      }
      const holding = yield* Deferred.make<void>()
      const release = yield* Latch.make(false)
      return yield* Effect.flatMap(SessionLog.SessionLog, (log) =>
        Effect.gen(function*() {
          built = true
          yield* log.append(session, "n", { by: "b", i: 0 })
          assert.deepStrictEqual(waits, [], "an append to a free session never waits for a lock")
          // Another process, mid-append: it holds the session's lock and has stored seq 1, uncommitted.
          const key = `${table}:${session}`
          const other = yield* direct((sql) =>
            sql.withTransaction(Effect.gen(function*() {
              yield* sql`SELECT pg_advisory_xact_lock(hashtextextended(${key}, 0))`
              yield* sql`INSERT INTO ${sql(table)} (session, seq, type, time, data)
                VALUES (${session}, 1, 'n', 0, ${JSON.stringify({ by: "a", i: 1 })}::jsonb)`
              yield* Deferred.succeed(holding, undefined)
              yield* release.await
            }))
          ).pipe(Effect.forkChild)
          yield* Deferred.await(holding)
          const append = yield* Effect.forkChild(log.append(session, "n", { by: "b", i: 2 }))
          // Until the append is seen waiting for the session's advisory lock (or, wrongly, done).
          const waiting = direct((sql) =>
            sql<{ waiting: number | bigint }>`SELECT count(*) AS waiting FROM pg_locks
              WHERE locktype = 'advisory' AND NOT granted
                AND classid::bigint = ((hashtextextended(${key}, 0) >> 32) & 4294967295)
                AND objid::bigint = (hashtextextended(${key}, 0) & 4294967295)`
          ).pipe(Effect.map(([row]) => Number(row!.waiting) > 0))
          while (append.pollUnsafe() === undefined && !(yield* waiting)) yield* Effect.sleep("5 millis")
          assert.isUndefined(append.pollUnsafe(), `the append went ahead while another process held the session: ${append.pollUnsafe()}`)
          assert.lengthOf(waits, 1, "it waits for the lock in a transaction of its own")
          yield* release.open
          yield* Fiber.join(other)
          assert.strictEqual((yield* Fiber.join(append)).seq, 2)
          assert.lengthOf(transactions, 2)
          assert.strictEqual(transactions[0], transactions[1], "the wait for the lock and the insert, in one transaction")
          assert.deepStrictEqual(yield* rowsOf(table, session), [
            { seq: 0, data: { by: "b", i: 0 } },
            { seq: 1, data: { by: "a", i: 1 } },
            { seq: 2, data: { by: "b", i: 2 } }
          ])
        })).pipe(Effect.provide(instance(table, hooks)), Effect.ensuring(release.open))
    }))

  it.live("an append waiting for a session's lock whose connection is lost fails, typed (no defect), and is stored nowhere", () =>
    Effect.gen(function*() {
      const table = yield* freshTable
      const key = `${table}:${session}`
      const holding = yield* Deferred.make<void>()
      const release = yield* Latch.make(false)
      return yield* Effect.flatMap(SessionLog.SessionLog, (log) =>
        Effect.gen(function*() {
          yield* log.append(session, "n", { i: 0 })
          // Another process holds the session's lock, mid-append.
          const other = yield* direct((sql) =>
            sql.withTransaction(Effect.andThen(
              sql`SELECT pg_advisory_xact_lock(hashtextextended(${key}, 0))`,
              Effect.andThen(Deferred.succeed(holding, undefined), release.await)
            ))
          ).pipe(Effect.forkChild)
          yield* Deferred.await(holding)
          const append = yield* Effect.forkChild(log.append(session, "n", { i: 1 }))
          // Once the append waits for the lock, its connection is lost.
          let terminated = 0
          while (terminated === 0) {
            yield* Effect.sleep("10 millis")
            const [row] = yield* direct((sql) =>
              sql<{ n: number | bigint }>`SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity
                WHERE query LIKE 'SELECT pg_advisory_xact_lock%json_array_elements_text%' AND pid <> pg_backend_pid()`
            )
            terminated = Number(row!.n)
          }
          const error = failureOf(yield* Fiber.await(append))
          assert.strictEqual(error._tag, "SessionLogError", "a typed failure, not a defect")
          assert.strictEqual(error.reason._tag, "StorageFailure")
          yield* release.open
          yield* Fiber.join(other)
          assert.deepStrictEqual((yield* rowsOf(table, session)).map((row) => row.seq), [0])
        })).pipe(Effect.provide(instance(table, {})), Effect.ensuring(release.open))
    }), 30_000)

  it.effect("reads page through a long session: one query per page, never the whole session at once", () =>
    Effect.gen(function*() {
      const table = yield* freshTable
      const pages: Array<string> = []
      const hooks: PgTest.Hooks = {
        statement: (text, run) =>
          text.includes("SELECT seq, type, time, data") ? Effect.tap(run, () => Effect.sync(() => pages.push(text))) : run
      }
      yield* Effect.flatMap(SessionLog.SessionLog, (log) =>
        Effect.gen(function*() {
          for (let i = 0; i < 25; i++) yield* log.append(session, "n", { i })
          const all = yield* Stream.runCollect(log.read(session))
          assert.deepStrictEqual(all.map((e) => e.seq), Array.from({ length: 25 }, (_, i) => i))
          assert.strictEqual(pages.length, 4, "25 events in pages of 7: 7 + 7 + 7 + 4")
          assert.include(pages[0]!, "LIMIT")
          pages.length = 0
          const tail = yield* Stream.runCollect(log.read(session, { fromSeq: 20 }))
          assert.deepStrictEqual(tail.map((e) => e.seq), [20, 21, 22, 23, 24])
          assert.strictEqual(pages.length, 1)
          // A page is read only when the one before is used up.
          pages.length = 0
          const first = yield* Stream.runCollect(Stream.take(log.read(session), 3))
          assert.strictEqual(first.length, 3)
          assert.strictEqual(pages.length, 1)
        })).pipe(Effect.provide(instance(table, hooks, 7)))
    }))

  it.live("a group the server cancels for its statement_timeout is stored in halves until each fits; one batch that doesn't fits fails as it is", () =>
    Effect.gen(function*() {
      const table = yield* freshTable
      // The table first, then a trigger that makes each row take 30 ms, and 300 ms for the session "slow".
      yield* Effect.scoped(Layer.build(SessionLogSql.layer({ table }).pipe(Layer.provide(PgTest.client))))
      yield* Effect.addFinalizer(() => Effect.ignore(direct((sql) => sql.unsafe(`DROP FUNCTION IF EXISTS ${table}_slow() CASCADE`))))
      yield* direct((sql) =>
        Effect.andThen(
          sql.unsafe(`CREATE FUNCTION ${table}_slow() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
              PERFORM pg_sleep(CASE WHEN NEW.session = 'slow' THEN 0.3 ELSE 0.03 END);
              RETURN NEW;
            END $$`),
          sql.unsafe(`CREATE TRIGGER ${table}_slow BEFORE INSERT ON ${table} FOR EACH ROW EXECUTE FUNCTION ${table}_slow()`)
        )
      )
      const groups: Array<number> = []
      const timed = Layer.fresh(PgClient.layer({ url: Redacted.make(PgTest.url), startupParameters: { statement_timeout: "200ms" } }))
      const hooks: PgTest.Hooks = {
        statement: (text, run, args) => isAppend(text) ? Effect.andThen(Effect.sync(() => groups.push(JSON.parse(String(args[0])).length)), run) : run
      }
      yield* Effect.gen(function*() {
        const log = yield* SessionLog.SessionLog
        // The first goes alone; the 15 behind it gather into one group: 450 ms of rows.
        const entries = yield* Effect.forEach(
          Array.from({ length: 16 }, (_, i) => SessionId.decodeSync(`s${i}`)),
          (s) => log.append(s, "n", {}),
          { concurrency: "unbounded" }
        )
        assert.isTrue(entries.every((entry) => entry.seq === 0))
        assert.isTrue(groups.some((size) => size > 6), `a group too big for the timeout was tried: ${groups}`)
        const stored = yield* direct((sql) => sql<{ readonly n: number | bigint }>`SELECT count(*) AS n FROM ${sql(table)}`)
        assert.strictEqual(Number(stored[0]!.n), 16, "each stored once")
        const slow = failureOf(yield* Effect.exit(log.append(SessionId.decodeSync("slow"), "n", {})))
        assert.include(slow.message, "canceling statement due to statement timeout")
      }).pipe(Effect.provide(PgTest.instance(table, hooks, undefined, timed)))
    }), 30_000)

  it.live("groups cancelled for the statement_timeout whatever their size (a table locked meanwhile): a few halvings, then the rest fail untried", () =>
    Effect.gen(function*() {
      const table = yield* freshTable
      yield* Effect.scoped(Layer.build(SessionLogSql.layer({ table }).pipe(Layer.provide(PgTest.client))))
      // Another transaction holds the table, so every insert waits, and is cancelled at 200 ms.
      const locked = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const holder = yield* Effect.forkChild(direct((sql) =>
        sql.withTransaction(Effect.gen(function*() {
          yield* sql.unsafe(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`)
          yield* Deferred.succeed(locked, undefined)
          yield* Deferred.await(release)
        }))
      ), { startImmediately: true })
      yield* Deferred.await(locked)
      let statements = 0
      const timed = Layer.fresh(PgClient.layer({ url: Redacted.make(PgTest.url), startupParameters: { statement_timeout: "200ms" } }))
      const hooks: PgTest.Hooks = { statement: (text, run) => isAppend(text) ? Effect.andThen(Effect.sync(() => statements++), run) : run }
      yield* Effect.gen(function*() {
        const log = yield* SessionLog.SessionLog
        // The first goes alone; the 15 behind it gather, and are halved at most 4 times over.
        const appended = yield* Effect.forEach(
          Array.from({ length: 16 }, (_, i) => SessionId.decodeSync(`s${i}`)),
          (s) => Effect.exit(log.append(s, "n", {})),
          { concurrency: "unbounded" }
        )
        for (const exit of appended) assert.match(failureOf(exit).message, /statement.timeout/)
        assert.isTrue(appended.some((exit) => failureOf(exit).message.includes("not tried")), "the halves left once the halvings ran out")
        assert.isAtMost(statements, 1 + 2 * 4 + 1, "not every half tried, each holding every append up for a timeout")
      }).pipe(
        Effect.ensuring(Deferred.succeed(release, undefined)),
        Effect.provide(PgTest.instance(table, hooks, undefined, timed))
      )
      yield* Fiber.join(holder)
    }), 30_000)

  it.live("a group cancelled for one batch too slow on its own: halved down to that batch, which alone fails", () =>
    Effect.gen(function*() {
      const sessions = [...Array.from({ length: 15 }, (_, i) => `s${i}`), "big"]
      const { appended, sizes } = yield* cancelledGroups(sessions, (rows) => rows.includes("big"))
      assert.isTrue(appended.slice(0, 15).every(Exit.isSuccess), "every other batch stored")
      assert.include(failureOf(appended[15]!).message, "canceling statement due to statement timeout")
      assert.deepStrictEqual(sizes, [1, 15, 7, 8, 4, 4, 2, 2, 1, 1])
    }), 30_000)

  it.live("a big group cancelled each time is halved at most 4 times over, then what is left fails untried", () =>
    Effect.gen(function*() {
      const { appended, sizes } = yield* cancelledGroups(Array.from({ length: 64 }, (_, i) => `s${i}`), () => true)
      for (const exit of appended) assert.include(failureOf(exit).message, "canceling statement due to statement timeout")
      assert.deepStrictEqual(sizes, [1, 63, 31, 15, 7, 3])
      assert.include(failureOf(appended[63]!).message, "not tried", "the last half, never tried")
    }), 30_000)
})

/**
 * Appends to `sessions` at once through an instance whose group statements are cancelled, as for the
 * server's statement_timeout, when `cancels` says so of their rows' sessions. The first goes alone
 * and waits until the rest have gathered behind it. Answers each append's exit and the size of each
 * group statement tried.
 */
const cancelledGroups = (sessions: ReadonlyArray<string>, cancels: (rows: ReadonlyArray<string>) => boolean) =>
  Effect.gen(function*() {
    const table = yield* freshTable
    const sizes: Array<number> = []
    const gathered = yield* Latch.make()
    const cancelled = new SqlError.SqlError({
      reason: new SqlError.StatementTimeoutError({ cause: new Error("canceling statement due to statement timeout"), message: "cancelled" })
    })
    const hooks: PgTest.Hooks = {
      statement: (text, run, args) =>
        !isAppend(text) ? run : Effect.gen(function*() {
          const rows: ReadonlyArray<{ readonly s: string }> = JSON.parse(String(args[0]))
          sizes.push(rows.length)
          if (sizes.length === 1) yield* gathered.await
          return cancels(rows.map((row) => row.s)) ? yield* cancelled : yield* run
        })
    }
    const appended = yield* Effect.gen(function*() {
      const log = yield* SessionLog.SessionLog
      const appending = yield* Effect.forkChild(
        Effect.forEach(sessions, (s) => Effect.exit(log.append(SessionId.decodeSync(s), "n", {})), { concurrency: "unbounded" }),
        { startImmediately: true }
      )
      yield* Effect.sleep("200 millis")
      yield* gathered.open
      return yield* Fiber.join(appending)
    }).pipe(Effect.provide(PgTest.instance(table, hooks)))
    return { appended, sizes }
  })
