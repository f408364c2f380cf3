/**
 * Durability, tested by the ORDER of what reaches the disk. The crash tests in SessionLogFile.test.ts
 * SIGKILL a writer process, but a killed process's written pages stay in the kernel's page cache, so
 * they load afterwards whether or not they were ever fsynced: those tests check the protocol
 * (recovery, torn tails, locks), not durability. A missing or misplaced fsync only shows after a
 * power cut, which a test can't make; what it can check is that every promise is kept in order:
 *
 * - an append is acknowledged only after a sync of the file holding its line (fsync-per-file mode)
 *   or of the journal holding its batch (journal mode), that sync coming after the write;
 * - a new file's directory entry is synced before anything in that file is acknowledged;
 * - in journal mode, every session file a journal covers is synced before that journal is removed
 *   (at a checkpoint's rotation, and on close).
 *
 * The recording FileSystem logs each operation when it completes; acknowledgements go into the same
 * log as the append returns.
 */
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, FileSystem, Latch, Layer, Stream } from "effect"
import { basename, dirname, join } from "node:path"
import type * as SessionEvent from "../../../src/log/SessionEvent.ts"
import * as SessionId from "../../../src/log/SessionId.ts"
import * as SessionLog from "../../../src/log/SessionLog.ts"
import * as Journal from "../../../src/log/file/Journal.ts"
import * as JournalFile from "../../../src/log/file/JournalFile.ts"
import * as SessionLogFile from "../../../src/log/file/SessionLogFile.ts"
import { replacing } from "./FileTest.ts"
import * as Recording from "./RecordingFileSystem.ts"

const isJournal = (path: string) => path.endsWith(".wal")

/**
 * The one journal in `directory`, read once it is longer than `length`, or after 10,000 turns of the
 * event loop: the committer writes zeros ahead in pieces, letting the loop turn between them.
 */
const journalPast = (directory: string, length: number) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const [name] = (yield* fs.readDirectory(directory)).filter(isJournal)
    let bytes = yield* fs.readFile(join(directory, name!))
    for (let turns = 0; bytes.length <= length && turns < 10_000; turns++) {
      yield* Effect.yieldNow
      bytes = yield* fs.readFile(join(directory, name!))
    }
    return bytes
  })

/** An open that creates the file (a session file is created with `w`, a journal with `ax`). */
const creates = (flag: string | undefined) => flag === "w" || flag === "wx" || flag === "ax"

const show = (events: ReadonlyArray<Recording.Event>, index: number) =>
  `#${index} ${events[index]?.op} ${basename(events[index]?.path ?? "")}`

/** Index of the first event at or after `from` and before `to` that matches. */
const findBetween = (
  events: ReadonlyArray<Recording.Event>,
  from: number,
  to: number,
  match: (event: Recording.Event) => boolean
) => {
  for (let i = Math.max(0, from); i < to; i++) if (match(events[i]!)) return i
  return -1
}

/** Index of the write of `path` that carried (session, seq). */
const writeOf = (events: ReadonlyArray<Recording.Event>, path: string, session: string, seq: number, before: number) =>
  findBetween(events, 0, before, (e) =>
    e.op === "writeAll" && e.path === path && (e.entries ?? []).some((x) => x.session === session && x.seq === seq))

/**
 * Every acknowledgement follows the write of its line and, after that write, a sync of the file
 * (fsync-per-file) or a write of its batch to a journal and a sync of that same journal (journal mode).
 */
const assertAcknowledgedAfterSync = (events: ReadonlyArray<Recording.Event>, journal: boolean) => {
  let acks = 0
  events.forEach((ack, i) => {
    if (ack.op !== "ack") return
    acks++
    const session = basename(ack.path, ".jsonl")
    const where = `ack of ${session} seq ${ack.seq} at #${i}`
    const written = writeOf(events, ack.path, session, ack.seq!, i)
    assert.isAtLeast(written, 0, `${where}: its line was written to ${ack.path} before it was acknowledged`)
    if (!journal) {
      const synced = findBetween(events, written + 1, i, (e) => e.op === "sync" && e.path === ack.path)
      assert.isAtLeast(synced, 0, `${where}: no fsync of the session file between its write (#${written}) and the acknowledgement`)
      return
    }
    const journaled = findBetween(events, written + 1, i, (e) =>
      e.op === "writeAll" && isJournal(e.path) && (e.entries ?? []).some((x) => x.session === session && x.seq === ack.seq))
    assert.isAtLeast(journaled, 0, `${where}: its batch was not written to a journal before the acknowledgement`)
    const synced = findBetween(events, journaled + 1, i, (e) => e.op === "sync" && e.path === events[journaled]!.path)
    assert.isAtLeast(synced, 0, `${where}: no fsync of the journal between its batch's write (#${journaled}) and the acknowledgement`)
  })
  return acks
}

