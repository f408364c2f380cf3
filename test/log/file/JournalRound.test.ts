import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, FileSystem, Option, PlatformError, Schema, Scope } from "effect"
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
  const postUnsafe = (upTo: number, fd: number, position: number) => (
    asked.push([upTo, fd, position]), Effect.map(commit(upTo, fd, position), (response) => ({ ...response, writers: 0 }))
  )
  const thread: IoThread.IoThread = {
    write: () => undefined,
    postUnsafe,
    threaded: () => true
  }
  return { thread, asked }
}

/** The committer's state as a round sees it, with nothing waiting for the next round. */
const recordingState = (generation: JournalFile.JournalFile, broken?: StorageFailure) => {
  const cuts: Array<boolean> = []
  const stored: Array<readonly [ReadonlyArray<number>, number]> = []
  const state: JournalRound.State = {
    broken: () => broken,
    afterCut: (_, cut) => void cuts.push(cut),
    stored: (_, batch, bytes) => void stored.push([batch.map((c) => c.id), bytes]),
    current: () => generation,
    waiting: () => 0,
    takeWaiting: () => [],
    now: () => 0
  }
  return { state, cuts, stored }
}

/** One round of `chunks`, as the committer runs it. */
const runRound = (chunks: ReadonlyArray<JournalRound.Chunk>, thread: IoThread.IoThread, state: JournalRound.State) =>
  Effect.flatMap(JournalRound.make(thread, state), (rounds) => rounds.run(chunks))

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
        const { state, stored } = recordingState(generation)
        yield* runRound(chunks, thread, state)
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
        const { cuts, state, stored } = recordingState(generation)
        yield* runRound(chunks, thread, state)
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
        const { cuts, state } = recordingState(generation)
        yield* runRound(chunks, thread, state)
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
        const { cuts, state } = recordingState(generation)
        yield* runRound(chunks, thread, state)
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
        const { state } = recordingState(generation)
        yield* runRound(chunks, thread, state)
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
        const { cuts, state, stored } = recordingState(generation)
        yield* runRound(chunks, thread, state)
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
        const { cuts, state } = recordingState(generation, new StorageFailure({ detail: "the journal can't be repaired after a failed write" }))
        yield* runRound(chunks, thread, state)
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
        const { state, stored } = recordingState(generation, broken)
        yield* runRound(chunks, thread, state)
        assert.strictEqual(asked[0]![1], -1, "no descriptor to write to")
        assert.deepStrictEqual(stored, [])
        assert.strictEqual(detailOf(answers.get(0)), broken)
      })
    ))

  describe("postAt: where the next round is posted while a round's answers are given out", () => {
    it("unmeasured: after the answers, as one round", () => {
      assert.isUndefined(JournalRound.postAt(128, 3, { commit: 0, answer: 0 }))
      assert.isUndefined(JournalRound.postAt(128, 0, { commit: 1000, answer: 0 }))
    })

    it("once the answers left take about three quarters of a commit", () => {
      // 750 µs of a 1,000 µs commit cover 30 answers of 25 µs: posted with 98 answered.
      assert.strictEqual(JournalRound.postAt(128, 0, { commit: 1000, answer: 25 }), 98)
      assert.strictEqual(JournalRound.postAt(128, 40, { commit: 1000, answer: 25 }), 98)
    })

    it("at once, with the batches waiting, if the answers can't cover a commit that those waiting can", () => {
      assert.strictEqual(JournalRound.postAt(10, 100, { commit: 1000, answer: 25 }), 0)
    })

    it("as one round once the journal's syncs bound the throughput: a commit as long as three quarters of every batch's answer", () => {
      // 37 answers' worth, against 21 batches (16 answered, 5 waiting).
      assert.isUndefined(JournalRound.postAt(16, 5, { commit: 2000, answer: 40 }))
      assert.isUndefined(JournalRound.postAt(40, 0, { commit: 1000, answer: 25 }))
    })

    it(`as one round while a commit covers fewer than ${JournalRound.minCovered} answers: the event loop's thread hardly waits for it`, () => {
      assert.isUndefined(JournalRound.postAt(128, 0, { commit: 400, answer: 25 }))
      assert.strictEqual(JournalRound.postAt(128, 0, { commit: 600, answer: 25 }), 110)
    })

    it.effect.prop(
      "within the round's answers, for a commit that covers from the fewest to three quarters of all batches, else after them",
      [
        Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 512 })),
        Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 512 })),
        Schema.Finite.check(Schema.isBetween({ minimum: 0, maximum: 1e6 })),
        Schema.Finite.check(Schema.isBetween({ minimum: 0, maximum: 1e4 }))
      ],
      ([answering, waiting, commit, answer]) =>
        Effect.sync(() => {
          const at = JournalRound.postAt(answering, waiting, { commit, answer })
          const covering = commit > 0 && answer > 0 ? Math.floor((0.75 * commit) / answer) : 0
          const splits = covering >= JournalRound.minCovered && covering < 0.75 * (answering + waiting)
          if (!splits) return assert.isUndefined(at)
          assert.isDefined(at)
          assert.isAtLeast(at!, 0)
          assert.isBelow(at!, answering)
        })
    )
  })

  it.effect("the next round is posted while a round's answers are given out, with the batches its answered appenders handed over; it answers in turn", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        const { generation } = yield* journalIn(directory, "header\n", "")
        // A clock each commit moves by 800 µs and each answer by 10: three quarters of a commit cover
        // 60 answers, of the 100 appenders'.
        let clock = 0
        const events: Array<string> = []
        const waiting: Array<JournalRound.Chunk> = []
        const answers = new Map<number, Exit.Exit<IoCalls.Answer, JournalRound.Failure>>()
        // Each batch answered hands over its appender's next at once, as a resumed fiber does.
        const chunk = (id: number): JournalRound.Chunk => ({
          id,
          session: `s${id % 100}`,
          file: generation.file,
          offset: 0,
          bytes: new Uint8Array(1),
          write: undefined,
          done: (exit) => {
            clock += 10
            events.push(`answered ${id}`)
            answers.set(id, exit)
            waiting.push(chunk(id + 100))
          }
        })
        const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i)
        // The batches of each round, as posted: a commit up to a round's last answers them.
        const rounds: Array<ReadonlyArray<number>> = []
        const roundOf = (chunks: ReadonlyArray<JournalRound.Chunk>) => (rounds.push(chunks.map((c) => c.id)), chunks)
        // Each record stores 1 byte: a round posted early goes where the last one ended.
        const { asked, thread } = fakeThread((upTo) =>
          Effect.sync(() => {
            clock += 800
            const ids = rounds.find((ids) => ids[ids.length - 1] === upTo) ?? []
            return { ids, outcomes: ids.map(() => durable), stored: ids.length, journal: undefined }
          })
        )
        const journalRounds = yield* JournalRound.make(thread, {
          ...recordingState(generation).state,
          stored: (into, _, bytes) => void (into.size += bytes),
          waiting: () => waiting.length,
          takeWaiting: () => {
            const taken = roundOf(waiting.splice(0))
            events.push(`posted ${taken[0]!.id}-${taken[taken.length - 1]!.id}`)
            return taken
          },
          now: () => clock
        })
        // The first round, unmeasured, is answered as one: nothing is posted.
        yield* journalRounds.run(roundOf(range(0, 100).map(chunk)))
        assert.isFalse(journalRounds.posted())
        assert.deepStrictEqual(events, range(0, 100).map((id) => `answered ${id}`))
        // The committer takes the appenders' next appends as its next round: the round after is posted
        // once the answers left (60) take three quarters of a commit, holding the 40 next appends.
        events.length = 0
        yield* journalRounds.run(roundOf(waiting.splice(0)))
        assert.deepStrictEqual(events, [
          ...range(100, 140).map((id) => `answered ${id}`),
          "posted 200-239",
          ...range(140, 200).map((id) => `answered ${id}`)
        ])
        assert.isTrue(journalRounds.posted(), "the round posted waits for its answer: the committer's next")
        assert.deepStrictEqual(asked.map(([upTo]) => upTo), [99, 199, 239], "posted to the thread at once")
        const start = "header\n".length
        assert.deepStrictEqual(asked.map(([, , position]) => position), [start, start + 100, start + 200], "each where the last ended")
        // Answered in turn. Its 40 answers can't cover a commit, which the 60 waiting can: they are
        // posted at once, so that the journal keeps syncing.
        events.length = 0
        yield* journalRounds.answerPosted
        for (const id of range(200, 240)) assert.deepStrictEqual(answers.get(id), Exit.succeed(durable))
        assert.deepStrictEqual(events, ["posted 240-299", ...range(200, 240).map((id) => `answered ${id}`)])
        assert.isTrue(journalRounds.posted())
        yield* journalRounds.answerPosted
        for (const id of range(240, 300)) assert.deepStrictEqual(answers.get(id), Exit.succeed(durable))
      })
    ))
})
