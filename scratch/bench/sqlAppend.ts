/**
 * 8. PostgreSQL append: appends through `SessionLogSql` (the raw log: core + backend, no invariants),
 * each session one append at a time as an agent does, every append acknowledged once committed.
 * - 1 session, against a plain autocommitted `INSERT` of the same row through the same `SqlClient`;
 * - 128 sessions at once, against that 1-session figure (the throughput gained by concurrency), with
 *   p50/p99 append latency; and 128 concurrent plain `INSERT`s against one at a time, for scale.
 * The 1-session figures follow 2,000 appends of warm-up by each path, as `durableAppend`'s do (before V8
 * has optimized the path an append costs about twice as much); the first round of each path, cold, is
 * reported in the note.
 * The client is `PgClient.layer` with its defaults (a pool of up to 10 connections). `PG_URL`, or the
 * local server; skipped, saying so, when none is reachable. Tables get a fresh prefix and are dropped.
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, ManagedRuntime, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import * as SessionId from "../../src/log/SessionId.ts"
import * as SessionLog from "../../src/log/SessionLog.ts"
import * as SessionLogSql from "../../src/log/sql/SessionLogSql.ts"
import * as Postgres from "../../test/support/Postgres.ts"
import { type Comparison, compare, median, percentile } from "./harness.ts"
import { todoWritePayload as payload } from "./fixtures.ts"

const url = process.env.PG_URL ?? Postgres.defaultUrl
const rounds = 5
const oneSession = 100
const sessions = 128
const perSession = 8
/** Appends by each path before the 1-session rounds that count. */
const warmUp = 2000

const json = JSON.stringify(payload)

export const run = async (): Promise<ReadonlyArray<Comparison>> => {
  if (!(await Postgres.reachable(url))) {
    console.error(`sqlAppend: SKIPPED, no PostgreSQL server at ${url} (set PG_URL, or start one)`)
    return []
  }
  const prefix = `bench_${process.pid}_${Date.now().toString(36)}`
  const logTable = `${prefix}_log`
  const plainTable = `${prefix}_plain`
  const runtime = ManagedRuntime.make(
    SessionLogSql.layer({ table: logTable }).pipe(Layer.provideMerge(PgClient.layer({ url: Redacted.make(url) })))
  )
  const results: Array<Comparison> = []
  try {
    const { log, sql } = await runtime.runPromise(Effect.all({ log: SessionLog.SessionLog, sql: SqlClient.SqlClient }))
    const plain = sql(plainTable)
    await runtime.runPromise(sql`CREATE TABLE ${plain} (
      session text NOT NULL, seq bigint NOT NULL, type text NOT NULL, time bigint NOT NULL, data jsonb NOT NULL,
      PRIMARY KEY (session, seq))`)
    let run = 0
    const seqs = new Map<string, number>()
    const insert = (session: string) => {
      const seq = seqs.get(session) ?? 0
      seqs.set(session, seq + 1)
      return sql`INSERT INTO ${plain} (session, seq, type, time, data)
        VALUES (${session}, ${seq}, ${"todo/write"}, ${Date.now()}, ${json}::jsonb)`
    }
    const ids = (count: number) => {
      run++
      return Array.from({ length: count }, (_, i) => SessionId.decodeSync(`r${run}-s${i}`))
    }
    /** µs per append, `count` sessions at once, each `each` appends one after another. */
    const batch = (count: number, each: number, append: (id: SessionId.SessionId) => Effect.Effect<unknown, unknown>, latencies?: Array<number>) =>
      runtime.runPromise(Effect.gen(function*() {
        const sessionIds = ids(count)
        const start = process.hrtime.bigint()
        yield* Effect.forEach(sessionIds, (id) =>
          Effect.gen(function*() {
            for (let i = 0; i < each; i++) {
              const t0 = process.hrtime.bigint()
              yield* append(id)
              latencies?.push(Number(process.hrtime.bigint() - t0) / 1000)
            }
          }), { concurrency: "unbounded", discard: true })
        return Number(process.hrtime.bigint() - start) / 1000 / (count * each)
      }))
    const viaLog = (id: SessionId.SessionId) => log.append(id, "todo/write", payload)

    const cold = { log: await batch(1, oneSession, viaLog), plain: await batch(1, oneSession, insert) }
    for (let done = oneSession; done < warmUp; done += oneSession) {
      await batch(1, oneSession, viaLog)
      await batch(1, oneSession, insert)
    }
    results.push(await compare({
      name: "SQL append, 1 session vs plain INSERT",
      rounds,
      target: () => batch(1, oneSession, viaLog),
      baseline: () => batch(1, oneSession, insert),
      goal: { max: 2 },
      note: `per append, after ${warmUp} of warm-up each; baseline: an autocommitted INSERT of the same row, same client; cold (the first ${oneSession} of each, the log's first) ${
        cold.log.toFixed(0)
      } against ${cold.plain.toFixed(0)} µs, ${(cold.log / cold.plain).toFixed(2)}×`
    }))

    const latencies: Array<number> = []
    const many = await compare({
      name: `SQL append, ${sessions} sessions vs 1`,
      rounds,
      target: () => batch(sessions, perSession, viaLog, latencies),
      baseline: () => batch(1, oneSession, viaLog),
      goal: { max: 0.2 }
    })
    results.push({
      ...many,
      note: `${(1 / many.ratio).toFixed(1)}x the 1-session throughput; latency p50 ${(median(latencies) / 1000).toFixed(2)} ms, p99 ${
        (percentile(latencies, 99) / 1000).toFixed(2)
      } ms`
    })

    const plainMany = await compare({
      name: `plain INSERT, ${sessions} sessions vs 1`,
      rounds,
      target: () => batch(sessions, perSession, insert),
      baseline: () => batch(1, oneSession, insert)
    })
    results.push({ ...plainMany, note: `for scale: ${(1 / plainMany.ratio).toFixed(1)}x throughput, no log` })
  } finally {
    await runtime.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) =>
      Effect.andThen(
        sql`DROP TABLE IF EXISTS ${sql(logTable)}`,
        sql`DROP TABLE IF EXISTS ${sql(plainTable)}`
      ))).catch((error) => console.error(`sqlAppend: could not drop ${prefix}_*: ${error}`))
    await runtime.dispose()
  }
  return results
}
