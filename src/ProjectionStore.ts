/**
 * Keeps the folded state of registered projections per session, over the `SessionLog` it is given.
 * Reading the current state applies only the entries committed since the last read (never a refold
 * of the whole log); `changes` streams the state as new entries are committed, including entries
 * other processes append where the backend carries them.
 */
import { Context, Effect, Layer, Semaphore, Stream } from "effect"
import type { Projection } from "./Projection.ts"
import type { SessionId } from "./SessionId.ts"
import { SessionLog } from "./SessionLog.ts"
import type { SessionLogError } from "./SessionLogError.ts"

export class ProjectionStore extends Context.Service<ProjectionStore, {
  /** The state after every entry committed so far. */
  readonly get: <S>(projection: Projection<S>, session: SessionId) => Effect.Effect<S, SessionLogError>
  /** The current state, then the state after each later commit that changes the seq it reflects. */
  readonly changes: <S>(projection: Projection<S>, session: SessionId) => Stream.Stream<S, SessionLogError>
}>()("effect-todo-write/ProjectionStore") {}

interface Cell<S> {
  /** The seq of the next entry to apply. */
  next: number
  state: S
  readonly lock: Semaphore.Semaphore
}

export const layer: Layer.Layer<ProjectionStore, never, SessionLog> = Layer.effect(
  ProjectionStore,
  Effect.gen(function*() {
    const log = yield* SessionLog
    const cells = new WeakMap<Projection<any>, Map<SessionId, Cell<any>>>()

    const cellOf = <S>(projection: Projection<S>, session: SessionId): Cell<S> => {
      let bySession = cells.get(projection)
      if (bySession === undefined) {
        bySession = new Map()
        cells.set(projection, bySession)
      }
      let cell = bySession.get(session)
      if (cell === undefined) {
        cell = { next: 0, state: projection.initial, lock: Semaphore.makeUnsafe(1) }
        bySession.set(session, cell)
      }
      return cell
    }

    /** Applies what was committed since the cell's seq; answers whether anything was applied. */
    const catchUp = <S>(projection: Projection<S>, session: SessionId, cell: Cell<S>) =>
      Effect.map(
        Stream.runFold(
          log.read(session, { fromSeq: cell.next }),
          () => ({ state: cell.state, next: cell.next }),
          (acc, entry) => ({ state: projection.step(acc.state, entry), next: entry.seq + 1 })
        ),
        ({ next, state }) => {
          const advanced = next !== cell.next
          cell.state = state
          cell.next = next
          return advanced
        }
      ).pipe(cell.lock.withPermit)

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
)
