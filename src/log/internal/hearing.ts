/**
 * The core's publication of committed entries to subscribers, and its hearing of other processes'
 * commits (`Backend.announcements`): each entry goes out once, whether this process committed it or
 * another one announced it. Announcements are heard only while someone subscribes: the first
 * subscriber starts hearing them, the last one to go stops.
 */
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as PubSub from "effect/PubSub"
import * as Queue from "effect/Queue"
import * as Scope from "effect/Scope"
import * as Semaphore from "effect/Semaphore"
import * as Stream from "effect/Stream"
import type * as SessionEvent from "../SessionEvent.ts"
import * as SessionId from "../SessionId.ts"
import type { Backend, Failure } from "../SessionLog.ts"
import type { SessionLogError } from "../SessionLogError.ts"
import { toError } from "./storageFailure.ts"

/** A read-back of this process's own commit past a gap (see `publishOwn`), queued with the announcements. */
interface CatchUp {
  readonly _tag: "CatchUp"
  readonly session: SessionId.SessionId
  readonly seq: number
  readonly first: number
}

/** Whether `entries` run on, seq by seq, from at most `from` to exactly `seq`. */
const covers = (entries: ReadonlyArray<SessionEvent.Entry>, from: number, seq: number): boolean => {
  const start = entries[0]?.seq
  if (start === undefined || start > from || entries.at(-1)!.seq !== seq) return false
  for (let i = 1; i < entries.length; i++) if (entries[i]!.seq !== start + i) return false
  return true
}

/**
 * Publication over `pubsub`, and `hearing`, which each subscriber acquires in its scope before it
 * subscribes (nothing when the backend announces nothing). Announcements run in `scope`, with
 * `built`, the context the log was built with, whoever subscribes first; `read` is the core's.
 */
