/**
 * The session log: an append-only sequence of events per session. Appending assigns the next seq
 * (0, 1, 2… contiguous per session) and the time from `Clock`; reading returns a session's events in
 * order; `subscribe` streams entries as they are committed, for live readers. Backends: this module's
 * in-memory layer, `SessionLogFile` (JSONL) and `SessionLogSql` (PostgreSQL).
 */
import { Clock, Context, Effect, Layer, PubSub, type Scope, Stream } from "effect"
import type * as SessionEvent from "./SessionEvent.ts"
import type { SessionId } from "./SessionId.ts"
import { InvalidPayload, SessionLogError } from "./SessionLogError.ts"

export interface ReadOptions {
  /** Start at this seq instead of 0. */
  readonly fromSeq?: number | undefined
}

export class SessionLog extends Context.Service<SessionLog, {
  /** Appends one event and answers with the committed entry, once it is committed. */
  readonly append: (
    session: SessionId,
    type: string,
    data: unknown
  ) => Effect.Effect<SessionEvent.Entry, SessionLogError>
  /** A session's events in seq order; an unknown session has none. */
  readonly read: (session: SessionId, options?: ReadOptions) => Stream.Stream<SessionEvent.Entry, SessionLogError>
  /**
   * Subscribes to committed entries, across all sessions: the stream carries every entry committed
   * after this effect returns, until the scope closes.
   */
  readonly subscribe: Effect.Effect<Stream.Stream<SessionEvent.Committed>, never, Scope.Scope>
  /** The sessions the log holds. */
  readonly sessions: Effect.Effect<ReadonlyArray<SessionId>, SessionLogError>
}>()("effect-todo-write/SessionLog") {}

const isPlainObject = (value: object): boolean => {
  const proto = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

const at = (path: string, key: string | number) => typeof key === "number" ? `${path}[${key}]` : `${path}.${key}`

/**
 * A frozen copy of a JSON payload, or what in it JSON can't hold: every backend stores exactly JSON,
 * so a value it would silently alter (NaN, a Date, `undefined` in an array, a cycle) is refused
 * instead. Object properties that are `undefined` are left out, as absent.
 */
export const copyJson = (value: unknown): { readonly copy: unknown } | { readonly problem: string } => {
  // A deeply frozen JSON value can't change under anyone: it is its own snapshot.
  if (isFrozenJson(value, 0)) return { copy: value }
  const ancestors = new Set<object>()
  let problem: string | undefined
  const visit = (v: unknown, path: string): unknown => {
    switch (typeof v) {
      case "string":
      case "boolean":
        return v
      case "number":
        if (Number.isFinite(v)) return v
        problem = `${path}: ${v} is not a JSON number`
        return undefined
      case "object": {
        if (v === null) return null
        if (ancestors.has(v)) {
          problem = `${path}: a cycle`
          return undefined
        }
        ancestors.add(v)
        let out: unknown
        if (Array.isArray(v)) {
          const array: Array<unknown> = new Array(v.length)
          for (let i = 0; i < v.length && problem === undefined; i++) {
            if (v[i] === undefined) problem = `${at(path, i)}: undefined is not JSON`
            else array[i] = visit(v[i], at(path, i))
          }
          out = Object.freeze(array)
        } else if (isPlainObject(v)) {
          const object: Record<string, unknown> = {}
          for (const key in v) {
            const item = (v as Record<string, unknown>)[key]
            if (item !== undefined) object[key] = visit(item, at(path, key))
            if (problem !== undefined) break
          }
          out = Object.freeze(object)
        } else {
          problem = `${path}: a ${v.constructor?.name ?? "non-plain object"} is not JSON`
        }
        ancestors.delete(v)
        return out
      }
      default:
        problem = `${path}: a ${typeof v} is not JSON`
        return undefined
    }
  }
  const copy = visit(value, "data")
  return problem === undefined ? { copy } : { problem }
}

/** `v` is JSON, frozen all the way down, with no `undefined` property; `false` when unsure. */
const isFrozenJson = (v: unknown, depth: number): boolean => {
  switch (typeof v) {
    case "string":
    case "boolean":
      return true
    case "number":
      return Number.isFinite(v)
    case "object": {
      if (v === null) return true
      // Deep or cyclic values take the copying path, which reports cycles.
      if (depth > 32 || !Object.isFrozen(v)) return false
      if (Array.isArray(v)) {
        for (let i = 0; i < v.length; i++) if (v[i] === undefined || !isFrozenJson(v[i], depth + 1)) return false
        return true
      }
      if (!isPlainObject(v)) return false
      for (const key in v) {
        const item = (v as Record<string, unknown>)[key]
        if (item === undefined || !isFrozenJson(item, depth + 1)) return false
      }
      return true
    }
    default:
      return false
  }
}

const invalidPayload = (method: string, session: SessionId, detail: string) =>
  SessionLogError.fromReason({ method, session, reason: new InvalidPayload({ detail }) })

/** A frozen copy of a payload, or `InvalidPayload` when JSON can't hold it. */
export const snapshotPayload = (
  method: string,
  session: SessionId,
  data: unknown
): Effect.Effect<unknown, SessionLogError> =>
  Effect.suspend(() => {
    const result = copyJson(data)
    return "copy" in result ? Effect.succeed(result.copy) : Effect.fail(invalidPayload(method, session, result.problem))
  })

/**
 * A payload as JSON text, the form durable backends store, and its frozen copy. Refused, like
 * `snapshotPayload`, when JSON can't hold it.
 */
export const encodePayload = (
  method: string,
  session: SessionId,
  data: unknown
): Effect.Effect<{ readonly json: string; readonly copy: unknown }, SessionLogError> =>
  Effect.map(snapshotPayload(method, session, data), (copy) => ({ json: JSON.stringify(copy), copy }))

export const makeEntry = (type: string, seq: number, time: number, data: unknown): SessionEvent.Entry =>
  Object.freeze({ type, seq, time, data })

/** Keeps every session in memory; for tests and for embedding where durability isn't wanted. */
export const layerMemory: Layer.Layer<SessionLog> = Layer.effect(
  SessionLog,
  Effect.gen(function*() {
    const sessions = new Map<SessionId, Array<SessionEvent.Entry>>()
    const pubsub = yield* Effect.acquireRelease(PubSub.unbounded<SessionEvent.Committed>(), PubSub.shutdown)

    // Untraced: memory appends are too cheap for a span to be worth its cost.
    const append = Effect.fnUntraced(function*(session: SessionId, type: string, data: unknown) {
      const copy = yield* snapshotPayload("append", session, data)
      const time = yield* Clock.currentTimeMillis
      let entries = sessions.get(session)
      if (entries === undefined) {
        entries = []
        sessions.set(session, entries)
      }
      // No yield between reading the length and pushing: seqs stay contiguous under concurrent appends.
      const entry = makeEntry(type, entries.length, time, copy)
      entries.push(entry)
      yield* PubSub.publish(pubsub, { session, entry })
      return entry
    })

    const read = (session: SessionId, options?: ReadOptions) =>
      Stream.suspend(() => Stream.fromArray((sessions.get(session) ?? []).slice(options?.fromSeq ?? 0)))

    return SessionLog.of({
      append,
      read,
      subscribe: Effect.map(PubSub.subscribe(pubsub), Stream.fromSubscription),
      sessions: Effect.sync(() => [...sessions.keys()])
    })
  })
)
