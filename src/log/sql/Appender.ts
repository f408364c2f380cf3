/**
 * Stores the batches the log core hands the SQL backend, gathered across sessions: while one
 * statement is in flight, the batches that arrive (from any session) wait, and go together in the
 * next. A group is one autocommitted statement: one round trip and one commit, however many sessions
 * it holds.
 *
 * The statement takes each session's advisory lock with `pg_try_advisory_xact_lock`, which never
 * waits. A session whose lock another process holds (it is appending to that session too) is left
 * out of the statement and stored in a transaction of its own that waits for the lock: without
 * waiting, the statement's snapshot might miss what that process commits meanwhile. Locks are taken
 * in session order, so two processes never wait on each other in a cycle. Every session stored
 * announces `<first>-<last> <session>`: its batch's first and last seqs. (Should the other process
 * commit and let go between the statement's snapshot and its try, the first row collides with one it
 * committed: a unique violation, rolled back and retried.)
 *
 * A group is bounded (1,000 events or 4 Mi characters of JSON; a batch is never split), and never
 * joins a transaction the caller has open. It commits all or none: if its statement fails, every
 * append in it fails with that error (a group cancelled for its time is first tried in halves).
 * Failures that certainly rolled back (deadlock, serialization, lock timeout, unique violation) are
 * retried; any other failure, a lost connection among them, is not, since it may hide a commit. A
 * group the server cancels for its `statement_timeout` is stored in halves (see `store`). Every
 * statement's wait for a connection is bounded (`Connection.bounded`).
 *
 * @since 0.2.0
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import type * as SqlClient from "effect/sql/SqlClient"
import * as SqlError from "effect/sql/SqlError"
import { forkOrElse } from "../internal/forkOrElse.ts"
import * as StorageFailures from "../internal/storageFailure.ts"
import type * as SessionLog from "../SessionLog.ts"
import { StorageFailure } from "../SessionLogError.ts"
import * as Connection from "./Connection.ts"
import * as GroupStatement from "./GroupStatement.ts"
import * as Retried from "./Retried.ts"

/** One session's batch, waiting for a group, and the seq of its first event once stored. */
interface Pending {
  readonly session: string
  readonly batch: ReadonlyArray<SessionLog.Prepared>
  readonly done: Deferred.Deferred<number, SessionLog.Failure>
}

/** How many times over a group cancelled for the server's statement_timeout is split (see `store`). */
const maxSplits = 4

/** The halving of one group cancelled for its time: splits left, and, once given up, what the rest fails with. */
interface Split {
  left: number
  giveUp: Exit.Exit<never, SessionLog.Failure> | undefined
}

/** Bounds on one statement (events, characters of payload JSON): the rest of what has gathered goes in the next. */
const maxGroupEvents = 1000
const maxGroupChars = 4 * 1024 * 1024

/**
 * The appender over a table: `append` stores one session's batch with whatever other sessions'
 * batches gathered meanwhile, and answers the seq of its first event.
 *
 * @since 0.2.0
 * @category constructors
 */
