/**
 * The statement that stores a group of sessions' batches (see `Appender`): one autocommitted
 * statement that takes each session's advisory lock without waiting, numbers the batch's events on
 * from the session's last seq, inserts them, and announces each session stored.
 */
import type * as SqlClient from "effect/sql/SqlClient"
import type * as SessionLog from "../SessionLog.ts"

/** A session's batch in a group. */
export interface Batch {
  readonly session: string
  readonly batch: ReadonlyArray<SessionLog.Prepared>
}

/** Where each session's batch starts, or that its lock was held elsewhere. */
export interface Head {
  readonly session: string
  readonly ok: boolean
  readonly first: bigint | number | null
}

/** The rows as one JSON parameter; the payload goes in an array, so that a JSON `null` stays a value. */
const rowsJson = (group: ReadonlyArray<Batch>): string => {
  const rows: Array<string> = []
  for (const { batch, session } of group) {
    for (let i = 0; i < batch.length; i++) {
      const { json, time, type } = batch[i]!
      rows.push(`{"s":${JSON.stringify(session)},"o":${i},"t":${JSON.stringify(type)},"m":${time},"d":[${json}]}`)
    }
  }
  return `[${rows.join(",")}]`
}

/**
 * The statement over a table: stores the group's sessions whose lock is free (or already held by
 * this transaction); answers each session's head. Seqs run on from the session's last, each batch's
 * events in order, and every session stored announces its first and last seq on `channel`.
 */
export const make = (sql: SqlClient.SqlClient, table: string, channel: string) => {
  const events = sql(table)
  const lockPrefix = `${table}:`
  return (group: ReadonlyArray<Batch>) =>
    sql<Head>`WITH input AS MATERIALIZED (
        SELECT * FROM json_to_recordset(${rowsJson(group)}::json) AS r(s text, o int, t text, m bigint, d jsonb)
      ), heads AS MATERIALIZED (
        SELECT s, n, ok,
          CASE WHEN ok THEN (SELECT COALESCE(MAX(e.seq) + 1, 0) FROM ${events} e WHERE e.session = s) END AS first
        FROM (
          SELECT s, n, pg_try_advisory_xact_lock(hashtextextended(${lockPrefix} || s, 0)) AS ok
          FROM (SELECT s, count(*) AS n FROM input GROUP BY s ORDER BY s) AS sessions
        ) AS locks
      ), stored AS (
        INSERT INTO ${events} (session, seq, type, time, data)
        SELECT i.s, h.first + i.o, i.t, i.m, i.d -> 0 FROM input i JOIN heads h ON h.s = i.s WHERE h.ok
      )
      SELECT s AS session, ok, first,
        CASE WHEN ok THEN pg_notify(${channel}, first::text || '-' || (first + n - 1)::text || ' ' || s) END AS announced
      FROM heads`
}
