/**
 * Keeps the folded state of registered projections per session, over the `CheckedSessionLog` it is
 * given (a log whose payloads the invariants have checked: a fold never sees unchecked data).
 * Reading the current state applies only the entries committed since the last read (never a refold
 * of the whole log); `changes` streams the state as new entries are committed, including entries
 * other processes append where the backend carries them.
 *
 * With checkpoints (`layerCheckpointed`, over any `KeyValueStore`), the state is saved every so many
 * entries with the seq it reflects and the fold's version, so reopening a long session folds only
 * its tail. A checkpoint is used only if it decodes, its version is the fold's, and the log still
 * holds the very entry it ends at; otherwise it is ignored and the log is folded from the start.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Semaphore from "effect/Semaphore"
import * as Stream from "effect/Stream"
import * as KeyValueStore from "effect/persistence/KeyValueStore"
import { CheckedSessionLog } from "../log/CheckedSessionLog.ts"
import type { SessionId } from "../log/SessionId.ts"
import type { SessionLogError } from "../log/SessionLogError.ts"
import type { Projection } from "./Projection.ts"

/**
 * Registered folds' current state per session, and their changes as entries are committed.
 *
 * @since 0.2.0
 * @category services
 */
export class ProjectionStore extends Context.Service<ProjectionStore, {
  /** The state after every entry committed so far. */
  readonly get: <S>(projection: Projection<S>, session: SessionId) => Effect.Effect<S, SessionLogError>
  /** The current state, then the state after each later commit that changes the seq it reflects. */
  readonly changes: <S>(projection: Projection<S>, session: SessionId) => Stream.Stream<S, SessionLogError>
}>()("effect-todo-write/ProjectionStore") {}

interface Cell<S> {
  /** The seq of the next entry to apply; -1 until the cell is loaded. */
  next: number
  state: S
  /** The entry the state last included, to stamp a checkpoint with. */
  last: { readonly type: string; readonly time: number } | undefined
  /** `next` when a checkpoint was last saved or loaded. */
  saved: number
  readonly lock: Semaphore.Semaphore
}

/** A saved state: the fold's version, and the seq, type and time of the last entry it includes. */
const Checkpoint = Schema.Struct({
  version: Schema.Int,
  seq: Schema.Int,
  type: Schema.String,
  time: Schema.Int,
  state: Schema.Unknown
})
const decodeCheckpoint = Schema.decodeUnknownResult(Schema.fromJsonString(Checkpoint))

/**
 * How often `layerCheckpointed` saves.
 *
 * @since 0.2.0
 * @category models
 */
export interface CheckpointOptions {
  /** Save a checkpoint once this many entries were applied since the last one. Default 1000. */
  readonly every?: number | undefined
}

interface Checkpoints {
  readonly store: KeyValueStore.KeyValueStore
  readonly every: number
}

/** The most sessions whose folded state a store keeps per projection. */
const maxCells = 10_000