export const make = Effect.fnUntraced(function*(options: {
  readonly sql: SqlClient.SqlClient
  readonly table: string
  readonly channel: string
  /** How long a group waits for a connection (see `Connection.bounded`). */
  readonly connectionTimeout: Duration.Duration
}) {
  const { channel, sql, table } = options
  const scope: Scope.Scope = yield* Effect.scope
  const lockPrefix = `${table}:`
  // A group carries other callers' appends, and an append is durable once it returns: neither may join a
  // transaction the caller that happens to store the group has open on this client.
  const outsideTransactions = <A>(effect: Effect.Effect<A>): Effect.Effect<A> =>
    Effect.updateContext(effect, Context.omit(sql.transactionService))

  const insert = GroupStatement.make(sql, table, channel)

  /**
   * A transaction of its own. Its ROLLBACK failing (the connection lost under it) is a defect in
   * effect/sql; here it is the SqlError it is: the appends fail, typed, and aren't retried.
   */
  const transaction = <A, E>(effect: Effect.Effect<A, E>) =>
    Effect.catchDefect(sql.withTransaction(effect), (defect) => SqlError.isSqlError(defect) ? Effect.fail(defect) : Effect.die(defect))

  // Every statement waits a bounded time for its connection: callers holding every connection of the
  // pool in transactions of their own, each waiting for its append, would otherwise wait forever.
  const onConnection = Connection.bounded(sql, options.connectionTimeout)

  /** Waits for the sessions' locks, in session order, then stores them: for sessions another process is appending to. */
  const insertLocked = (group: ReadonlyArray<Pending>) =>
    onConnection(transaction(Effect.gen(function*() {
      const sessions = [...new Set(group.map((pending) => pending.session))].sort()
      yield* sql`SELECT pg_advisory_xact_lock(hashtextextended(${lockPrefix} || s, 0))
        FROM json_array_elements_text(${JSON.stringify(sessions)}::json) WITH ORDINALITY AS u(s, i) ORDER BY i`
      const heads = yield* insert(group)
      const stuck = heads.find((head) => !head.ok)
      // Held by this transaction, so the statement's own try can't fail; if it ever did, nothing of it commits.
      if (stuck !== undefined) return yield* Effect.fail(new StorageFailure({ detail: `the advisory lock of ${stuck.session} was not held` }))
      return heads
    })))

  /**
   * What an append fails with: the group's failure, or, interrupted (the log closing under a
   * statement), a failure saying so: its statement may or may not have committed.
   */
  const failedWith = (cause: Cause.Cause<SessionLog.Failure>): Exit.Exit<number, SessionLog.Failure> =>
    Cause.hasInterruptsOnly(cause)
      ? Exit.fail(new StorageFailure({ detail: "the log was closed while this append was stored: it may or may not have been committed" }))
      : Exit.failCause(cause)

  /** Answers each append of the group: its session's first seq, or the group's failure. */
  const settle = (group: ReadonlyArray<Pending>, exit: Exit.Exit<ReadonlyArray<GroupStatement.Head>, SessionLog.Failure>) => {
    const heads = Exit.isSuccess(exit) ? new Map(exit.value.map((head) => [head.session, head.first])) : undefined
    for (const pending of group) {
      const first = heads?.get(pending.session)
      Deferred.doneUnsafe(
        pending.done,
        Exit.isFailure(exit)
          ? failedWith(exit.cause)
          : first === undefined || first === null
          ? Exit.fail(new StorageFailure({ detail: `no seq came back for ${pending.session}` }))
          : Exit.succeed(Number(first))
      )
    }
  }

  /** A defect, or the log closing (an interruption), fails every append still waiting on the effect: none waits forever. */
  const answeringAll = (group: ReadonlyArray<Pending>) => <A>(effect: Effect.Effect<A>) =>
    Effect.onExit(effect, (exit) =>
      Effect.sync(() => {
        if (Exit.isSuccess(exit)) return
        const failed = failedWith(exit.cause)
        for (const pending of group) Deferred.doneUnsafe(pending.done, failed)
      }))

  /**
   * Runs `effect` on a fiber of the log's; if the log has closed, so that the fiber never runs it,
   * the appends it was to answer fail, saying so.
   */
  const forked = (effect: Effect.Effect<void>, group: () => ReadonlyArray<Pending>, options?: { readonly uninterruptible: true }) =>
    forkOrElse(effect, scope, () => {
      const failed = Exit.fail(new StorageFailure({ detail: "the log was closed before this append was stored" }))
      for (const pending of group()) Deferred.doneUnsafe(pending.done, failed)
    }, options)

  /**
   * Stores a group; sessions whose lock was held elsewhere go on, on their own fiber, to wait for it.
   * A group cancelled for the server's statement_timeout (nothing of it committed) may be too big
   * for it: it is stored in halves (`split`, shared by the halves of one group), a batch cancelled
   * alone failing alone. Past `maxSplits` halvings, the cause is not the size: a group cancelled then
   * fails, and what is left of the halves fails untried, rather than hold every append up for a
   * timeout per try.
   */
  const store = (group: ReadonlyArray<Pending>, split?: Split): Effect.Effect<void> =>
    Effect.gen(function*() {
      if (split?.giveUp !== undefined) return settle(group, split.giveUp)
      const exit = yield* Effect.exit(onConnection(Retried.ifRolledBack(insert(group))))
      if (Exit.isFailure(exit)) {
        const error = Option.getOrUndefined(Cause.findErrorOption(exit.cause))
        if (!Retried.isCancelled(error) || group.length === 1) return settle(group, exit)
        const halves = split ?? { left: maxSplits, giveUp: undefined }
        if (halves.left === 0) {
          halves.giveUp = Exit.fail(
            new StorageFailure({
              detail: `not stored, not tried: its group was cancelled for the server's statement_timeout, and so were its halves, ${maxSplits} times over (${
                StorageFailures.describe(error)
              })`
            })
          )
          return settle(group, exit)
        }
        halves.left--
        yield* store(group.slice(0, group.length >> 1), halves)
        return yield* store(group.slice(group.length >> 1), halves)
      }
      const busy = new Set(exit.value.filter((head) => !head.ok).map((head) => head.session))
      settle(group.filter((pending) => !busy.has(pending.session)), exit)
      if (busy.size === 0) return
      const waiting = group.filter((pending) => busy.has(pending.session))
      yield* forked(
        Effect.flatMap(Effect.exit(Retried.ifRolledBack(insertLocked(waiting))), (locked) => Effect.sync(() => settle(waiting, locked)))
          .pipe(answeringAll(waiting)),
        () => waiting
      )
    }).pipe(answeringAll(group))

  let queue: Array<Pending> = []
  let flushing = false
  let lastGroup = 0
  /** Completed once nothing is being stored, for the log's close waiting on it. */
  let drained: Deferred.Deferred<void> | undefined
  const idle = () => {
    flushing = false
    if (drained !== undefined) Deferred.doneUnsafe(drained, Exit.void)
    drained = undefined
  }
  // The log closing waits for the group being stored, and answers those gathered behind it (they
  // fail: nothing starts in a closed scope), before its client closes under them.
  yield* Effect.addFinalizer(() =>
    Effect.suspend(() => {
      if (!flushing) return Effect.void
      drained ??= Deferred.makeUnsafe<void>()
      return Deferred.await(drained)
    })
  )

  /** The next group: what has gathered, up to a bound on the statement's size (at least one batch). */
  const take = (): Array<Pending> => {
    let events = 0
    let chars = 0
    let count = 0
    while (count < queue.length && (count === 0 || (events < maxGroupEvents && chars < maxGroupChars))) {
      const { batch } = queue[count++]!
      events += batch.length
      for (const prepared of batch) chars += prepared.json.length
    }
    return queue.splice(0, count)
  }

  /**
   * Stores what has gathered, then hands what gathered meanwhile to a fiber of its own. If it stops
   * unexpectedly (a defect), every append it was to answer fails with that cause: none waits forever.
   */
  const flush: Effect.Effect<void> = Effect.gen(function*() {
    // When the last group held several appends, those it woke join this one rather than the next. A
    // lone appender doesn't wait: the yield costs it a turn of the event loop.
    if (lastGroup > 1) yield* Effect.yieldNow
    const group = take()
    lastGroup = group.length
    yield* store(group)
    if (queue.length === 0) idle()
    else {
      yield* forked(flush, () => {
        idle()
        const left = queue
        queue = []
        return left
      }, { uninterruptible: true })
    }
  }).pipe(
    Effect.onExit((exit) =>
      Effect.sync(() => {
        if (Exit.isSuccess(exit)) return
        idle()
        const left = queue
        queue = []
        const failed = failedWith(exit.cause)
        for (const pending of left) Deferred.doneUnsafe(pending.done, failed)
      })
    )
  )

  // Uninterruptible from the look at `flushing`: a caller that takes the flush on must run it, or
  // every later append would wait on a flush no one runs.
  const append = (session: string, batch: ReadonlyArray<SessionLog.Prepared>): Effect.Effect<number, SessionLog.Failure> =>
    Effect.uninterruptibleMask((restore) =>
      Effect.suspend(() => {
        const pending: Pending = { session, batch, done: Deferred.makeUnsafe() }
        queue.push(pending)
        if (flushing) return restore(Deferred.await(pending.done))
        // Nothing in flight: this caller stores the group on its own fiber; others wait on it.
        flushing = true
        return Effect.andThen(outsideTransactions(flush), restore(Deferred.await(pending.done)))
      })
    )

  return { append } as const
})