export const make = (options: {
  readonly announcements: Backend["announcements"]
  readonly pubsub: PubSub.PubSub<SessionEvent.Committed>
  readonly scope: Scope.Scope
  readonly built: Context.Context<never>
  readonly read: (session: SessionId.SessionId, fromSeq: number) => Stream.Stream<SessionEvent.Entry, SessionLogError>
}) => {
  const { announcements, pubsub } = options
  if (announcements === undefined) {
    const publish = (session: SessionId.SessionId, entries: ReadonlyArray<SessionEvent.Entry>) => {
      for (const entry of entries) PubSub.publishUnsafe(pubsub, { session, entry })
    }
    return { publish, hearing: Effect.void }
  }

  // The last seq published per session, so that each entry goes out once.
  const published = new Map<SessionId.SessionId, number>()
  const publish = (session: SessionId.SessionId, entries: ReadonlyArray<SessionEvent.Entry>) => {
    for (const entry of entries) {
      if (entry.seq <= (published.get(session) ?? -1)) continue
      published.set(session, entry.seq)
      PubSub.publishUnsafe(pubsub, { session, entry })
    }
  }
  // While hearing: this process's own commits that others' not yet heard of come before, read back
  // with them (see `publishOwn`), in turn with the announcements; and the own entries waiting for it.
  let catchUps: Queue.Queue<CatchUp> | undefined
  const waitingOwn = new Map<SessionId.SessionId, Array<SessionEvent.Entry>>()
  /**
   * Once a catch-up up to `upTo` is done: the own entries up to there that its read didn't bring (it
   * failed) go out now; those after it wait for their own.
   */
  const flushOwn = (session: SessionId.SessionId, upTo: number) => {
    const own = waitingOwn.get(session)
    if (own === undefined) return
    const due = own.filter((entry) => entry.seq <= upTo)
    const later = own.filter((entry) => entry.seq > upTo)
    if (later.length === 0) waitingOwn.delete(session)
    else waitingOwn.set(session, later)
    publish(session, due)
  }

  /**
   * This process's commit. Others may have committed to the session in between, and their
   * announcements not yet be heard: published now, it would move the session's last seq past
   * theirs, which would then never go out. So, past a gap, it is read back from the backend with
   * what fills the gap, and published in seq order, as an announcement is.
   */
  const publishOwn = (session: SessionId.SessionId, entries: ReadonlyArray<SessionEvent.Entry>) => {
    const last = published.get(session)
    const first = entries[0]?.seq
    if (catchUps !== undefined && last !== undefined && first !== undefined && first > last + 1) {
      const own = waitingOwn.get(session)
      if (own === undefined) waitingOwn.set(session, [...entries])
      else own.push(...entries)
      Queue.offerUnsafe(catchUps, { _tag: "CatchUp", session, seq: entries.at(-1)!.seq, first: last + 1 })
    } else publish(session, entries)
  }

  /**
   * What another process announced: from the last entry published for the session (so entries
   * whose announcement was missed come too), or, for a session with none since hearing began, from
   * the first seq of the batch announced (or the last, if the backend doesn't say).
   */
  const announced = (
    session: SessionId.SessionId,
    seq: number,
    first: number | undefined,
    entries: ReadonlyArray<SessionEvent.Entry> | undefined
  ) => {
    const from = (published.get(session) ?? (first ?? seq) - 1) + 1
    if (from > seq) return Effect.void
    // The entries the backend read as it heard of the commit, if they run on, seq by seq, from one
    // it has published (or from `from`) to `seq`: nothing to read.
    if (entries !== undefined && covers(entries, from, seq)) {
      return Effect.sync(() => publish(session, entries))
    }
    return options.read(session, from).pipe(
      Stream.takeWhile((entry) => entry.seq <= seq),
      Stream.runCollect,
      Effect.map((entries) => publish(session, entries))
    )
  }
  const readingOn = (reading: Effect.Effect<void, SessionLogError>) =>
    Effect.catch(reading, (error) => Effect.logWarning(`SessionLog: can't read a commit another process announced: ${error.message}`))

  /** Announcements were missed: every session published from is read on from its last published seq. */
  const missed = Effect.suspend(() =>
    Effect.forEach([...published.keys()], (session) => readingOn(announced(session, Number.POSITIVE_INFINITY, undefined, undefined)), {
      discard: true
    })
  )
  const ended = (failure: Failure) =>
    Effect.logWarning(`SessionLog: announcements of other processes' commits ended: ${toError("subscribe")(failure).message}`)
  const valid = (seq: number | undefined) => seq === undefined || Number.isInteger(seq)

  let subscribers = 0
  let heard: Scope.Closeable | undefined
  const lock = Semaphore.makeUnsafe(1)

  /**
   * Starts hearing announcements, in a scope of its own that the last subscriber closes. If the
   * backend can't start (it fails, dies or is interrupted), what it acquired is released, and the
   * subscribers have this process's own commits until the next one to subscribe tries again.
   */
  const start = Effect.gen(function*() {
    const own = yield* Scope.fork(options.scope)
    // What was published while nothing was heard says nothing of what others committed meanwhile.
    published.clear()
    const stream = yield* announcements.pipe(
      Scope.provide(own),
      Effect.onExit((exit) => Exit.isSuccess(exit) ? Effect.void : Scope.close(own, exit)),
      Effect.catch((failure) => Effect.as(ended(failure), undefined))
    )
    if (stream === undefined) return
    heard = own
    const ownCatchUps = yield* Queue.unbounded<CatchUp>()
    catchUps = ownCatchUps
    yield* stream.pipe(
      Stream.merge(Stream.fromQueue(ownCatchUps)),
      Stream.runForEach((item) => {
        if ("_tag" in item) {
          if (item._tag === "Missed") return missed
          // An own commit, read back with what fills the gap before it; if that read fails, it goes out all the same.
          return Effect.andThen(readingOn(announced(item.session, item.seq, item.first, undefined)), Effect.sync(() => flushOwn(item.session, item.seq)))
        }
        const { entries, first, seq, session } = item
        return SessionId.is(session) && Number.isInteger(seq) && valid(first) ? readingOn(announced(session, seq, first, entries)) : Effect.void
      }),
      Effect.catch(ended),
      // However the hearing ends, own commits are published at once again, and those waiting go out.
      Effect.ensuring(Effect.sync(() => {
        if (catchUps === ownCatchUps) catchUps = undefined
        for (const session of [...waitingOwn.keys()]) flushOwn(session, Number.POSITIVE_INFINITY)
      })),
      Effect.forkIn(own)
    )
  })

  const stop = lock.withPermit(Effect.suspend(() => {
    if (--subscribers > 0 || heard === undefined) return Effect.void
    const closing = heard
    heard = undefined
    return Scope.close(closing, Exit.void)
  }))

  // Counted first, with its release: starting to hear may wait (for a connection), interruptibly.
  const hearing: Effect.Effect<void, never, Scope.Scope> = Effect.andThen(
    Effect.acquireRelease(Effect.sync(() => subscribers++), () => stop),
    lock.withPermit(Effect.suspend(() => heard === undefined ? Effect.provideContext(start, options.built) : Effect.void))
  )
  return { publish: publishOwn, hearing }
}
