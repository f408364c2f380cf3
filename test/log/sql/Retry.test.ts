/**
 * What the SQL backend retries, what it refuses to, and how it reads, against the real server:
 * - a connection lost after COMMIT reached the server (the outcome unknown to the client) fails the
 *   append and is NOT retried: a retry would store the event twice;
 * - a serialization failure (raised by the server, before commit) rolled back, so it is retried, once;
 * - appenders on different instances are serialized per session by the advisory lock: one waits for
 *   the other's transaction instead of reading the same last seq;
 * - reads page through a session: one query per page.
 *
 * The client is the real `PgClient` behind a thin `SqlClient` wrapper that sees every statement and
 * transaction.
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Latch, Layer, Stream } from "effect"
import { SqlClient, SqlError } from "effect/sql"
import * as SessionId from "../../../src/log/SessionId.ts"
import * as SessionLog from "../../../src/log/SessionLog.ts"
import * as SessionLogSql from "../../../src/log/sql/SessionLogSql.ts"
import { failureOf } from "../SessionLogConformance.ts"
import * as PgTest from "./PgTest.ts"

interface Hooks {
  /** Runs around each statement; `text` is its SQL, placeholders and all. */
  statement?: (text: string, run: Effect.Effect<unknown, SqlError.SqlError>) => Effect.Effect<unknown, SqlError.SqlError>
  /** Runs around each whole transaction (BEGIN … COMMIT). */
  transaction?: <A, E, R>(run: Effect.Effect<A, E | SqlError.SqlError, R>) => Effect.Effect<A, E | SqlError.SqlError, R>
}

/** The real client, seen through `hooks`. */
const wrap = (real: SqlClient.SqlClient, hooks: Hooks): SqlClient.SqlClient => {
  const sql = function(strings: unknown, ...args: Array<unknown>) {
    const statement = Reflect.apply(real, undefined, [strings, ...args])
    if (hooks.statement === undefined || !Array.isArray(strings)) return statement
    return hooks.statement(strings.join("$?"), statement)
  }
  const client = Object.assign(sql, real, {
    withTransaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => {
      const run = real.withTransaction(effect)
      return hooks.transaction === undefined ? run : hooks.transaction(run)
    }
  })
  // A test double: the wrapper has every member of the real client (copied), with two of them seen.
  return client as unknown as SqlClient.SqlClient
}

/**
 * A SessionLogSql instance over a table, with its own pool, its client wrapped by `hooks`. Only the
 * `SqlClient` is provided (not the `PgClient`): no LISTEN, so the only reads are the test's.
 */
const instance = (table: string, hooks: Hooks, pageSize?: number) =>
  SessionLogSql.layer({ table, ...(pageSize === undefined ? {} : { pageSize }) }).pipe(
    Layer.provide(
      Layer.effect(SqlClient.SqlClient, Effect.map(SqlClient.SqlClient, (real) => wrap(real, hooks))).pipe(
        Layer.provide(Layer.fresh(PgTest.client))
      )
    )
  )

const direct = <A, E>(use: (sql: SqlClient.SqlClient) => Effect.Effect<A, E>) =>
  Effect.flatMap(SqlClient.SqlClient, use).pipe(Effect.provide(PgTest.client))

const rowsOf = (table: string, session: string) =>
  direct((sql) =>
    sql<{ seq: number | bigint; data: unknown }>`SELECT seq, data FROM ${sql(table)} WHERE session = ${session} ORDER BY seq`
  ).pipe(Effect.map((rows) => rows.map((row) => ({ seq: Number(row.seq), data: row.data }))))

const freshTable = Effect.gen(function*() {
  const table = PgTest.uniqueTable()
  yield* PgTest.dropAfter(table)
  return table
})

const session = SessionId.decodeSync("retry-session")

