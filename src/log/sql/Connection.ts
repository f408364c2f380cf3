/**
 * A connection of the SQL client's, taken for one piece of work, with a bound on the wait for it.
 * Callers holding every connection of the pool in transactions of their own, each waiting for its
 * append, would otherwise wait forever for the connection their appends' statement needs.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as SqlClient from "effect/sql/SqlClient"
import type * as SqlError from "effect/sql/SqlError"
import { StorageFailure } from "../SessionLogError.ts"

/**
 * Runs `effect`'s statements on a connection taken for it, waiting at most `timeout` for one; if none
 * came free, nothing of it ran, and it fails saying so.
 */
export const bounded = (sql: SqlClient.SqlClient, timeout: Duration.Duration) =>
<A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, E | SqlError.SqlError | StorageFailure> =>
  Effect.scoped(Effect.flatMap(
    // Interruptible, for the timeout, even where the work is not (an append's group).
    Effect.timeoutOrElse(Effect.interruptible(sql.reserve), {
      duration: timeout,
      orElse: () =>
        Effect.fail(
          new StorageFailure({
            detail: `no connection of the SQL client's came free within ${
              Duration.format(timeout)
            }, so this append was not stored: all are in use (by transactions waiting for their own appends?)`
          })
        )
    }),
    // The client's statements run on the connection of the transaction in the context. Its depth is
    // -1: none is open yet, so a `withTransaction` in `effect` begins one there (depth 0), not a savepoint.
    (connection) => Effect.provideService(effect, sql.transactionService, [connection, -1])
  ))
