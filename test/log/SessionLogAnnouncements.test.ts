/**
 * The core's reader of other processes' commits (`Backend.announcements`), on a hand-made backend:
 * an in-memory store shared with "another process" (the test, which commits to it directly and
 * announces), that also announces this process's own commits back, as the file watcher and
 * PostgreSQL's NOTIFY do. Everything is observed through a subscriber, in order; no sleeps.
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Logger, Option, Queue, Scope, Stream } from "effect"
import * as Memory from "../../src/log/internal/memory.ts"
import type * as SessionEvent from "../../src/log/SessionEvent.ts"
import * as SessionId from "../../src/log/SessionId.ts"
import * as SessionLog from "../../src/log/SessionLog.ts"
import { StorageFailure } from "../../src/log/SessionLogError.ts"

const id = SessionId.decodeSync
const local = id("local")
const remote = id("remote")
const marker = id("marker")

type Announcement = SessionLog.Announcement

/** A log over a shared store, a subscriber to it, and what it logged. */
const harness = Effect.gen(function*() {
  const store = Memory.backend()
  const announcements = yield* Queue.unbounded<Announcement | SessionLog.Missed, Error>()
  /** Every read the core asked of the store, as "session@fromSeq". */
  const reads: Array<string> = []
  /** Sessions whose reads fail, as a disk would. */
  const unreadable = new Set<string>()
  /** When set, this process's next append waits for it once its batch is stored and announced. */
  let hold: Deferred.Deferred<void> | undefined
  const log = yield* SessionLog.make({
    ...store,
    append: (session, batch) =>
      store.append(session, batch).pipe(
        Effect.tap((first) => Queue.offer(announcements, { session, seq: first + batch.length - 1 })),
        Effect.tap(() => {
          const gate = hold
          hold = undefined
          return gate === undefined ? Effect.void : Deferred.await(gate)
        })
      ),
    read: (session, fromSeq) =>
      Stream.suspend(() => {
        reads.push(`${session}@${fromSeq}`)
        return unreadable.has(session) ? Stream.fail(new Error("EIO: i/o error, read")) : store.read(session, fromSeq)
      }),
    announcements: Effect.succeed(Stream.fromQueue(announcements))
  })
  const seen = yield* Queue.unbounded<SessionEvent.Committed>()
  yield* Effect.forkScoped(Stream.runForEach(yield* log.subscribe, (committed) => Queue.offer(seen, committed)))
  const label = ({ entry, session }: SessionEvent.Committed) => `${session} ${entry.seq}`
  return {
    log,
    reads,
    unreadable,
    holdNextAppend: (gate: Deferred.Deferred<void>) => Effect.sync(() => (hold = gate)),
    /** Another process commits an event straight to the store, unannounced; answers its seq. */
    commit: (session: SessionId.SessionId) => store.append(session, [{ type: "remote", time: 0, data: null, json: "null" }]),
    announce: (session: string, seq: number, first?: number, entries?: ReadonlyArray<SessionEvent.Entry>) =>
      Queue.offer(announcements, { session, seq, first, entries }),
    /** A session's entries in the store, from `fromSeq` on, read past the core. */
    stored: (session: SessionId.SessionId, fromSeq: number) => Stream.runCollect(store.read(session, fromSeq)),
    endAnnouncements: (error: Error) => Queue.fail(announcements, error),
    /** The backend says it may have missed announcements (its listener listens again). */
    missed: Queue.offer(announcements, { _tag: "Missed" }),
    /** The next entry the subscriber gets, as "session seq" (waits for it). */
    next: Effect.map(Queue.take(seen), label),
    /**
     * What the subscriber got since, up to a marker: a local append to another session, which is
     * published before its append returns, so anything published before it comes first.
     */
    rest: Effect.gen(function*() {
      yield* log.append(marker, "marker", null)
      const out: Array<string> = []
      for (let c = yield* Queue.take(seen); c.session !== marker; c = yield* Queue.take(seen)) out.push(label(c))
      return out
    })
  }
})

/** Runs `body` with a logger that keeps what is logged, as "LEVEL: message", in a queue. */
const withLogs = <A, E, R>(body: (logged: Queue.Queue<string>) => Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const logged = yield* Queue.unbounded<string>()
    const capture = Logger.make(({ logLevel, message }) =>
      Queue.offerUnsafe(logged, `${logLevel}: ${Array.isArray(message) ? message.join(" ") : String(message)}`)
    )
    return yield* body(logged).pipe(Effect.provide(Logger.layer([capture])))
  })