describe.skipIf(PgTest.skipReason !== undefined)("SessionLogSql retries and reads (PostgreSQL)", () => {
  it.live("a connection lost after COMMIT fails the append, which is not retried: the event is stored once", () =>
    Effect.gen(function*() {
      const table = yield* freshTable
      let transactions = 0
      let loseNextCommit = false
      const hooks: Hooks = {
        transaction: (run) =>
          Effect.flatMap(run, (value) => {
            transactions++
            if (!loseNextCommit) return Effect.succeed(value)
            loseNextCommit = false
            // COMMIT reached the server and succeeded; the client never heard.
            return Effect.fail(
              new SqlError.SqlError({
                reason: new SqlError.ConnectionError({ cause: new Error("socket closed"), message: "connection lost after COMMIT" })
              })
            )
          })
      }
      yield* Effect.flatMap(SessionLog.SessionLog, (log) =>
        Effect.gen(function*() {
          yield* log.append(session, "n", { i: 0 })
          loseNextCommit = true
          const before = transactions
          const lost = yield* Effect.exit(log.append(session, "n", { i: 1 }))
          assert.strictEqual(
            transactions - before,
            1,
            `an append whose commit may have happened was retried (${lost}): it may be stored twice`
          )
          const error = failureOf(lost)
          assert.strictEqual(error.reason._tag, "StorageFailure")
          assert.include(error.message, "connection lost after COMMIT")
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
      let transactions = 0
      const failures: Array<string> = []
      const hooks: Hooks = {
        transaction: (run) =>
          run.pipe(
            Effect.tapError((error) =>
              Effect.sync(() => {
                if (SqlError.isSqlError(error)) failures.push(error.reason._tag)
              })
            ),
            Effect.ensuring(Effect.sync(() => transactions++))
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
          const before = transactions
          const appended = yield* Effect.exit(log.append(session, "n", { i: 1 }))
          assert.isTrue(Exit.isSuccess(appended), `a serialization failure (rolled back) was not retried: ${appended}`)
          assert.strictEqual(Exit.isSuccess(appended) ? appended.value.seq : -1, 1)
          assert.deepStrictEqual(failures, ["SerializationError"])
          assert.strictEqual(transactions - before, 2, "the rolled-back transaction was retried once")
          const [tries] = yield* direct((sql) => sql<{ last_value: number | bigint }>`SELECT last_value FROM ${sql(counter)}`)
          assert.strictEqual(Number(tries!.last_value), 2)
          yield* direct((sql) =>
            Effect.andThen(sql.unsafe(`DROP FUNCTION ${table}_fail_once() CASCADE`), sql.unsafe(`DROP SEQUENCE ${counter}`))
          )
        })).pipe(Effect.provide(instance(table, hooks)))
      assert.deepStrictEqual(yield* rowsOf(table, session), [{ seq: 0, data: { i: 0 } }, { seq: 1, data: { i: 1 } }])
    }))

  it.live("appends through two instances are serialized per session: the second waits on the advisory lock", () =>
    Effect.gen(function*() {
      const table = yield* freshTable
      // Instance A stops just before its commit, its insert made; B then appends to the same session.
      const holdA = yield* Latch.make(false)
      const aHolding = yield* Deferred.make<void>()
      let holding = false
      let bReadLastSeq = false
      const a = yield* Layer.build(instance(table, {
        statement: (text, run) =>
          holding && text.includes("pg_notify")
            ? Effect.andThen(Effect.andThen(Deferred.succeed(aHolding, undefined), holdA.await), run)
            : run
      }))
      const b = yield* Layer.build(instance(table, {
        statement: (text, run) =>
          text.includes("MAX(seq)") ? Effect.tap(run, () => Effect.sync(() => (bReadLastSeq = true))) : run
      }))
      return yield* Effect.gen(function*() {
        const logA = yield* SessionLog.SessionLog.pipe(Effect.provide(a))
        const logB = yield* SessionLog.SessionLog.pipe(Effect.provide(b))
        yield* logA.append(session, "n", { by: "a", i: 0 })
        holding = true
        const appendA = yield* Effect.forkChild(logA.append(session, "n", { by: "a", i: 1 }))
        yield* Deferred.await(aHolding)
        const appendB = yield* Effect.forkChild(logB.append(session, "n", { by: "b", i: 2 }))
        // Until B is seen waiting for the session's advisory lock, or (no lock) has read the last seq.
        const key = `${table}:${session}`
        const bWaitsOnLock = direct((sql) =>
          sql<{ waiting: number | bigint }>`SELECT count(*) AS waiting FROM pg_locks
            WHERE locktype = 'advisory' AND NOT granted
              AND classid::bigint = ((hashtextextended(${key}, 0) >> 32) & 4294967295)
              AND objid::bigint = (hashtextextended(${key}, 0) & 4294967295)`
        ).pipe(Effect.map(([row]) => Number(row!.waiting) > 0))
        while (!bReadLastSeq && !(yield* bWaitsOnLock)) yield* Effect.sleep("5 millis")
        assert.isFalse(
          bReadLastSeq,
          "B read the session's last seq while A's append to it was uncommitted: appends are not serialized per session"
        )
        assert.isUndefined(appendB.pollUnsafe())
        yield* holdA.open
        const [entryA, entryB] = yield* Effect.all([Fiber.join(appendA), Fiber.join(appendB)])
        assert.deepStrictEqual([entryA.seq, entryB.seq], [1, 2])
        assert.deepStrictEqual((yield* rowsOf(table, session)).map((row) => row.seq), [0, 1, 2])
      }).pipe(Effect.ensuring(holdA.open))
    }).pipe(Effect.scoped))

  it.effect("reads page through a long session: one query per page, never the whole session at once", () =>
    Effect.gen(function*() {
      const table = yield* freshTable
      const pages: Array<string> = []
      const hooks: Hooks = {
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
})
