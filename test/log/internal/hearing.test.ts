import { assert, describe, it } from "@effect/vitest"
import { Effect, Logger, Option, Queue, Stream } from "effect"
import * as Memory from "../../../src/log/internal/memory.ts"
import type * as SessionEvent from "../../../src/log/SessionEvent.ts"
import * as SessionId from "../../../src/log/SessionId.ts"
import * as SessionLog from "../../../src/log/SessionLog.ts"

const id = SessionId.decodeSync
const local = id("local")
const marker = id("marker")

/**
 * A log over the in-memory store whose announcements a test offers by hand, and whose reads of the
 * sessions in `unreadable` fail; what its subscriber sees, one at a time (`next`) or all up to a marker
 * appended last (`rest`); `commit`, another process's commit straight to the store.
 */
const harness = Effect.gen(function*() {
  const store = Memory.backend()
  const announcements = yield* Queue.unbounded<SessionLog.Announcement | SessionLog.Missed, Error>()
  const unreadable = new Set<string>()
  const log = yield* SessionLog.make({
    ...store,
    read: (session, fromSeq) =>
      Stream.suspend(() => unreadable.has(session) ? Stream.fail(new Error("EIO")) : store.read(session, fromSeq)),
    announcements: Effect.succeed(Stream.fromQueue(announcements))
  })
  const seen = yield* Queue.unbounded<SessionEvent.Committed>()
  yield* Effect.forkScoped(Stream.runForEach(yield* log.subscribe, (c) => Queue.offer(seen, c)))
  const label = ({ entry, session }: SessionEvent.Committed) => `${session} ${entry.seq}`
  return {
    log,
    unreadable,
    announcements,
    commit: (session: SessionId.SessionId) => store.append(session, [{ type: "remote", time: 0, data: null, json: "null" }]),
    next: Effect.map(Queue.take(seen), label),
    rest: Effect.gen(function*() {
      yield* log.append(marker, "marker", null)
      // let the hearing fiber process whatever is queued before the marker check
      yield* Effect.sleep("50 millis")
      const out: Array<string> = []
      for (let c = yield* Queue.take(seen); c.session !== marker; c = yield* Queue.take(seen)) out.push(label(c))
      for (let o = yield* Queue.poll(seen); Option.isSome(o); o = yield* Queue.poll(seen)) out.push(label(o.value))
      return out
    })
  }
})

describe("hearing: this process's commits beside others'", () => {
  it.live("once the announcements have ended (failed), own commits past a gap are published at once again", () =>
    Effect.gen(function*() {
      const h = yield* harness
      yield* h.log.append(local, "a", null)
      assert.strictEqual(yield* h.next, "local 0")
      yield* Queue.fail(h.announcements, new Error("connection lost"))
      yield* Effect.sleep("20 millis")
      yield* h.commit(local) // another process's seq 1, which no one announces now
      assert.strictEqual((yield* h.log.append(local, "b", null)).seq, 2)
      assert.strictEqual((yield* h.log.append(local, "c", null)).seq, 3)
      assert.deepStrictEqual((yield* h.rest).filter((r) => r.startsWith("local")), ["local 2", "local 3"])
    }).pipe(Effect.scoped, Effect.provide(Logger.layer([]))))

  it.live("an own commit past a gap whose read-back fails goes out all the same, past the gap", () =>
    Effect.gen(function*() {
      const h = yield* harness
      yield* h.log.append(local, "a", null)
      assert.strictEqual(yield* h.next, "local 0")
      yield* h.commit(local) // another process's seq 1, not yet heard of
      h.unreadable.add(local)
      assert.strictEqual((yield* h.log.append(local, "b", null)).seq, 2)
      yield* Effect.sleep("20 millis")
      h.unreadable.delete(local)
      assert.deepStrictEqual((yield* h.rest).filter((r) => r.startsWith("local")), ["local 2"])
    }).pipe(Effect.scoped, Effect.provide(Logger.layer([]))))

  it.live("announcements missed while own commits wait past a gap: each entry goes out once, in seq order", () =>
    Effect.gen(function*() {
      const h = yield* harness
      yield* h.log.append(local, "a", null)
      assert.strictEqual(yield* h.next, "local 0")
      yield* h.commit(local)
      yield* h.log.append(local, "b", null)
      yield* Queue.offer(h.announcements, { _tag: "Missed" })
      yield* Queue.offer(h.announcements, { session: local, seq: 1, first: 1 })
      yield* h.log.append(local, "c", null)
      assert.deepStrictEqual((yield* h.rest).filter((r) => r.startsWith("local")), ["local 1", "local 2", "local 3"])
    }).pipe(Effect.scoped, Effect.provide(Logger.layer([]))))
})