describe("SessionLog.make: other processes' commits, as announced", () => {
  it.effect("an entry announced while its own append is still being stored is published once", () =>
    Effect.gen(function*() {
      const h = yield* harness
      yield* h.log.append(local, "a", null)
      assert.strictEqual(yield* h.next, "local 0")
      const gate = yield* Deferred.make<void>()
      yield* h.holdNextAppend(gate)
      const appending = yield* Effect.forkChild(h.log.append(local, "b", null))
      // Stored and announced, the append held: the announcement's reader publishes seq 1 first.
      assert.strictEqual(yield* h.next, "local 1")
      yield* Deferred.succeed(gate, undefined)
      assert.strictEqual((yield* Fiber.join(appending)).seq, 1)
      // The append, answered, doesn't publish it again.
      assert.deepStrictEqual(yield* h.rest, [])
    }))

  it.effect("an announcement brings the entries committed since the last one published, whose own announcements were missed", () =>
    Effect.gen(function*() {
      const h = yield* harness
      yield* h.log.append(local, "a", null)
      yield* h.log.append(local, "b", null)
      assert.deepStrictEqual(yield* h.rest, ["local 0", "local 1"])
      yield* h.commit(local)
      yield* h.commit(local)
      yield* h.announce(local, 3)
      assert.deepStrictEqual([yield* h.next, yield* h.next], ["local 2", "local 3"])
      assert.deepStrictEqual(yield* h.rest, [])
    }))

  it.effect("for a session it has published nothing of, an announcement brings the seq it names, not what came before", () =>
    Effect.gen(function*() {
      const h = yield* harness
      // Seq 0 was committed and never announced (say, before this process started watching).
      yield* h.commit(remote)
      yield* h.commit(remote)
      yield* h.announce(remote, 1)
      assert.strictEqual(yield* h.next, "remote 1")
      assert.deepStrictEqual(yield* h.rest, [])
    }))

  it.effect("an announcement brings entries up to its seq, not ones stored beyond it and not yet announced", () =>
    Effect.gen(function*() {
      const h = yield* harness
      yield* h.commit(remote)
      yield* h.commit(remote)
      yield* h.commit(remote)
      yield* h.announce(remote, 1)
      assert.strictEqual(yield* h.next, "remote 1")
      assert.deepStrictEqual(yield* h.rest, [])
      yield* h.announce(remote, 2)
      assert.strictEqual(yield* h.next, "remote 2")
      assert.deepStrictEqual(yield* h.rest, [])
    }))

  it.effect("this process's own commits, announced back, cost no read of the store", () =>
    Effect.gen(function*() {
      const h = yield* harness
      yield* h.log.append(local, "a", null)
      yield* h.log.append(local, "b", null)
      yield* h.commit(remote)
      yield* h.announce(remote, 0)
      // Announcements are read in order: once remote's is published, local's two were handled.
      assert.deepStrictEqual([yield* h.next, yield* h.next, yield* h.next], ["local 0", "local 1", "remote 0"])
      assert.deepStrictEqual(h.reads, ["remote@0"])
    }))

  it.effect("an announcement carrying its entries is published without a read of the store", () =>
    Effect.gen(function*() {
      const h = yield* harness
      yield* h.commit(remote)
      yield* h.commit(remote)
      yield* h.announce(remote, 1, 0, yield* h.stored(remote, 0))
      assert.deepStrictEqual([yield* h.next, yield* h.next], ["remote 0", "remote 1"])
      yield* h.commit(remote)
      // Entries from before the last one published are fine: each entry is published once.
      yield* h.announce(remote, 2, 0, yield* h.stored(remote, 0))
      assert.strictEqual(yield* h.next, "remote 2")
      assert.deepStrictEqual(yield* h.rest, [])
      assert.deepStrictEqual(h.reads, [])
    }))

  it.effect("entries that don't run on, seq by seq, from the last one published to the announced seq are read instead", () =>
    Effect.gen(function*() {
      const h = yield* harness
      for (let i = 0; i < 5; i++) yield* h.commit(remote)
      const all = yield* h.stored(remote, 0)
      yield* h.announce(remote, 0, 0, all.slice(0, 1))
      assert.strictEqual(yield* h.next, "remote 0")
      // From seq 2, where 1 is the next to publish; up to 2, where 3 is announced; 2 and 4, with a gap.
      yield* h.announce(remote, 2, 2, all.slice(2, 3))
      yield* h.announce(remote, 3, 2, all.slice(2, 3))
      yield* h.announce(remote, 4, 2, [all[2]!, all[4]!])
      assert.deepStrictEqual(
        [yield* h.next, yield* h.next, yield* h.next, yield* h.next],
        ["remote 1", "remote 2", "remote 3", "remote 4"]
      )
      assert.deepStrictEqual(h.reads, ["remote@1", "remote@3", "remote@4"])
      yield* h.announce(remote, 4, 0, [])
      assert.deepStrictEqual(yield* h.rest, [])
    }))

  it.effect("an announcement that names no session id or no whole seq is ignored, without a warning", () =>
    withLogs((logged) =>
      Effect.gen(function*() {
        const h = yield* harness
        yield* h.commit(remote)
        // A file name that isn't a session (a lock, a temporary file), or a seq that isn't one.
        yield* h.announce("../remote", 0)
        yield* h.announce("remote.lock", 0)
        yield* h.announce(remote, 0.5)
        yield* h.announce(remote, Number.NaN)
        yield* h.announce(remote, 0, -0.5)
        yield* h.announce(remote, 0)
        assert.strictEqual(yield* h.next, "remote 0")
        assert.deepStrictEqual(h.reads, ["remote@0"])
        assert.isTrue(Option.isNone(yield* Queue.poll(logged)))
      })
    ))

  it.effect("a commit it can't read is logged as a warning, and later announcements are still published", () =>
    withLogs((logged) =>
      Effect.gen(function*() {
        const h = yield* harness
        const broken = id("broken")
        h.unreadable.add(broken)
        yield* h.commit(broken)
        yield* h.announce(broken, 0)
        assert.strictEqual(
          yield* Queue.take(logged),
          "Warn: SessionLog: can't read a commit another process announced: SessionLog.read(broken): storage failed: EIO: i/o error, read"
        )
        yield* h.commit(remote)
        yield* h.announce(remote, 0)
        assert.strictEqual(yield* h.next, "remote 0")
      })
    ))

  it.effect("announcements that end in a failure are logged as a warning; this process's own appends go on", () =>
    withLogs((logged) =>
      Effect.gen(function*() {
        const h = yield* harness
        yield* h.endAnnouncements(new Error("connection lost"))
        assert.strictEqual(
          yield* Queue.take(logged),
          "Warn: SessionLog: announcements of other processes' commits ended: SessionLog.subscribe(): storage failed: connection lost"
        )
        assert.strictEqual((yield* h.log.append(local, "a", null)).seq, 0)
        assert.strictEqual(yield* h.next, "local 0")
      })
    ))
})

