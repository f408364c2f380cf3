/**
 * The PostgreSQL server the SQL tests use: `PG_URL`, or the local server these machines run. In CI
 * the tests never skip: an unreachable server fails them. Elsewhere they skip, saying why. PGlite
 * through `@electric-sql/pglite-socket` was tried as an embedded stand-in: the sequential part of the
 * conformance suite passes on it, but concurrent appends and cross-instance LISTEN fail, because its
 * server multiplexes clients onto one database session.
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { createConnection } from "node:net"

export const url = process.env.PG_URL ?? "postgres://postgres@127.0.0.1:5432/test"

const reachable = await new Promise<boolean>((resolve) => {
  const { hostname, port } = new URL(url)
  const socket = createConnection({ host: hostname, port: Number(port || 5432) })
  socket.setTimeout(2000)
  socket.once("connect", () => (socket.destroy(), resolve(true)))
  socket.once("error", () => resolve(false))
  socket.once("timeout", () => (socket.destroy(), resolve(false)))
})

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