const make = (checkpoints: Checkpoints | undefined) =>
  Effect.gen(function*() {
    const log = yield* CheckedSessionLog
    const cells = new WeakMap<object, Map<SessionId, Cell<unknown>>>()
    const keyOf = (projection: { readonly key: string }, session: SessionId) => `${projection.key}.${session}`

    const cellOf = <S>(projection: Projection<S>, session: SessionId): Cell<S> => {
      let bySession = cells.get(projection)
      if (bySession === undefined) {
        bySession = new Map()
        cells.set(projection, bySession)
      }
      const existing = bySession.get(session)
      // A session's cells are keyed by their projection, so a cell found here holds that projection's state.
      if (existing !== undefined) {
        // Most recently used last: the first in the map is the one evicted.
        bySession.delete(session)
        bySession.set(session, existing)
        return existing as Cell<S>
      }
      // Bounded, so a server that reads many sessions doesn't keep them all: an evicted session is
      // folded again (from its checkpoint, if any) the next time it is read. A stream of changes
      // keeps the cell it holds.
      if (bySession.size >= maxCells) bySession.delete(bySession.keys().next().value!)
      const cell: Cell<S> = {
        next: checkpoints === undefined ? 0 : -1,
        state: projection.initial,
        last: undefined,
        saved: 0,
        lock: Semaphore.makeUnsafe(1)
      }
      bySession.set(session, cell as Cell<unknown>)
      return cell
    }

    /** Folds the log from `fromSeq` onto `state`. */
    const fold = <S>(projection: Projection<S>, session: SessionId, fromSeq: number, state: S, last: Cell<S>["last"]) =>
      Stream.runFold(
        log.read(session, { fromSeq }),
        () => ({ state, next: fromSeq, last }),
        (acc, entry) => {
          acc.state = projection.step(acc.state, entry)
          acc.next = entry.seq + 1
          acc.last = entry
          return acc
        }
      )

    /** The saved checkpoint, if there is one that can be trusted; never fails. */
    const loadCheckpoint = <S>(projection: Projection<S>, session: SessionId, store: KeyValueStore.KeyValueStore) =>
      Effect.gen(function*() {
        const text = yield* store.get(keyOf(projection, session))
        if (text === undefined) return Option.none()
        const decoded = decodeCheckpoint(text)
        if (Result.isFailure(decoded)) return yield* ignore(projection, session, "it is damaged")
        const checkpoint = decoded.success
        if (checkpoint.version !== projection.version) {
          return yield* ignore(projection, session, `it is of fold version ${checkpoint.version}`)
        }
        const state = Schema.decodeUnknownResult(projection.schema)(checkpoint.state)
        if (Result.isFailure(state)) return yield* ignore(projection, session, "its state doesn't decode")
        return Option.some({ ...checkpoint, state: state.success })
      }).pipe(Effect.catch((error) => ignore(projection, session, `it can't be read: ${error.message}`)))

    const ignore = (projection: { readonly key: string }, session: SessionId, why: string) =>
      Effect.as(
        Effect.logWarning(`ProjectionStore: ignoring the ${projection.key} checkpoint of ${session}: ${why}; refolding`),
        Option.none()
      )

    /** First access: from a trusted checkpoint and the log's tail, or from the whole log. */
    const load = <S>(projection: Projection<S>, session: SessionId, cell: Cell<S>) =>
      Effect.gen(function*() {
        const checkpoint = checkpoints === undefined
          ? Option.none()
          : yield* loadCheckpoint(projection, session, checkpoints.store)
        if (Option.isSome(checkpoint)) {
          const cp = checkpoint.value
          // One read from the checkpoint's own last entry, which must still be in the log as it was;
          // the entries after it are the tail to fold.
          const tail = yield* Stream.runFold(
            log.read(session, { fromSeq: cp.seq }),
            () => ({ holds: undefined as boolean | undefined, state: cp.state, next: cp.seq + 1, last: cp as Cell<S>["last"] }),
            (acc, entry) => {
              if (acc.holds === undefined) {
                acc.holds = entry.seq === cp.seq && entry.type === cp.type && entry.time === cp.time
              } else if (acc.holds) {
                acc.state = projection.step(acc.state, entry)
                acc.next = entry.seq + 1
                acc.last = entry
              }
              return acc
            }
          )
          if (tail.holds === true) {
            Object.assign(cell, { state: tail.state, next: tail.next, last: tail.last })
            cell.saved = cp.seq + 1
            return
          }
          yield* ignore(projection, session, `the log no longer holds its entry at seq ${cp.seq} (it is ahead of the log, or of another log)`)
        }
        const all = yield* fold(projection, session, 0, projection.initial, undefined)
        Object.assign(cell, all)
        cell.saved = 0
      })

    const save = <S>(projection: Projection<S>, session: SessionId, cell: Cell<S>) =>
      Effect.suspend(() => {
        if (checkpoints === undefined || cell.last === undefined || cell.next - cell.saved < checkpoints.every) {
          return Effect.void
        }
        const encoded = Schema.encodeUnknownResult(projection.schema)(cell.state)
        if (Result.isFailure(encoded)) return Effect.void
        const text = JSON.stringify({
          version: projection.version,
          seq: cell.next - 1,
          type: cell.last.type,
          time: cell.last.time,
          state: encoded.success
        })
        cell.saved = cell.next
        return checkpoints.store.set(keyOf(projection, session), text).pipe(
          Effect.catch((error) => Effect.logWarning(`ProjectionStore: can't save a checkpoint: ${error.message}`))
        )
      })

    /** Applies what was committed since the cell's seq. */
    const catchUp = <S>(projection: Projection<S>, session: SessionId, cell: Cell<S>) =>
      Effect.gen(function*() {
        if (cell.next < 0) {
          yield* load(projection, session, cell)
        } else {
          Object.assign(cell, yield* fold(projection, session, cell.next, cell.state, cell.last))
        }
        yield* save(projection, session, cell)
      }).pipe(cell.lock.withPermit)

    const get = <S>(projection: Projection<S>, session: SessionId) => {
      const cell = cellOf(projection, session)
      return Effect.map(catchUp(projection, session, cell), () => cell.state)
    }

    const changes = <S>(projection: Projection<S>, session: SessionId): Stream.Stream<S, SessionLogError> =>
      Stream.unwrap(Effect.gen(function*() {
        // Subscribe before the first read, so nothing committed in between goes unseen.
        const committed = yield* log.subscribe
        const cell = cellOf(projection, session)
        yield* catchUp(projection, session, cell)
        const initial = cell.state
        let emittedUpTo = cell.next
        return Stream.concat(
          Stream.make(initial),
          committed.pipe(
            Stream.filter((c) => c.session === session && c.entry.seq >= emittedUpTo),
            Stream.mapEffect(() =>
              Effect.map(catchUp(projection, session, cell), () => {
                if (cell.next === emittedUpTo) return []
                emittedUpTo = cell.next
                return [cell.state]
              })
            ),
            Stream.flattenIterable
          )
        )
      }))

    return ProjectionStore.of({ get, changes })
  })

/**
 * Folds in memory; reopening a session folds its whole log.
 *
 * @since 0.2.0
 * @category layers
 */
export const layer: Layer.Layer<ProjectionStore, never, CheckedSessionLog> = Layer.effect(ProjectionStore, make(undefined))

/**
 * Also saves checkpoints in the `KeyValueStore`, so reopening a long session folds only its tail.
 *
 * @since 0.2.0
 * @category layers
 */
export const layerCheckpointed = (
  options: CheckpointOptions = {}
): Layer.Layer<ProjectionStore, never, CheckedSessionLog | KeyValueStore.KeyValueStore> =>
  Layer.effect(
    ProjectionStore,
    Effect.flatMap(KeyValueStore.KeyValueStore, (store) => make({ store, every: options.every ?? 1000 }))
  )
