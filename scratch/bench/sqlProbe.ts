/**
 * A probe, not a benchmark with a goal: one session's appends through `SessionLogSql` against plain
 * `INSERT`s through the same client, in turn, 300 of each per round: wall and this thread's CPU per
 * append. `npx node scratch/bench/sqlProbe.ts [both|log|plain] [rounds]` (add `--cpu-prof` to profile);
 * needs the local PostgreSQL server (`test/support/Postgres.ts`).
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, ManagedRuntime, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import * as SessionId from "../../src/log/SessionId.ts"
import * as SessionLog from "../../src/log/SessionLog.ts"
import * as SessionLogSql from "../../src/log/sql/SessionLogSql.ts"
import * as Postgres from "../../test/support/Postgres.ts"
import { todoWritePayload as payload } from "./fixtures.ts"
const json = JSON.stringify(payload)
const prefix = `probe_${process.pid}`
const runtime = ManagedRuntime.make(SessionLogSql.layer({ table: `${prefix}_log` }).pipe(Layer.provideMerge(PgClient.layer({ url: Redacted.make(Postgres.defaultUrl) }))))
const { log, sql } = await runtime.runPromise(Effect.all({ log: SessionLog.SessionLog, sql: SqlClient.SqlClient }))
const plain = sql(`${prefix}_plain`)
await runtime.runPromise(sql`CREATE TABLE ${plain} (session text NOT NULL, seq bigint NOT NULL, type text NOT NULL, time bigint NOT NULL, data jsonb NOT NULL, PRIMARY KEY (session, seq))`)
const id = SessionId.decodeSync("probe")
let seq = 0
const mode = process.argv[2] ?? "both"
for (let r = 0; r < Number(process.argv[3] ?? 6); r++) {
  const c0 = process.threadCpuUsage(); const t0 = performance.now()
  if (mode !== "plain") await runtime.runPromise(Effect.gen(function*() { for (let i = 0; i < 300; i++) yield* log.append(id, "todo/write", payload) }))
  const c1 = process.threadCpuUsage(c0); const t1 = performance.now()
  if (mode !== "log") await runtime.runPromise(Effect.gen(function*() { for (let i = 0; i < 300; i++) yield* sql`INSERT INTO ${plain} (session, seq, type, time, data) VALUES (${"p"}, ${seq++}, ${"todo/write"}, ${Date.now()}, ${json}::jsonb)` }))
  const c2 = process.threadCpuUsage(c0); const t2 = performance.now()
  console.log(`log ${((t1 - t0) / 0.3).toFixed(0)} µs wall ${((c1.user + c1.system) / 300).toFixed(0)} µs cpu | plain ${((t2 - t1) / 0.3).toFixed(0)} µs wall ${((c2.user + c2.system - c1.user - c1.system) / 300).toFixed(0)} µs cpu`)
}
await runtime.runPromise(Effect.all([sql`DROP TABLE ${plain}`, sql`DROP TABLE ${sql(`${prefix}_log`)}`]))
await runtime.dispose()
