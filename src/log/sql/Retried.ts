/**
 * What the SQL backend retries: only failures that certainly rolled back (a deadlock, a
 * serialization failure, a lock timeout, a unique violation). Any other failure, a lost connection
 * among them, is not retried, since it may hide a commit.
 */
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import * as SqlError from "effect/sql/SqlError"

/** Whether the failure certainly rolled back what it was running. */
export const isRolledBack = (error: unknown): boolean =>
  SqlError.isSqlError(error) && (
    error.reason._tag === "DeadlockError" || error.reason._tag === "SerializationError" ||
    error.reason._tag === "LockTimeoutError" || error.reason._tag === "UniqueViolation"
  )

/** Runs `effect` again (up to 8 times, backing off from 5 ms) while it fails with a failure that rolled back. */
export const ifRolledBack = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.retry(effect, { while: isRolledBack, schedule: Schedule.exponential("5 millis"), times: 8 })

/**
 * Whether the server cancelled the statement for its `statement_timeout` (or someone cancelled it):
 * it rolled back too, but the same statement would be cancelled again.
 */
export const isCancelled = (error: unknown): boolean => SqlError.isSqlError(error) && error.reason._tag === "StatementTimeoutError"