describe("SessionLog.make: this process's commits beside others' not yet heard of", () => {
  it.effect("an own commit past entries others committed, not yet heard of, comes after them, in order", () =>
    Effect.gen(function*() {
      const h = yield* harness
      yield* h.log.append(local, "a", null)
      assert.strictEqual(yield* h.next, "local 0")
      yield* h.commit(local) // another process's seq 1, its announcement not heard
      assert.strictEqual((yield* h.log.append(local, "b", null)).seq, 2)
      assert.strictEqual(yield* h.next, "local 1")
      assert.strictEqual(yield* h.next, "local 2")
    }))

  it.effect("once the backend says it may have missed some, every session published from is read on, in order", () =>
    Effect.gen(function*() {
      const h = yield* harness
      yield* h.log.append(local, "a", null)
      assert.strictEqual(yield* h.next, "local 0")
      // Another process's seqs 1 and 2; their announcements are lost.
      yield* h.commit(local)
      yield* h.commit(local)
      yield* h.missed
      assert.strictEqual(yield* h.next, "local 1")
      assert.strictEqual(yield* h.next, "local 2")
    }))

  it.effect("once the announcements have ended (failed), own commits past a gap are published at once again", () =>
    withLogs((logged) =>
      Effect.gen(function*() {
        const h = yield* harness
        yield* h.log.append(local, "a", null)
        assert.strictEqual(yield* h.next, "local 0")
        yield* h.endAnnouncements(new Error("connection lost"))
        assert.match(yield* Queue.take(logged), /announcements of other processes' commits ended/)
        yield* h.commit(local) // another process's seq 1, which no one announces now
        assert.strictEqual((yield* h.log.append(local, "b", null)).seq, 2)
        assert.strictEqual((yield* h.log.append(local, "c", null)).seq, 3)
        assert.deepStrictEqual((yield* h.rest).filter((r) => r.startsWith("local")), ["local 2", "local 3"])
      })
    ))

  it.effect("an own commit past a gap whose read-back fails goes out all the same, past the gap", () =>
    withLogs((logged) =>
      Effect.gen(function*() {
        const h = yield* harness
        yield* h.log.append(local, "a", null)
        assert.strictEqual(yield* h.next, "local 0")
        yield* h.commit(local) // another process's seq 1, not yet heard of
        h.unreadable.add(local)
        assert.strictEqual((yield* h.log.append(local, "b", null)).seq, 2)
        assert.strictEqual(yield* h.next, "local 2")
        assert.match(yield* Queue.take(logged), /can't read a commit/)
      })
    ))
})

describe("SessionLog.make: other processes' commits are heard only while someone subscribes", () => {
  /** A log whose backend counts how often it starts and stops hearing, and announces what the test offers. */
  const counting = Effect.gen(function*() {
    const store = Memory.backend()
    const counts = { started: 0, stopped: 0 }
    const announcements = yield* Queue.unbounded<Announcement>()
    const log = yield* SessionLog.make({
      ...store,
      announcements: Effect.acquireRelease(
        Effect.sync(() => {
          counts.started++
          return Stream.fromQueue(announcements)
        }),
        () => Effect.sync(() => counts.stopped++)
      )
    })
    const commit = (session: SessionId.SessionId) => store.append(session, [{ type: "remote", time: 0, data: null, json: "null" }])
    return { log, counts, announcements, commit }
  })

  it.effect("not before the first subscriber; once for any number of them; until the last is gone", () =>
    Effect.gen(function*() {
      const { counts, log } = yield* counting
      yield* log.append(local, "a", null)
      assert.deepStrictEqual(counts, { started: 0, stopped: 0 }, "a log that only appends hears nothing")
      const first = yield* Scope.make()
      const second = yield* Scope.make()
      yield* Effect.asVoid(Scope.provide(log.subscribe, first))
      yield* Effect.asVoid(Scope.provide(log.subscribe, second))
      assert.deepStrictEqual(counts, { started: 1, stopped: 0 })
      yield* Scope.close(first, Exit.void)
      assert.deepStrictEqual(counts, { started: 1, stopped: 0 }, "one subscriber is left")
      yield* Scope.close(second, Exit.void)
      assert.deepStrictEqual(counts, { started: 1, stopped: 1 })
      yield* Effect.scoped(Effect.asVoid(log.subscribe))
      assert.deepStrictEqual(counts, { started: 2, stopped: 2 }, "a later subscriber starts hearing again")
    }))

  it.effect("a subscriber after a pause gets what is announced from then on, not what others committed in between", () =>
    Effect.gen(function*() {
      const { announcements, commit, log } = yield* counting
      yield* Effect.scoped(Effect.gen(function*() {
        const committed = yield* log.subscribe
        const seen = yield* Effect.forkChild(Stream.runCollect(Stream.take(committed, 1)))
        yield* commit(remote)
        yield* Queue.offer(announcements, { session: remote, seq: 0 })
        assert.deepStrictEqual((yield* Fiber.join(seen)).map((c) => c.entry.seq), [0])
      }))
      // Nobody hears these: nobody subscribes.
      yield* commit(remote)
      yield* commit(remote)
      const committed = yield* log.subscribe
      const seen = yield* Effect.forkChild(Stream.runCollect(Stream.take(committed, 1)))
      yield* commit(remote)
      yield* Queue.offer(announcements, { session: remote, seq: 3 })
      assert.deepStrictEqual((yield* Fiber.join(seen)).map((c) => c.entry.seq), [3], "seqs 1 and 2 were committed before it subscribed")
    }).pipe(Effect.scoped))
})

describe("SessionLog.make: starting to hear other processes' commits", () => {
  const remoteEvent = { type: "remote", time: 0, data: null, json: "null" }

  it.effect("a batch another process commits after a subscriber came is published whole, from the first seq announced", () =>
    Effect.gen(function*() {
      const store = Memory.backend()
      const announcements = yield* Queue.unbounded<SessionLog.Announcement>()
      const log = yield* SessionLog.make({ ...store, announcements: Effect.succeed(Stream.fromQueue(announcements)) })
      // Published before anyone heard: forgotten when hearing starts.
      yield* log.append(remote, "a", null)
      yield* log.append(remote, "b", null)
      const committed = yield* log.subscribe
      const seen = yield* Effect.forkChild(Stream.runCollect(Stream.take(committed, 3)))
      const first = yield* store.append(remote, [remoteEvent, remoteEvent, remoteEvent])
      yield* Queue.offer(announcements, { session: remote, seq: first + 2, first })
      assert.deepStrictEqual((yield* Fiber.join(seen)).map((c) => c.entry.seq), [2, 3, 4])
    }).pipe(Effect.scoped))

  it.effect("if hearing can't start, the subscriber is told nothing of it, and the next one to subscribe tries again", () =>
    withLogs((logged) =>
      Effect.gen(function*() {
        const store = Memory.backend()
        const announcements = yield* Queue.unbounded<SessionLog.Announcement>()
        let tries = 0
        const log = yield* SessionLog.make({
          ...store,
          announcements: Effect.suspend(() =>
            ++tries <= 2
              ? Effect.fail(new StorageFailure({ detail: "connection refused" }))
              : Effect.succeed(Stream.fromQueue(announcements))
          )
        })
        const refused =
          "Warn: SessionLog: announcements of other processes' commits ended: SessionLog.subscribe(): storage failed: connection refused"
        // A subscriber comes and goes: there was nothing to stop, and nothing fails.
        yield* Effect.scoped(Effect.asVoid(log.subscribe))
        assert.strictEqual(yield* Queue.take(logged), refused)
        // One stays; the next one tries again while it is there.
        yield* Effect.asVoid(log.subscribe)
        assert.strictEqual(yield* Queue.take(logged), refused)
        const committed = yield* log.subscribe
        assert.strictEqual(tries, 3, "each subscriber that found nothing heard tried again")
        const seen = yield* Effect.forkChild(Stream.runCollect(Stream.take(committed, 1)))
        yield* store.append(remote, [remoteEvent])
        yield* Queue.offer(announcements, { session: remote, seq: 0 })
        assert.deepStrictEqual((yield* Fiber.join(seen)).map((c) => c.entry.seq), [0])
      }).pipe(Effect.scoped)
    ))

  it.effect("what a backend acquired before it died is released; the next subscriber starts afresh", () =>
    Effect.gen(function*() {
      const store = Memory.backend()
      const counts = { acquired: 0, released: 0 }
      let tries = 0
      const log = yield* SessionLog.make({
        ...store,
        announcements: Effect.acquireRelease(Effect.sync(() => counts.acquired++), () => Effect.sync(() => counts.released++)).pipe(
          Effect.andThen(Effect.suspend(() => ++tries === 1 ? Effect.die("a bug in the backend") : Effect.succeed(Stream.never)))
        )
      })
      assert.isTrue(Exit.hasDies(yield* Effect.exit(Effect.scoped(Effect.asVoid(log.subscribe)))))
      assert.deepStrictEqual(counts, { acquired: 1, released: 1 })
      yield* Effect.scoped(Effect.asVoid(log.subscribe))
      assert.deepStrictEqual(counts, { acquired: 2, released: 2 })
    }))

  it.live("a subscribe waiting for hearing to start (a listener waiting for a connection) can be interrupted", () =>
    Effect.gen(function*() {
      const store = Memory.backend()
      const log = yield* SessionLog.make({ ...store, announcements: Effect.never })
      const waited = yield* Effect.scoped(Effect.asVoid(log.subscribe)).pipe(Effect.timeoutOption("50 millis"))
      assert.isTrue(Option.isNone(waited), "the timeout interrupted it")
    }).pipe(Effect.scoped))
})
