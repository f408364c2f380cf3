/**
 * The PostgreSQL server the SQL tests use: `PG_URL`, or the local server these machines run. In CI
 * the tests never skip: an unreachable server fails them. Elsewhere they skip, saying why. PGlite
 * through `@electric-sql/pglite-socket` was tried as an embedded stand-in: the sequential part of the
 * conformance suite passes on it, but concurrent appends and cross-instance LISTEN fail, because its
 * server multiplexes clients onto one database session.
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import * as SessionLogSql from "../../../src/log/sql/SessionLogSql.ts"
import * as Postgres from "../../support/Postgres.ts"

export const url = process.env.PG_URL ?? Postgres.defaultUrl

const reachable = await Postgres.reachable(url)

export const inCi = process.env.CI === "true"
/** Why the SQL tests don't run here, or `undefined` when they do. */
export const skipReason = reachable || inCi
  ? undefined
  : `no PostgreSQL server at ${url} (set PG_URL, or start one); the SQL SessionLog tests are skipped. ` +
    `(PGlite through its socket server is no substitute: it multiplexes one database session, so ` +
    `concurrent transactions, advisory locks and LISTEN don't behave as on a server.)`
if (skipReason !== undefined) console.warn(`SKIPPED: ${skipReason}`)

export const client = Layer.fresh(PgClient.layer({ url: Redacted.make(url), maxConnections: 8 }))

let tables = 0
/** A table name no other test or process uses. */
export const uniqueTable = () => `t_${process.pid}_${Date.now().toString(36)}_${tables++}`

/** Drops the table when the scope closes. */
export const dropAfter = (table: string) =>
  Effect.addFinalizer(() =>
    Effect.flatMap(SqlClient.SqlClient, (sql) => sql`DROP TABLE IF EXISTS ${sql(table)}`).pipe(
      Effect.provide(client),
      Effect.ignore
    )
  )

/** Runs around each statement or transaction of a wrapped client. */
export interface Hooks {
  /** Runs around each statement; `text` is its SQL (placeholders as `$?`), `args` its parameters. */
  statement?: (
    text: string,
    run: Effect.Effect<unknown, SqlError.SqlError>,
    args: ReadonlyArray<unknown>
  ) => Effect.Effect<unknown, SqlError.SqlError>
  /** Is handed the real client once the wrapper is built (for statements of the test's own, on a statement's connection). */
  real?: (client: SqlClient.SqlClient) => void
  /** Runs around each whole transaction (BEGIN … COMMIT). */
  transaction?: <A, E, R>(run: Effect.Effect<A, E | SqlError.SqlError, R>) => Effect.Effect<A, E | SqlError.SqlError, R>
}

/** The real client, seen through `hooks`. */
export const wrap = (real: SqlClient.SqlClient, hooks: Hooks): SqlClient.SqlClient => {
  hooks.real?.(real)
  const sql = function(strings: unknown, ...args: Array<unknown>) {
    const statement = Reflect.apply(real, undefined, [strings, ...args])
    if (hooks.statement === undefined || !Array.isArray(strings)) return statement
    return hooks.statement(strings.join("$?"), statement, args)
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
 * A SessionLogSql instance over a table, with its own pool (of `client`'s settings unless given), its client wrapped by `hooks`. Only the
 * `SqlClient` is provided (not the `PgClient`): no LISTEN, so the only reads are the test's.
 */
export const instance = (table: string, hooks: Hooks, pageSize?: number, pool: Layer.Layer<SqlClient.SqlClient, SqlError.SqlError> = client) =>
  SessionLogSql.layer({ table, ...(pageSize === undefined ? {} : { pageSize }) }).pipe(
    Layer.provide(
      Layer.effect(SqlClient.SqlClient, Effect.map(SqlClient.SqlClient, (real) => wrap(real, hooks))).pipe(
        Layer.provide(Layer.fresh(pool))
      )
    )
  )

/** Runs `use` on a client of its own, outside any instance. */
export const direct = <A, E>(use: (sql: SqlClient.SqlClient) => Effect.Effect<A, E>) =>
  Effect.flatMap(SqlClient.SqlClient, use).pipe(Effect.provide(client))

/** A session's rows as stored, in seq order. */
export const rowsOf = (table: string, session: string) =>
  direct((sql) =>
    sql<{ seq: number | bigint; data: unknown }>`SELECT seq, data FROM ${sql(table)} WHERE session = ${session} ORDER BY seq`
  ).pipe(Effect.map((rows) => rows.map((row) => ({ seq: Number(row.seq), data: row.data }))))

/** A table name of its own, dropped when the scope closes. */
export const freshTable = Effect.gen(function*() {
  const table = uniqueTable()
  yield* dropAfter(table)
  return table
})
