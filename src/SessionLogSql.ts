/**
 * A `SessionLog` in a SQL database (PostgreSQL), for several backend instances sharing sessions.
 * It needs only Effect's abstract `SqlClient`; the application supplies the client (`@effect/sql-pg`).
 *
 * - One row per event, `(session, seq)` the primary key, the payload as `jsonb`. The table is created
 *   if missing.
 * - Each append is one transaction that first takes a per-session advisory lock, so concurrent
 *   appenders, in any process, are serialized per session: contiguous seqs, nothing lost.
 * - Reads page through a session by seq (keyset), so a long session never loads at once.
 * - Each commit sends a `NOTIFY`; when the client is a `PgClient`, the layer `LISTEN`s, so the
 *   committed-entries stream also carries entries appended by other processes.
 */
import { PgClient } from "@effect/sql-pg"
import { Clock, Effect, Layer, Option, PubSub, Queue, Schedule, Stream } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import * as SessionEvent from "./SessionEvent.ts"
import * as SessionId from "./SessionId.ts"
import { encodePayload, makeEntry, type ReadOptions, SessionLog } from "./SessionLog.ts"
import { Corrupt, InvalidPayload, SessionLogError, StorageFailure } from "./SessionLogError.ts"

export interface Options {
  /** The events table (created if missing). Default `todo_write_events`. */
  readonly table?: string | undefined
  /** Rows per page when reading. Default 1000. */
  readonly pageSize?: number | undefined
}

export const defaultTable = "todo_write_events"

const identifier = /^[a-z_][a-z0-9_]{0,47}$/

interface Row {
  readonly seq: bigint | number
  readonly type: string
  readonly time: bigint | number
  readonly data: unknown
}

const storageFailure = (method: string, session: string) => (error: SqlError.SqlError) =>
  SessionLogError.fromReason({ method, session, reason: new StorageFailure({ detail: error.message }) })

/** Only failures that certainly rolled back are retried: a lost connection may hide a commit. */
const isRolledBack = (error: SqlError.SqlError) =>
  error.reason._tag === "DeadlockError" || error.reason._tag === "SerializationError" ||
  error.reason._tag === "LockTimeoutError" || error.reason._tag === "UniqueViolation"

