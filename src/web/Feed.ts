/**
 * What the web view's pages are told, as Server-Sent Events.
 *
 * - The overview (`overview`): one `session` event per session with its `TodoOverview` (the list,
 *   the number of events, the times of the last write and of the last event), first for every
 *   session in the store, then for each session again whenever a commit changes it; a session that
 *   appears is just one more. Every event is a whole snapshot, so a page that reconnects is sent
 *   every session's current state again, and nothing it missed is lost.
 * - A session (`session`): one `entry` event per `todo/write`, `turn/start` and `turn/end`, with the
 *   list as it stood after it (what `show --history` prints), its SSE id the entry's seq. A page
 *   that reconnects with `Last-Event-ID` is sent only the entries after that seq.
 *
 * A session that can't be read becomes a `problem` event naming it; the feed goes on.
 *
 * @since 0.2.0
 */
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as Sse from "effect/encoding/Sse"
import { CheckedSessionLog } from "../log/CheckedSessionLog.ts"
import * as SessionEvent from "../log/SessionEvent.ts"
import type * as SessionId from "../log/SessionId.ts"
import type { SessionLogError } from "../log/SessionLogError.ts"
import { ProjectionStore } from "../projection/ProjectionStore.ts"
import * as TodoEvents from "../todo/TodoEvents.ts"
import * as TodoOverview from "../todo/TodoOverview.ts"
import * as TodoProjection from "../todo/TodoProjection.ts"

/**
 * One event of a feed, before it is written as SSE text.
 *
 * @since 0.2.0
 * @category models
 */
export interface Event {
  readonly event: "session" | "entry" | "problem"
  readonly id?: string | undefined
  readonly data: unknown
}

const encoder = new TextEncoder()

/**
 * An event as the bytes of an SSE message (its data one line of JSON).
 *
 * @since 0.2.0
 * @category encoding
 */
export const encode = (event: Event): Uint8Array =>
  encoder.encode(Sse.encoder.write({ _tag: "Event", event: event.event, id: event.id, data: JSON.stringify(event.data) }))

/** The entries a session's history shows. */
const shown: ReadonlySet<string> = new Set([TodoEvents.write.type, TodoEvents.turnStart.type, TodoEvents.turnEnd.type])

const problem = (session: SessionId.SessionId, error: SessionLogError): Event => ({
  event: "problem",
  data: { session, message: error.message }
})

/**
 * Every session's overview, then each one again as commits change it.
 *
 * @since 0.2.0
 * @category feeds
 */
export const overview: Stream.Stream<Event, never, CheckedSessionLog | ProjectionStore> = Stream.unwrap(
  Effect.gen(function*() {
    const log = yield* CheckedSessionLog
    const store = yield* ProjectionStore
    // Subscribed before the sessions are listed, so a commit in between is not missed.
    const committed = yield* log.subscribe
    const sent = new Map<SessionId.SessionId, number>()
    const snapshot = (session: SessionId.SessionId) =>
      store.get(TodoOverview.overview, session).pipe(
        Effect.map((state): ReadonlyArray<Event> => {
          // A burst of commits is one read: the commits after the first find nothing new.
          if ((sent.get(session) ?? -1) >= state.events) return []
          sent.set(session, state.events)
          return [{ event: "session", data: { session, ...state } }]
        }),
        Effect.catch((error) => Effect.succeed([problem(session, error)]))
      )
    const listed = log.sessions.pipe(
      Effect.flatMap((sessions) => Effect.forEach(sessions, snapshot)),
      Effect.map((events) => events.flat()),
      Effect.catch((error) => Effect.succeed([{ event: "problem", data: { message: error.message } } satisfies Event]))
    )
    return Stream.concat(
      Stream.fromIterableEffect(listed),
      committed.pipe(
        // The sessions of the commits that arrived together, each read once.
        Stream.mapArray((chunk) => [[...new Set(chunk.map((c) => c.session))]] as const),
        Stream.mapEffect((sessions) => Effect.map(Effect.forEach(sessions, snapshot), (events) => events.flat())),
        Stream.flattenIterable
      )
    )
  })
)

/**
 * A session's history entries after seq `after` (all of them without it), then each new one.
 *
 * @since 0.2.0
 * @category feeds
 */
export const session = (
  id: SessionId.SessionId,
  after: number | undefined
): Stream.Stream<Event, never, CheckedSessionLog> =>
  Stream.unwrap(Effect.gen(function*() {
    const log = yield* CheckedSessionLog
    const committed = yield* log.subscribe
    let todos = TodoProjection.todos.initial
    let next = 0
    /** Folds an entry (the whole log is folded, so the list after each entry is exact) and tells it if it is news. */
    const fold = (entry: SessionEvent.Entry): ReadonlyArray<Event> => {
      if (entry.seq < next) return [] // read before and seen again live
      todos = TodoProjection.todos.step(todos, entry)
      next = entry.seq + 1
      if (after !== undefined && entry.seq <= after) return []
      if (!shown.has(entry.type)) return []
      const reason = SessionEvent.payload(TodoEvents.turnEnd, entry)?.reason
      const data = { seq: entry.seq, time: entry.time, type: entry.type, ...(reason === undefined ? {} : { reason }), todos }
      return [{ event: "entry", id: String(entry.seq), data }]
    }
    const from = (seq: number) => log.read(id, { fromSeq: seq }).pipe(Stream.map(fold), Stream.flattenIterable)
    return Stream.concat(
      from(0),
      committed.pipe(
        Stream.filter((c) => c.session === id && c.entry.seq >= next),
        // The entry that comes next is folded as it is; after a gap, the log is read from where it is.
        Stream.flatMap((c) => c.entry.seq === next ? Stream.fromIterable(fold(c.entry)) : from(next))
      )
    ).pipe(Stream.catch((error) => Stream.make(problem(id, error))))
  }))
