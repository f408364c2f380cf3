import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, FileSystem, Option, PlatformError, Scope } from "effect"
import type * as IoCalls from "../../../src/log/file/IoCalls.ts"
import type * as IoThread from "../../../src/log/file/IoThread.ts"
import type * as JournalFile from "../../../src/log/file/JournalFile.ts"
import * as JournalRound from "../../../src/log/file/JournalRound.ts"
import * as StorageFailures from "../../../src/log/internal/storageFailure.ts"
import { StorageFailure } from "../../../src/log/SessionLogError.ts"
import { withDirectory } from "./FileTest.ts"

/** A journal file holding `kept` (what earlier rounds stored), then `stray` bytes a failed round may have left. */
const journalIn = (directory: string, kept: string, stray: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = `${directory}/journal.wal`
    yield* fs.writeFileString(path, kept + stray)
    const scope = yield* Scope.make()
    const file = yield* fs.open(path, { flag: "r+" }).pipe(Scope.provide(scope))
    const generation: JournalFile.JournalFile = {
      path,
      file,
      size: kept.length,
      ahead: kept.length,
      cuts: 0,
      dirty: new Set(),
      unsyncable: undefined,
      scope
    }
    return { fs, path, generation }
  })

/** Chunks whose answers are recorded. */
const chunksOf = (ids: ReadonlyArray<number>, file: FileSystem.File) => {
  const answers = new Map<number, Exit.Exit<IoCalls.Answer, JournalRound.Failure>>()
  const chunks = ids.map((id): JournalRound.Chunk => ({
    id,
    session: `s${id}`,
    file,
    offset: 0,
    bytes: new Uint8Array(1),
    write: undefined,
    done: (exit) => answers.set(id, exit)
  }))
  return { chunks, answers }
}

/** A thread whose commit answers `commit`, recording what it was asked. */
const fakeThread = (commit: (upTo: number, fd: number, position: number) => Effect.Effect<IoCalls.Response, StorageFailure>) => {
  const asked: Array<readonly [number, number, number]> = []
  const thread: IoThread.IoThread = {
    write: () => undefined,
    commit: (upTo, fd, position) =>
      Effect.suspend(() => (asked.push([upTo, fd, position]), Effect.map(commit(upTo, fd, position), (response) => ({ ...response, writers: 0 })))),
    threaded: () => true
  }
  return { thread, asked }
}

const recordingState = (broken?: StorageFailure) => {
  const cuts: Array<boolean> = []
  const stored: Array<readonly [ReadonlyArray<number>, number]> = []
  const state: JournalRound.State = {
    broken: () => broken,
    afterCut: (_, cut) => void cuts.push(cut),
    stored: (_, batch, bytes) => void stored.push([batch.map((c) => c.id), bytes])
  }
  return { state, cuts, stored }
}

const durable: IoCalls.Outcome = { _tag: "Durable", found: undefined, fault: undefined }
const detailOf = <E>(exit: Exit.Exit<unknown, E> | undefined): E | undefined =>
  exit !== undefined && Exit.isFailure(exit) ? Option.getOrUndefined(Exit.findErrorOption(exit)) : undefined

