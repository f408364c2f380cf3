/**
 * A `SessionLog` in a SQL database (PostgreSQL), for several backend instances sharing sessions.
 * It needs only Effect's abstract `SqlClient`; the application supplies the client (`@effect/sql-pg`).
 *
 * - One row per event, `(session, seq)` the primary key, the payload as `jsonb`. The table is created
 *   if missing.
 * - Appends are serialized per session by a per-session advisory lock, across processes:
 *   contiguous seqs, nothing lost. The batches of many sessions that arrive while one statement is
 *   in flight are stored together in the next, one commit for all (`Appender`).
 * - Reads page through a session by seq (keyset), so a long session never loads at once.
 * - Each commit sends a `NOTIFY`; when the client is a `PgClient`, the layer `LISTEN`s while
 *   anyone subscribes, so the committed-entries stream also carries entries appended by other
 *   processes. A `LISTEN` connection that drops is made again, and the core then reads on every
 *   session it has published from. What it misses: commits made while no one listened to sessions
 *   it had published nothing of, and another process's commit to a session this one then appends to
 *   before the other's `NOTIFY` is heard, when this process had published nothing of the session
 *   yet (subscribe, then read, to see everything).
 *
 * @since 0.2.0
 */
import { PgClient } from "@effect/sql-pg"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as SqlClient from "effect/sql/SqlClient"
import type * as SqlError from "effect/sql/SqlError"
import { DurationInput } from "../internal/durationInput.ts"
import type * as SessionId from "../SessionId.ts"
import * as SessionLog from "../SessionLog.ts"
import { InvalidOptions, SessionLogError } from "../SessionLogError.ts"
import * as SessionEvent from "../SessionEvent.ts"
import * as Appender from "./Appender.ts"
import * as Retried from "./Retried.ts"

/**
 * The layer's options, validated when it is built.
 *
 * @since 0.2.0
 * @category models
 */
export const Options = Schema.Struct({
  /** The events table (created if missing). Default `todo_write_events`. */
  table: Schema.optional(Schema.String.check(Schema.isPattern(/^[a-z_][a-z0-9_]{0,47}$/, {
    expected: "a lower-case SQL identifier of at most 48 characters"
  }))),
  /** Rows per page when reading. Default 1000. */
  pageSize: Schema.optional(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 100_000 }))),
  /**
   * How long each statement of the appends (a group, or a transaction waiting for a session another
   * process holds) waits for a connection of the client's before it fails, not stored, saying none
   * came free: a finite duration, default 30 seconds. (Callers holding every connection of the pool
   * in transactions of their own, each waiting for its append, would otherwise wait forever.)
   */
  connectionTimeout: Schema.optional(DurationInput)
})

/**
 * @since 0.2.0
 * @category models
 */
export type Options = typeof Options.Type

/**
 * The table used when none is named.
 *
 * @since 0.2.0
 * @category constants
 */
export const defaultTable = "todo_write_events"

interface Row {
  readonly seq: bigint | number
  readonly type: string
  readonly time: bigint | number
  readonly data: unknown
}

const decodeOptions = Schema.decodeUnknownResult(Options, { onExcessProperty: "error", errors: "all" })

/** PostgreSQL's `text` and `jsonb` can't hold the NUL character, in the type or anywhere in the payload. */
const refuse = (type: string, json: string, data: unknown): string | undefined =>
  type.includes("\u0000")
    ? "PostgreSQL text can't hold the NUL character (\\u0000), which the event type holds"
    : json.includes("\\u0000") && hasNul(data)
    ? "PostgreSQL jsonb can't hold the NUL character (\\u0000)"
    : undefined

const hasNul = (value: unknown): boolean => {
  if (typeof value === "string") return value.includes("\u0000")
  if (typeof value !== "object" || value === null) return false
  if (Array.isArray(value)) return value.some(hasNul)
  for (const key in value) if (key.includes("\u0000") || hasNul((value as Record<string, unknown>)[key])) return true
  return false
}

/**
 * The session log in the SQL database of the `SqlClient` provided.
 *
 * @since 0.2.0
 * @category layers
 */
