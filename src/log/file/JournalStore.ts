/**
 * Records written to the journal current now, without the journal's I/O thread: a round's with one
 * write and one sync through `Io` (the committer's, where there is no thread), or a lone batch's at
 * once, with blocking calls on its caller's thread while the committer is idle. A failed write or
 * sync is cut back, so that later records don't follow bytes that end the journal's valid part.
 */
import * as Effect from "effect/Effect"
import { StorageFailure } from "../SessionLogError.ts"
import * as BlockingIo from "./BlockingIo.ts"
import * as Journal from "./Journal.ts"
import * as JournalFile from "./JournalFile.ts"
import type * as JournalRound from "./JournalRound.ts"

/** A batch as the journal stores it. */
export type Batch = Omit<JournalRound.Chunk, "done" | "write" | "id">

/** What storing reads and changes of the committer's state (`B`: the batches it is told of as stored). */
export interface State<B extends Batch = Batch> {
  /** The journal records go to now. */
  readonly current: () => JournalFile.JournalFile
  /** Whether the committer is writing the journal: a lone batch must not meanwhile. */
  readonly busy: () => boolean
  /** Why the journal takes no batches, if it doesn't. */
  readonly broken: () => StorageFailure | undefined
  /** After failed records were cut from the journal (`cut`: whether that worked). */
  readonly afterCut: (generation: JournalFile.JournalFile, cut: boolean) => void
  /** After the records are durable: the journal grew by `bytes`, and covers their files. */
  readonly stored: (generation: JournalFile.JournalFile, batch: ReadonlyArray<B>, bytes: number) => void
}

/** Writes the batches' records with one write and syncs the journal (the committer's). */
export const store = (state: State, batch: ReadonlyArray<Batch>, io: BlockingIo.Io): Effect.Effect<void, JournalRound.Failure> =>
  Effect.gen(function*() {
    const broken = state.broken()
    if (broken !== undefined) return yield* Effect.fail(broken)
    const generation = state.current()
    const bytes = Journal.records(batch)
    const written = yield* Effect.exit(
      Effect.andThen(io.writeAt(generation.file, generation.path, bytes, generation.size), io.sync(generation.file, generation.path))
    )
    if (written._tag === "Failure") {
      const cut = yield* JournalFile.cutBack(generation)
      state.afterCut(generation, cut)
      return yield* Effect.failCause<JournalRound.Failure>(cut ? written.cause : JournalFile.notCutBackCause(generation)(written.cause))
    }
    state.stored(generation, batch, bytes.length)
  })

/** The same for one batch, with blocking calls, while the committer is idle: `undefined` once durable, or why not. */
export const storeBlocking = (state: State, chunk: Batch, blocking: BlockingIo.Blocking): JournalRound.Failure | undefined => {
  const generation = state.current()
  const fd = BlockingIo.descriptorOf(generation.file)
  // Never beside the committer's own writes (a caller checks `idle` first; this holds it to that).
  if (state.busy() || fd === undefined) return new StorageFailure({ detail: `the journal ${generation.path} is being written by its committer` })
  const broken = state.broken()
  if (broken !== undefined) return broken
  const bytes = Journal.records([chunk])
  // Over the zeros written ahead: an fdatasync flushes the data alone (its size grows only past them).
  const failed = blocking.writeAt(fd, generation.path, bytes, generation.size) ?? blocking.datasync(fd, generation.path)
  if (failed !== undefined) {
    const cut = (blocking.truncate(fd, generation.path, generation.size) ?? blocking.sync(fd, generation.path)) === undefined
    state.afterCut(generation, cut)
    return cut ? failed : JournalFile.notCutBack(generation)(failed)
  }
  state.stored(generation, [chunk], bytes.length)
  return undefined
}