describe("JournalRound", () => {
  it.effect("commits up to the round's last batch, from where the journal's records end, and answers each batch", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        const { generation } = yield* journalIn(directory, "header\n", "")
        const { answers, chunks } = chunksOf([3, 4], generation.file)
        const { asked, thread } = fakeThread(() =>
          Effect.succeed({ ids: [3, 4], outcomes: [durable, { _tag: "LockNotHeld", found: undefined }], stored: 9, journal: undefined })
        )
        const { state, stored } = recordingState()
        yield* JournalRound.run(chunks, generation, thread, state)
        assert.strictEqual(asked[0]![0], 4)
        assert.strictEqual(asked[0]![2], "header\n".length)
        assert.deepStrictEqual(stored, [[[3], 9]], "only the durable batch is covered")
        assert.deepStrictEqual(answers.get(3), Exit.succeed(durable))
        assert.deepStrictEqual(answers.get(4), Exit.succeed({ _tag: "LockNotHeld", found: undefined }))
      })
    ))

  it.effect("a thread that stopped mid-commit: the journal is cut back to where its records ended, and every batch fails", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        const { fs, generation: opened, path } = yield* journalIn(directory, "header\n", "half a record")
        // What reaches the journal file: the cut, then its sync.
        const ops: Array<string> = []
        const file: FileSystem.File = Object.create(opened.file, {
          sync: { get: () => Effect.andThen(opened.file.sync, Effect.sync(() => ops.push("sync"))) },
          truncate: { value: (length?: number) => Effect.andThen(opened.file.truncate(length), Effect.sync(() => ops.push(`truncate ${length}`))) }
        })
        const generation = { ...opened, file }
        const { answers, chunks } = chunksOf([0, 1], generation.file)
        const { thread } = fakeThread(() => Effect.fail(new StorageFailure({ detail: "the journal's I/O thread exited (code 1)" })))
        const { cuts, state, stored } = recordingState()
        yield* JournalRound.run(chunks, generation, thread, state)
        assert.strictEqual(yield* fs.readFileString(path), "header\n")
        assert.deepStrictEqual(ops, [`truncate ${"header\n".length}`, "sync"])
        assert.deepStrictEqual(cuts, [true])
        assert.deepStrictEqual(stored, [])
        for (const id of [0, 1]) {
          assert.deepStrictEqual(
            detailOf(answers.get(id)),
            new StorageFailure({ detail: "the journal's I/O thread exited (code 1); what it wrote to the journal is undone" })
          )
        }
      })
    ))

  it.effect("a thread that stopped mid-commit, and a journal that can't be cut back: every batch fails, saying it may still be replayed", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        const { fs, generation, path } = yield* journalIn(directory, "header\n", "a whole record, maybe synced")
        const { answers, chunks } = chunksOf([0, 1], generation.file)
        const { thread } = fakeThread(() =>
          // The journal's descriptor closed under the commit: it can't be cut.
          Effect.andThen(Scope.close(generation.scope, Exit.void), Effect.fail(new StorageFailure({ detail: "the journal's I/O thread exited (code 1)" })))
        )
        const { cuts, state } = recordingState()
        yield* JournalRound.run(chunks, generation, thread, state)
        assert.deepStrictEqual(cuts, [false], "the journal is marked as not cut (it takes no more batches)")
        assert.strictEqual(yield* fs.readFileString(path), "header\na whole record, maybe synced")
        for (const id of [0, 1]) {
          const detail = StorageFailures.toError("append")(detailOf(answers.get(id))!).message
          assert.include(detail, "the journal's I/O thread exited (code 1)")
          assert.include(detail, `the journal ${path} could not be cut back: this batch may still be replayed after a crash`)
          assert.notInclude(detail, "undone")
        }
      })
    ))

  it.effect("a thread that died of a defect, and a journal that can't be cut back: every batch fails as maybe stored, not as the bare defect", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        const { generation } = yield* journalIn(directory, "header\n", "a whole record, maybe synced")
        const { answers, chunks } = chunksOf([0, 1], generation.file)
        const { thread } = fakeThread(() => Effect.andThen(Scope.close(generation.scope, Exit.void), Effect.die(new Error("the thread's code threw"))))
        const { cuts, state } = recordingState()
        yield* JournalRound.run(chunks, generation, thread, state)
        assert.deepStrictEqual(cuts, [false])
        for (const id of [0, 1]) {
          const error = StorageFailures.toError("append")(detailOf(answers.get(id))!)
          assert.deepInclude(error.reason, { _tag: "StorageFailure", maybeStored: true })
          assert.include(error.message, "the thread's code threw")
          assert.include(error.message, "could not be cut back: this batch may still be replayed after a crash")
        }
      })
    ))

  it.effect("batches a stopped thread held are missing from the answer: they fail; the others are answered", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        const { generation } = yield* journalIn(directory, "header\n", "")
        const { answers, chunks } = chunksOf([0, 1, 2], generation.file)
        const { thread } = fakeThread(() => Effect.succeed({ ids: [2], outcomes: [durable], stored: 5, journal: undefined }))
        const { state } = recordingState()
        yield* JournalRound.run(chunks, generation, thread, state)
        for (const id of [0, 1]) assert.include(String(detailOf(answers.get(id))), "I/O thread stopped")
        assert.deepStrictEqual(answers.get(2), Exit.succeed(durable))
      })
    ))

  it.effect("a journal failure fails the batches written, with the journal's error; the cut is recorded", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        const { generation, path } = yield* journalIn(directory, "header\n", "")
        const { answers, chunks } = chunksOf([0, 1], generation.file)
        const fault = { code: "EIO", syscall: "fdatasync", message: "EIO: i/o error" }
        const { thread } = fakeThread(() =>
          Effect.succeed({
            ids: [0, 1],
            outcomes: [{ _tag: "NotDurable" }, { _tag: "WriteFailed", fault }],
            stored: 0,
            journal: { fault, cut: false }
          })
        )
        const { cuts, state, stored } = recordingState()
        yield* JournalRound.run(chunks, generation, thread, state)
        assert.deepStrictEqual(cuts, [false])
        assert.deepStrictEqual(stored, [])
        // Not cut back: its records may stay, and the failure says so.
        const failed = StorageFailures.toError("append")(detailOf(answers.get(0))!)
        assert.deepInclude(failed.reason, { _tag: "StorageFailure", kind: "IoError", maybeStored: true })
        assert.include(failed.message, path)
        assert.include(failed.message, "could not be cut back: this batch may still be replayed after a crash")
        assert.isTrue(PlatformError.isPlatformError(failed.cause), "the journal's error stays the cause")
        assert.deepStrictEqual(answers.get(1), Exit.succeed({ _tag: "WriteFailed", fault }))
      })
    ))

  it.effect("a broken journal and a thread that stops mid-commit: nothing was sent to the journal, so nothing is cut", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        const { fs, generation, path } = yield* journalIn(directory, "header\n", "bytes an earlier failure left")
        const { answers, chunks } = chunksOf([0], generation.file)
        const { thread } = fakeThread(() => Effect.fail(new StorageFailure({ detail: "the journal's I/O thread exited (code 1)" })))
        const { cuts, state } = recordingState(new StorageFailure({ detail: "the journal can't be repaired after a failed write" }))
        yield* JournalRound.run(chunks, generation, thread, state)
        assert.deepStrictEqual(cuts, [])
        assert.strictEqual(yield* fs.readFileString(path), "header\nbytes an earlier failure left")
        assert.deepStrictEqual(
          detailOf(answers.get(0)),
          new StorageFailure({ detail: "the journal's I/O thread exited (code 1); it wrote nothing to the journal" })
        )
      })
    ))

  it.effect("a broken journal takes no records: the thread lets go of the batches, which fail with why", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        const { generation } = yield* journalIn(directory, "header\n", "")
        const { answers, chunks } = chunksOf([0], generation.file)
        const broken = new StorageFailure({ detail: "the journal can't be repaired after a failed write" })
        const { asked, thread } = fakeThread(() => Effect.succeed({ ids: [0], outcomes: [{ _tag: "NotDurable" }], stored: 0, journal: undefined }))
        const { state, stored } = recordingState(broken)
        yield* JournalRound.run(chunks, generation, thread, state)
        assert.strictEqual(asked[0]![1], -1, "no descriptor to write to")
        assert.deepStrictEqual(stored, [])
        assert.strictEqual(detailOf(answers.get(0)), broken)
      })
    ))
})
