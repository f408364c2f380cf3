/**
 * The in-memory backend's primitives: each session an array of entries.
 */
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as SessionEvent from "../SessionEvent.ts"
import type * as SessionId from "../SessionId.ts"
import type { Backend } from "../SessionLog.ts"

/** A fresh, empty in-memory backend. */
export const backend = (): Backend => {
  const sessions = new Map<SessionId.SessionId, Array<SessionEvent.Entry>>()
  return {
    append: (session, batch) =>
      Effect.sync(() => {
        let entries = sessions.get(session)
        if (entries === undefined) {
          entries = []
          sessions.set(session, entries)
        }
        const first = entries.length
        for (const [i, prepared] of batch.entries()) entries.push(SessionEvent.makeEntry(prepared.type, first + i, prepared.time, prepared.data))
        return first
      }),
    read: (session, fromSeq) => Stream.suspend(() => Stream.fromArray((sessions.get(session) ?? []).slice(fromSeq))),
    sessions: Effect.sync(() => [...sessions.keys()])
  }
}