export const layer = (
  options: Options = {}
): Layer.Layer<SessionLog.SessionLog, SessionLogError, SqlClient.SqlClient> =>
  Layer.effect(
    SessionLog.SessionLog,
    Effect.gen(function*() {
      const decoded = decodeOptions(options)
      if (Result.isFailure(decoded)) {
        return yield* SessionLogError.fromReason({
          method: "layer",
          reason: new InvalidOptions({ detail: decoded.failure.message })
        })
      }
      const table = decoded.success.table ?? defaultTable
      const pageSize = decoded.success.pageSize ?? 1000
      const channel = `${table}_commits`
      const sql = yield* SqlClient.SqlClient
      const events = sql(table)

      // Two instances starting together must not race on CREATE TABLE.
      yield* sql.withTransaction(Effect.gen(function*() {
        yield* sql`SELECT pg_advisory_xact_lock(hashtextextended(${`${table}:create`}, 0))`
        yield* sql`CREATE TABLE IF NOT EXISTS ${events} (
          session text NOT NULL,
          seq bigint NOT NULL,
          type text NOT NULL,
          time bigint NOT NULL,
          data jsonb NOT NULL,
          PRIMARY KEY (session, seq)
        )`
      })).pipe(
        // A lock_timeout of the server's can end the wait for another instance's creation: rolled back, so retried.
        Retried.ifRolledBack,
        Effect.mapError(SessionLog.toError("layer"))
      )

      const read = (session: SessionId.SessionId, fromSeq: number) =>
        Stream.paginate(fromSeq, (from) =>
          Effect.map(
            sql<Row>`SELECT seq, type, time, data FROM ${events}
              WHERE session = ${session} AND seq >= ${from} ORDER BY seq LIMIT ${pageSize}`,
            (rows) => {
              const entries = rows.map((row) => SessionEvent.makeEntry(row.type, Number(row.seq), Number(row.time), row.data))
              return [entries, rows.length === pageSize ? Option.some(from + rows.length) : Option.none()] as const
            }
          ))

      const connectionTimeout = Duration.fromInputUnsafe(decoded.success.connectionTimeout ?? "30 seconds")
      const appender = yield* Appender.make({ sql, table, channel, connectionTimeout })

      // Commits other instances make: LISTEN, and hand each NOTIFY to the core, which reads what it
      // announces. Only while someone subscribes: a listener hears this process's own NOTIFYs too,
      // each a wakeup that costs an append as much again as the commit's own work.
      const pg = yield* Effect.serviceOption(PgClient.PgClient)
      let announcements: SessionLog.Backend["announcements"]
      if (Option.isSome(pg)) {
        // `<first>-<last> <session>` (or `<last> <session>`, as this log announced before).
        const parse = ({ payload }: { readonly payload: string }): SessionLog.Announcement => {
          const space = payload.indexOf(" ")
          const [first, last] = payload.slice(0, space).split("-")
          const session = payload.slice(space + 1)
          return last === undefined ? { session, seq: Number(first) } : { session, seq: Number(last), first: Number(first) }
        }
        // Listening again, once it succeeds: what was committed while no one listened was announced
        // to no one, which the core then reads on (`Missed`).
        const missed: SessionLog.Missed = { _tag: "Missed" }
        const relisten: Stream.Stream<SessionLog.Announcement | SessionLog.Missed, SqlError.SqlError> = Stream.unwrap(
          Effect.map(pg.value.listen(channel), (queue) => Stream.concat(Stream.make(missed), Stream.map(Stream.fromQueue(queue), parse)))
        )
        // Listening once this succeeds: no subscriber misses a commit made after it subscribed.
        announcements = Effect.map(pg.value.listen(channel), (first) =>
          Stream.map(Stream.fromQueue(first), parse).pipe(
            // A dropped LISTEN connection is re-established rather than silently ending live updates.
            Stream.catch((error) =>
              Stream.fromEffect(Effect.logWarning(`todo-write: LISTEN ${channel} failed (${error.message}); listening again`))
                .pipe(Stream.drain, Stream.concat(relisten.pipe(Stream.retry(Schedule.spaced("1 second")))))
            )
          ))
      }

      return yield* SessionLog.make({
        append: appender.append,
        refuse,
        read,
        sessions: Effect.map(
          sql<{ readonly session: string }>`SELECT DISTINCT session FROM ${events} ORDER BY session`,
          (rows) => rows.map((row) => row.session)
        ),
        announcements
      })
    })
  )