/** A file's creation is made durable (its directory synced) before anything that relies on the file is acknowledged. */
const assertDirectorySyncedBeforeFirstAck = (
  events: ReadonlyArray<Recording.Event>,
  file: string,
  firstReliantAck: number
) => {
  const created = findBetween(events, 0, events.length, (e) => e.op === "open" && creates(e.flag) && e.path === file)
  assert.isAtLeast(created, 0, `${basename(file)} was created`)
  assert.isAbove(firstReliantAck, created, `${basename(file)}: acknowledged after its creation`)
  const synced = findBetween(events, created + 1, firstReliantAck, (e) => e.op === "sync" && e.path === dirname(file))
  assert.isAtLeast(
    synced,
    0,
    `${basename(file)}: its directory was not fsynced between its creation (#${created}) and the first acknowledgement relying on it (${
      show(events, firstReliantAck)
    })`
  )
}

/** Before a journal is removed, every session file it holds batches for has been synced after those batches were written. */
const assertDirtyFilesSyncedBeforeRemove = (events: ReadonlyArray<Recording.Event>) => {
  let removed = 0
  events.forEach((remove, r) => {
    if (remove.op !== "remove" || !isJournal(remove.path)) return
    removed++
    events.forEach((write, j) => {
      if (j > r || write.op !== "writeAll" || write.path !== remove.path) return
      for (const { session, seq } of write.entries ?? []) {
        const file = join(dirname(remove.path), `${session}.jsonl`)
        const written = writeOf(events, file, session, seq, j)
        const synced = findBetween(events, written + 1, r, (e) => e.op === "sync" && e.path === file)
        assert.isAtLeast(
          synced,
          0,
          `${session} seq ${seq} (written #${written}) was only in journal ${basename(remove.path)} when it was removed (#${r}): ` +
            `the session file was not fsynced first`
        )
      }
    })
  })
  return removed
}

/** Runs `body` against a file log over a fresh directory, with every disk operation recorded. */
const recorded = <A, E>(
  options: Omit<SessionLogFile.Options, "directory">,
  body: (
    log: SessionLog.Service,
    append: (session: SessionId.SessionId, data: unknown) => Effect.Effect<SessionEvent.Entry, unknown>,
    recorder: ReturnType<typeof Recording.make>,
    directory: string
  ) => Effect.Effect<A, E>
) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const directory = yield* fs.makeTempDirectoryScoped({ prefix: "todo-write-durability-" })
    const recorder = Recording.make()
    const result = yield* Effect.flatMap(SessionLog.SessionLog, (log) => {
      // The acknowledgement: recorded the moment append returns to its caller.
      const append = (session: SessionId.SessionId, data: unknown) =>
        Effect.tap(log.append(session, "n", data), (entry) =>
          Effect.sync(() => recorder.record({ path: join(directory, `${session}.jsonl`), op: "ack", seq: entry.seq })))
      return Effect.tap(
        body(log, append, recorder, directory),
        () => Effect.sync(() => recorder.record({ path: directory, op: "mark", flag: "closing" }))
      )
    }).pipe(
      Effect.provide(SessionLogFile.layerFileSystem({ ...options, directory }).pipe(
        Layer.provide(Layer.merge(NodeServices.layer, recorder.layer))
      ))
    )
    return { result, events: recorder.events, directory }
  }).pipe(Effect.provide(NodeServices.layer))

const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => SessionId.decodeSync(`${prefix}${i}`))