export const layer = (
  options: Options = {}
): Layer.Layer<SessionLog, SqlError.SqlError | SessionLogError, SqlClient.SqlClient> =>
  Layer.effect(
    SessionLog,
    Effect.gen(function*() {
      const table = options.table ?? defaultTable
      if (!identifier.test(table)) {
        return yield* SessionLogError.fromReason({
          method: "layer",
          session: "*",
          reason: new InvalidPayload({ detail: `table name ${JSON.stringify(table)} must match ${identifier}` })
        })
      }
      const pageSize = options.pageSize ?? 1000
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
      }))

      const pubsub = yield* Effect.acquireRelease(PubSub.unbounded<SessionEvent.Committed>(), PubSub.shutdown)
      // The last seq published per session: local commits and NOTIFYs both arrive; each entry goes out once.
      const published = new Map<SessionId.SessionId, number>()
      const publish = (entries: ReadonlyArray<SessionEvent.Committed>) =>
        Effect.sync(() => {
          for (const committed of entries) {
            const last = published.get(committed.session) ?? -1
            if (committed.entry.seq > last) {
              published.set(committed.session, committed.entry.seq)
              PubSub.publishUnsafe(pubsub, committed)
            }
          }
        })

      const toEntry = (row: Row) => makeEntry(row.type, Number(row.seq), Number(row.time), row.data)

      const page = (session: SessionId.SessionId, fromSeq: number, toSeq?: number) =>
        (toSeq === undefined
          ? sql<Row>`SELECT seq, type, time, data FROM ${events}
              WHERE session = ${session} AND seq >= ${fromSeq} ORDER BY seq LIMIT ${pageSize}`
          : sql<Row>`SELECT seq, type, time, data FROM ${events}
              WHERE session = ${session} AND seq >= ${fromSeq} AND seq <= ${toSeq} ORDER BY seq LIMIT ${pageSize}`)
          .pipe(Effect.mapError(storageFailure("read", session)))

      const read = (session: SessionId.SessionId, readOptions?: ReadOptions, toSeq?: number) =>
        Stream.paginate(readOptions?.fromSeq ?? 0, (fromSeq) =>
          Effect.flatMap(page(session, fromSeq, toSeq), (rows) => {
            const entries: Array<SessionEvent.Entry> = []
            for (const [i, row] of rows.entries()) {
              const seq = Number(row.seq)
              if (seq !== fromSeq + i) {
                return Effect.fail(SessionLogError.fromReason({
                  method: "read",
                  session,
                  reason: new Corrupt({ seq: fromSeq + i, detail: `row seq ${seq} where ${fromSeq + i} was expected` })
                }))
              }
              entries.push(toEntry(row))
            }
            const next = rows.length === pageSize ? Option.some(fromSeq + rows.length) : Option.none()
            return Effect.succeed([entries, next] as const)
          }))

      const insert = (session: SessionId.SessionId, type: string, json: string, time: number) =>
        sql.withTransaction(Effect.gen(function*() {
          yield* sql`SELECT pg_advisory_xact_lock(hashtextextended(${`${table}:${session}`}, 0))`
          const [next] = yield* sql<{ readonly seq: bigint | number }>`
            SELECT COALESCE(MAX(seq) + 1, 0) AS seq FROM ${events} WHERE session = ${session}`
          const seq = Number(next?.seq ?? 0)
          yield* sql`INSERT INTO ${events} (session, seq, type, time, data)
            VALUES (${session}, ${seq}, ${type}, ${time}, ${json}::jsonb)`
          // Delivered on commit, to every listening instance.
          yield* sql`SELECT pg_notify(${channel}, ${`${seq} ${session}`})`
          return seq
        })).pipe(
          Effect.retry({ while: isRolledBack, schedule: Schedule.exponential("5 millis"), times: 8 }),
          Effect.mapError(storageFailure("append", session))
        )

      const append = Effect.fn("SessionLogSql.append")(function*(session: SessionId.SessionId, type: string, data: unknown) {
        const { copy, json } = yield* encodePayload("append", session, data)
        if (json.includes("\\u0000")) {
          return yield* SessionLogError.fromReason({
            method: "append",
            session,
            reason: new InvalidPayload({ detail: "PostgreSQL jsonb can't hold the NUL character (\\u0000)" })
          })
        }
        const time = yield* Clock.currentTimeMillis
        const seq = yield* insert(session, type, json, time)
        const entry = makeEntry(type, seq, time, copy)
        yield* publish([{ session, entry }])
        return entry
      })

      // Entries other instances commit: LISTEN, then read what each NOTIFY announces.
      const pg = yield* Effect.serviceOption(PgClient.PgClient)
      if (Option.isSome(pg)) {
        const onNotification = (payload: string) => {
          const space = payload.indexOf(" ")
          const seq = Number(payload.slice(0, space))
          const session = payload.slice(space + 1)
          if (!SessionId.is(session) || !Number.isInteger(seq)) return Effect.void
          // From the last entry published for the session, so entries whose NOTIFY was missed come too.
          const from = (published.get(session) ?? seq - 1) + 1
          if (from > seq) return Effect.void
          return read(session, { fromSeq: from }, seq).pipe(
            Stream.runCollect,
            Effect.flatMap((entries) => publish(entries.map((entry) => ({ session, entry })))),
            Effect.catch((error) =>
              Effect.logWarning(`todo-write: can't read a commit announced by another instance: ${error.message}`)
            )
          )
        }
        const drain = (notifications: Queue.Dequeue<{ readonly payload: string }, SqlError.SqlError>) =>
          Effect.forever(Effect.flatMap(Queue.take(notifications), (n) => onNotification(n.payload)))
        // Listening before the layer is ready: no subscriber can miss a commit made after that.
        const first = yield* pg.value.listen(channel)
        yield* drain(first).pipe(
          // A dropped LISTEN connection is re-established rather than silently ending live updates.
          Effect.catch((error) =>
            Effect.logWarning(`todo-write: LISTEN ${channel} failed (${error.message}); listening again`).pipe(
              Effect.andThen(Effect.scoped(Effect.flatMap(pg.value.listen(channel), drain))),
              Effect.retry(Schedule.spaced("1 second"))
            )
          ),
          Effect.forkScoped
        )
      }

      const sessions = sql<{ readonly session: string }>`SELECT DISTINCT session FROM ${events} ORDER BY session`.pipe(
        Effect.map((rows) => rows.map((row) => row.session).filter(SessionId.is)),
        Effect.mapError(storageFailure("sessions", "*"))
      )

      return SessionLog.of({
        append,
        read: (session, readOptions) => read(session, readOptions),
        subscribe: Effect.map(PubSub.subscribe(pubsub), Stream.fromSubscription),
        sessions
      })
    })
  )