/** Warm-up (each session's file is created and its header synced), then concurrent appends, then a new session. */
const workload = (
  sessions: ReadonlyArray<SessionId.SessionId>,
  perSession: number,
  append: (session: SessionId.SessionId, data: unknown) => Effect.Effect<SessionEvent.Entry, unknown>,
  mark: (flag: string) => void = () => {}
) =>
  Effect.gen(function*() {
    yield* Effect.forEach(sessions, (s) => append(s, { warmUp: true }), { concurrency: "unbounded", discard: true })
    mark("waves")
    // In waves, so that there are many batches, shared fsyncs and (in journal mode) checkpoints.
    for (let wave = 0; wave < perSession; wave += 10) {
      yield* Effect.forEach(
        Array.from({ length: 10 * sessions.length }, (_, i) => i),
        (i) => append(sessions[i % sessions.length]!, { wave, i, pad: "x".repeat(i % 90) }),
        { concurrency: "unbounded", discard: true }
      )
    }
    mark("waves done")
    const late = SessionId.decodeSync("late-newcomer")
    yield* append(late, { first: true })
    return [...sessions, late]
  })

const firstAck = (events: ReadonlyArray<Recording.Event>, file: string) =>
  events.findIndex((e) => e.op === "ack" && e.path === file)

describe("SessionLogFile durability, by the order of disk operations", () => {
  it.effect("fsync per file: each append is acknowledged after an fsync of ITS file, after its write", () =>
    Effect.gen(function*() {
      const { result: sessions, events, directory } = yield* recorded({}, (_, append) => workload(ids("f", 4), 60, append))
      const acks = assertAcknowledgedAfterSync(events, false)
      assert.strictEqual(acks, 4 * 61 + 1, "every append was acknowledged and checked")
      // The group commit shares fsyncs, so these are not trivially one sync per append.
      const syncs = events.filter((e) => e.op === "sync" && e.path.endsWith(".jsonl")).length
      assert.isBelow(syncs, acks, "appends were grouped")
      for (const session of sessions) {
        const file = join(directory, `${session}.jsonl`)
        assertDirectorySyncedBeforeFirstAck(events, file, firstAck(events, file))
      }
    }))

  it.effect("journal mode: each append is acknowledged after an fsync of the journal holding its batch", () =>
    Effect.gen(function*() {
      const { result: sessions, events, directory } = yield* recorded(
        { journal: { checkpointBytes: 2048 } },
        (_, append) => workload(ids("j", 5), 40, append)
      )
      const acks = assertAcknowledgedAfterSync(events, true)
      assert.strictEqual(acks, 5 * 41 + 1, "every append was acknowledged and checked")
      for (const session of sessions) {
        const file = join(directory, `${session}.jsonl`)
        assertDirectorySyncedBeforeFirstAck(events, file, firstAck(events, file))
      }
      // Each journal's own directory entry is durable before an acknowledgement relies on it.
      const journals = [...new Set(events.filter((e) => e.op === "open" && creates(e.flag) && isJournal(e.path)).map((e) => e.path))]
      assert.isAtLeast(journals.length, 3, "checkpoints rotated the journal")
      for (const journal of journals) {
        const reliant = events.findIndex((e, i) =>
          e.op === "ack" &&
          findBetween(events, 0, i, (w) => w.op === "writeAll" && w.path === journal && (w.entries ?? []).length > 0) >= 0
        )
        if (reliant >= 0) assertDirectorySyncedBeforeFirstAck(events, journal, reliant)
      }
    }))

  it.effect("journal mode: every dirty session file is fsynced before its journal is rotated away or removed on close", () =>
    Effect.gen(function*() {
      const { events, directory } = yield* recorded(
        { journal: { checkpointBytes: 2048 } },
        (_, append) => workload(ids("d", 5), 40, append)
      )
      const closing = events.findIndex((e) => e.op === "mark")
      assertDirtyFilesSyncedBeforeRemove(events)
      const rotatedBeforeClose = events.filter((e, i) => i < closing && e.op === "remove" && isJournal(e.path)).length
      assert.isAtLeast(rotatedBeforeClose, 1, "a checkpoint removed a rotated journal while the log was open")
      // Every journal is gone by the end. (Not counted by their recorded removals: a removal is recorded
      // once answered, and one a retirement made as the log closed may go unanswered, its journal found
      // gone on close.)
      const fs = yield* FileSystem.FileSystem
      assert.deepStrictEqual((yield* fs.readDirectory(directory)).filter(isJournal), [], "every journal was removed by the end")
    }).pipe(Effect.provide(NodeServices.layer)))

  describe("one session alone: blocking calls, as durable", () => {
    const alone = (journal: boolean) =>
      Effect.gen(function*() {
        const session = SessionId.decodeSync("alone")
        const { events, directory } = yield* recorded(journal ? { journal: true } : {}, (_, append) =>
          Effect.gen(function*() {
            for (let i = 0; i < 40; i++) yield* append(session, { i })
          }))
        assert.strictEqual(assertAcknowledgedAfterSync(events, journal), 40, "every append was acknowledged and checked")
        // Each acknowledgement follows a blocking fsync of the file its batch is durable in.
        const durableIn = journal ? isJournal : (path: string) => path === join(directory, "alone.jsonl")
        const syncsBefore = (i: number) => events.slice(0, i).filter((e) => e.op === "sync" && durableIn(e.path))
        const acks = events.flatMap((e, i) => e.op === "ack" ? [i] : [])
        const blockingAcks = acks.filter((i) => syncsBefore(i).at(-1)?.blocking === true).length
        assert.isAtLeast(blockingAcks, 30, `${blockingAcks} of 40 lone appends were made durable by a blocking fsync`)
        const pooledLate = events.slice(acks[10]).filter((e) => e.op === "sync" && durableIn(e.path) && e.blocking !== true)
        assert.strictEqual(pooledLate.length, 0, "once alone, no batch waited on the thread pool for its fsync")
      })

    const burst = (journal: boolean) =>
      Effect.gen(function*() {
        const session = SessionId.decodeSync("burst")
        const { events, directory } = yield* recorded(journal ? { journal: true } : {}, (_, append, recorder, dir) =>
          Effect.gen(function*() {
            for (let i = 0; i < 12; i++) yield* append(session, { i }) // alone by now
            recorder.record({ path: dir, op: "mark", flag: "burst" })
            yield* Effect.forEach(Array.from({ length: 50 }, (_, i) => i), (i) => append(session, { burst: i }), {
              concurrency: "unbounded",
              discard: true
            })
          }))
        const from = events.findIndex((e) => e.op === "mark" && e.flag === "burst")
        const durableIn = journal ? isJournal : (path: string) => path === join(directory, "burst.jsonl")
        const syncs = events.slice(from).filter((e) => e.op === "sync" && durableIn(e.path)).length
        assert.strictEqual(assertAcknowledgedAfterSync(events, journal), 62)
        assert.isAtMost(syncs, 3, `${syncs} fsyncs for a burst of 50 appends to a lone session: they were not grouped`)
      })

    it.effect("a burst to a lone session is still grouped (fsync per file)", () => burst(false))
    it.effect("a burst to a lone session is still grouped (journal mode)", () => burst(true))

    it.effect("blocking: false: no call is made on the calling thread", () =>
      Effect.gen(function*() {
        const session = SessionId.decodeSync("pooled")
        const { events } = yield* recorded({ blocking: false }, (_, append) =>
          Effect.gen(function*() {
            for (let i = 0; i < 20; i++) yield* append(session, { i })
          }))
        assert.strictEqual(assertAcknowledgedAfterSync(events, false), 20)
        assert.deepStrictEqual(events.filter((e) => e.blocking === true).map((e) => e.op), [])
      }))

    it.effect("journal mode, checkpoints while alone: every acknowledgement still follows its journal's sync, and rotation its files' syncs", () =>
      Effect.gen(function*() {
        const session = SessionId.decodeSync("rotating")
        const { events, directory } = yield* recorded({ journal: { checkpointBytes: 1024 } }, (_, append) =>
          Effect.gen(function*() {
            // Every lone batch fills the journal: the committer opens the next one while later lone
            // batches come, which then go through the committer instead of syncing the journal themselves.
            for (let i = 0; i < 60; i++) yield* append(session, { i, pad: "x".repeat(600) })
          }))
        assert.strictEqual(assertAcknowledgedAfterSync(events, true), 60)
        const journals = new Set(events.filter((e) => e.op === "open" && creates(e.flag) && isJournal(e.path)).map((e) => e.path))
        assert.isAtLeast(journals.size, 3, "checkpoints rotated the journal")
        // (A removal cut short by closing the log happens but isn't recorded: the directory tells.)
        assert.isAtLeast(assertDirtyFilesSyncedBeforeRemove(events), journals.size - 1)
        const fs = yield* FileSystem.FileSystem
        assert.deepStrictEqual((yield* fs.readDirectory(directory)).filter(isJournal), [], "every journal was removed by the end")
      }).pipe(Effect.provide(NodeServices.layer)))

    it.effect("fsync per file", () => alone(false))
    it.effect("journal mode: the lone batch writes and syncs the journal itself", () => alone(true))

    it.effect("journal mode: a journal is written ahead with zeros; lone batches overwrite them in place, each flushed by an fdatasync", () =>
      Effect.gen(function*() {
        const session = SessionId.decodeSync("ahead")
        const checkpointBytes = 64 * 1024
        const { events, result: onDisk } = yield* recorded({ journal: { checkpointBytes } }, (_, append, _recorder, directory) =>
          Effect.gen(function*() {
            for (let i = 0; i < 30; i++) yield* append(session, { i })
            const fs = yield* FileSystem.FileSystem
            const [name] = (yield* fs.readDirectory(directory)).filter(isJournal)
            return yield* fs.readFile(join(directory, name!))
          }).pipe(Effect.provide(NodeServices.layer)))
        const journal = events.find((e) => e.op === "open" && isJournal(e.path))!
        assert.strictEqual(journal.flag, "wx", "created exclusively, and written at positions, not appended to")
        assert.strictEqual(onDisk.length, checkpointBytes, "written ahead to its checkpoint size, which 30 batches don't reach")
        const writes = events.filter((e) => e.op === "writeAll" && e.path === journal.path && (e.entries ?? []).length > 0)
        assert.strictEqual(writes.length, 30, "every batch went to this journal")
        // Each record goes where the one before it ends, over the zeros: the first right after the header.
        const header = events.find((e) => e.op === "writeAll" && e.path === journal.path)!
        let end = header.bytes!
        // (Positioned writes: the lone batches' own, and the I/O thread's for the first, contended, ones.)
        for (const write of writes.filter((e) => e.blocking === true || e.thread === true)) {
          if (write.offset !== end) assert.fail(`a record written at ${write.offset}, where the records ended at ${end}`)
          end += write.bytes!
        }
        const syncs = events.filter((e) => e.op === "sync" && e.path === journal.path && e.blocking === true)
        // (The first batches, before the session counts as alone, go through the committer.)
        assert.isAtLeast(syncs.length, 20, "lone batches synced the journal themselves")
        assert.deepStrictEqual([...new Set(syncs.map((e) => e.flag))], ["datasync"], "a lone commit flushes the data alone")
        // What recovery would read: every record, and the zeros after them as no torn tail.
        const parsed = Journal.parse(onDisk)!
        assert.isUndefined(parsed.stoppedAt)
        assert.strictEqual(parsed.records.length, writes.length)
      }))

    it.effect("journal mode: as the records near the end of the zeros, the committer writes more ahead, never over a record", () =>
      Effect.gen(function*() {
        const session = SessionId.decodeSync("further")
        const checkpointBytes = 4 * 1024 * 1024
        const pad = "x".repeat(2000)
        const { events, result: onDisk } = yield* recorded({ journal: { checkpointBytes } }, (_, append, _recorder, directory) =>
          Effect.gen(function*() {
            // Past the first zeros' end less the margin (256 - 128 KiB), in lone batches of ~2 KiB.
            for (let i = 0; i < 80; i++) yield* append(session, { i, pad })
            yield* journalPast(directory, JournalFile.firstAhead + JournalFile.aheadChunk - 1)
            yield* append(session, { after: "the zeros" })
            return yield* journalPast(directory, JournalFile.firstAhead + JournalFile.aheadChunk - 1)
          }).pipe(Effect.provide(NodeServices.layer)))
        assert.strictEqual(onDisk.length, JournalFile.firstAhead + JournalFile.aheadChunk, "one chunk more was written ahead")
        const journal = events.find((e) => e.op === "open" && isJournal(e.path))!.path
        // In pieces, the event loop free between them: one after another from where the first zeros ended.
        const pieces = events.flatMap((e, i) =>
          e.op === "writeAll" && e.path === journal && (e.entries ?? []).length === 0 && (e.offset ?? 0) >= JournalFile.firstAhead ? [i] : []
        )
        assert.strictEqual(events[pieces[0]!]?.offset, JournalFile.firstAhead, "the zeros went where the first ones ended")
        let end = JournalFile.firstAhead
        for (const i of pieces) {
          assert.strictEqual(events[i]!.offset, end, "each piece where the one before it ended")
          assert.isAtMost(events[i]!.bytes!, JournalFile.aheadPiece)
          end += events[i]!.bytes!
        }
        assert.strictEqual(end, JournalFile.firstAhead + JournalFile.aheadChunk, "a chunk in all")
        // Synced by the committer, as the journal's one writer: no lone batch wrote or synced it from the
        // first piece on till then (a failed write-back is reported to one sync of a descriptor).
        const synced = findBetween(events, pieces.at(-1)! + 1, events.length, (e) => e.op === "sync" && e.path === journal)
        assert.isAbove(synced, pieces.at(-1)!, "and were synced")
        assert.notStrictEqual(events[synced]!.blocking, true, "by the committer")
        const between = events.slice(pieces[0]!, synced).filter((e) => e.path === journal && !pieces.includes(events.indexOf(e)))
        assert.deepStrictEqual(between.map((e) => e.op), [], "nothing else on the journal meanwhile")
        const parsed = Journal.parse(onDisk)!
        assert.isUndefined(parsed.stoppedAt)
        assert.strictEqual(parsed.records.length, 81, "every record is whole: none was written over")
      }))

    it.effect("journal mode: a batch larger than the zeros left grows the journal, and the zeros written next follow it", () =>
      Effect.gen(function*() {
        const session = SessionId.decodeSync("larger")
        const { result: onDisk } = yield* recorded({ journal: { checkpointBytes: 4 * 1024 * 1024 } }, (_, append, _recorder, directory) =>
          Effect.gen(function*() {
            for (let i = 0; i < 10; i++) yield* append(session, { i })
            yield* append(session, { large: "x".repeat(JournalFile.firstAhead + 1000) })
            for (let i = 0; i < 10; i++) yield* append(session, { after: i })
            return yield* journalPast(directory, JournalFile.firstAhead + JournalFile.aheadChunk)
          }).pipe(Effect.provide(NodeServices.layer)))
        const parsed = Journal.parse(onDisk)!
        assert.isUndefined(parsed.stoppedAt, "no zeros were written over the large record")
        assert.strictEqual(parsed.records.length, 21)
        assert.isAbove(onDisk.length, JournalFile.firstAhead + JournalFile.aheadChunk, "the zeros were written after it")
      }))

    it.effect("journal mode: a lone session's file is fsynced before a checkpoint removes the journal its batches were in, and its batches don't wait for the rotation", () =>
      Effect.gen(function*() {
        const session = SessionId.decodeSync("alone-rotating")
        const { events, result: appended } = yield* recorded({ journal: { checkpointBytes: 2048 } }, (_, append, recorder) =>
          Effect.gen(function*() {
            // Lone batches don't wait for a rotation: they go on until two rotated journals are gone.
            const removed = () => recorder.events.filter((e) => e.op === "remove" && isJournal(e.path)).length
            let i = 0
            for (; i < 40 || (i < 2000 && removed() < 2); i++) yield* append(session, { i, pad: "x".repeat(40) })
            return i
          }))
        const closing = events.findIndex((e) => e.op === "mark" && e.flag === "closing")
        const before = events.slice(0, closing)
        // A lone batch syncs the journal itself, blocking; the committer's syncs go through the thread pool.
        const lone = before.filter((e) => e.op === "sync" && isJournal(e.path) && e.blocking === true).length
        assert.isAtLeast(lone, appended / 2, `${lone} of ${appended} appends were lone batches that synced the journal themselves`)
        const rotated = before.filter((e) => e.op === "remove" && isJournal(e.path)).length
        assert.isAtLeast(rotated, 2, "checkpoints removed rotated journals while the log was open")
        assertDirtyFilesSyncedBeforeRemove(events)
        // While the next journal was readied (opened, its header and zeros synced), lone batches went
        // on syncing the current one themselves, instead of waiting for the committer.
        const journals = [...new Set(events.filter((e) => e.op === "open" && creates(e.flag) && isJournal(e.path)).map((e) => e.path))]
        const undisturbed = journals.slice(1).filter((next) => {
          const opened = events.findIndex((e) => e.op === "open" && e.path === next)
          const used = events.findIndex((e, i) => i > opened && e.op === "writeAll" && e.path === next && (e.entries ?? []).length > 0)
          return events.slice(opened, used < 0 ? closing : used).some((e) =>
            e.op === "sync" && e.blocking === true && isJournal(e.path) && e.path !== next
          )
        })
        assert.isAtLeast(undisturbed.length, 1, `of ${journals.length - 1} rotations, none let lone batches go on meanwhile`)
      }))

    const together = (journal: boolean) =>
      Effect.gen(function*() {
        const { events } = yield* recorded(journal ? { journal: { checkpointBytes: 2048 } } : {}, (_, append, recorder, directory) =>
          workload(ids("c", 4), 30, append, (flag) => recorder.record({ path: directory, op: "mark", flag })))
        const from = events.findIndex((e) => e.op === "mark" && e.flag === "waves")
        const to = events.findIndex((e) => e.op === "mark" && e.flag === "waves done")
        assert.isAbove(to, from)
        const syncs = events.slice(from, to).filter((e) => e.op === "sync")
        assert.isAbove(syncs.length, 0)
        assert.deepStrictEqual(
          syncs.filter((e) => e.blocking === true).map((e) => basename(e.path)),
          [],
          "sessions appending concurrently never block the thread on an fsync"
        )
      })

    it.effect("sessions appending together go through the thread pool (fsync per file)", () => together(false))
    it.effect("sessions appending together go through the thread pool (journal mode)", () => together(true))
  })

  describe("holding the batch fsync (after a warm-up, so the header's fsync is not what waits)", () => {
    /**
     * Warm-up append, then every sync of `gated` paths waits for a latch: 20 appends go out; none may
     * be acknowledged, and a read may not show their lines (written, not yet durable), until it opens.
     */
    const held = (journal: boolean) =>
      Effect.gen(function*() {
        const session = SessionId.decodeSync("held")
        const gate = yield* Latch.make(true)
        const syncWaiting = yield* Deferred.make<void>()
        const fs = yield* FileSystem.FileSystem
        const directory = yield* fs.makeTempDirectoryScoped({ prefix: "todo-write-held-" })
        const gated = (path: string) => journal ? path.endsWith(".wal") : path.endsWith("held.jsonl")
        const holding = Layer.effect(
          FileSystem.FileSystem,
          Effect.map(FileSystem.FileSystem, (real) =>
            FileSystem.FileSystem.of({
              ...real,
              open: (path, options) =>
                Effect.map(real.open(path, options), (file) =>
                  gated(path)
                    ? Object.create(file, {
                      sync: {
                        get: () => Effect.andThen(Effect.andThen(Deferred.succeed(syncWaiting, undefined), gate.await), file.sync)
                      }
                    })
                    : file)
            }))
        )
        yield* Effect.flatMap(SessionLog.SessionLog, (log) =>
          Effect.gen(function*() {
            yield* log.append(session, "warm-up", {})
            yield* gate.close
            const fibers: Array<Fiber.Fiber<SessionEvent.Entry, unknown>> = []
            for (let i = 0; i < 20; i++) fibers.push(yield* Effect.forkChild(log.append(session, "n", { i })))
            // Until the batch's fsync is reached (and held), or, if the log never asks for one, the appends end.
            yield* Effect.raceFirst(Deferred.await(syncWaiting), Effect.asVoid(Fiber.joinAll(fibers)))
            for (const fiber of fibers) {
              assert.isUndefined(fiber.pollUnsafe(), "an append was acknowledged before the fsync of its batch")
            }
            const visible = yield* Stream.runCollect(log.read(session))
            assert.deepStrictEqual(
              visible.map((e) => e.type),
              ["warm-up"],
              "a read showed lines of a batch whose fsync has not completed"
            )
            yield* gate.open
            const entries = yield* Effect.forEach(fibers, Fiber.join)
            assert.deepStrictEqual(entries.map((e) => e.seq).sort((a, b) => a - b), Array.from({ length: 20 }, (_, i) => i + 1))
            assert.strictEqual((yield* Stream.runCollect(log.read(session))).length, 21)
          }).pipe(Effect.ensuring(gate.open))).pipe(
            Effect.provide(SessionLogFile.layerFileSystem({ directory, journal }).pipe(
              Layer.provide(Layer.unwrap(Effect.map(FileSystem.FileSystem, replacing)).pipe(
                Layer.provide(holding.pipe(Layer.provide(NodeServices.layer)))
              ))
            ))
          )
      }).pipe(Effect.scoped, Effect.provide(NodeServices.layer))

    it.live("fsync per file", () => held(false))
    it.live("journal mode", () => held(true))
  })
})
