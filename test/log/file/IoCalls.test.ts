import { assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as IoCalls from "../../../src/log/file/IoCalls.ts"
import { errno, failingCalls } from "./FileTest.ts"

const encoder = new TextEncoder()

/** A directory with session files open for appending, their locks, and a journal; removed after `body`. */
const withFiles = (body: (files: ReturnType<typeof filesIn>) => void) => {
  const directory = fs.mkdtempSync(join(tmpdir(), "todo-write-iocalls-"))
  const files = filesIn(directory)
  try {
    body(files)
  } finally {
    files.close()
    fs.rmSync(directory, { recursive: true, force: true })
  }
}

const filesIn = (directory: string) => {
  const fds: Array<number> = []
  const session = (name: string) => {
    const path = join(directory, `${name}.jsonl`)
    const lock = join(directory, `${name}.lock`)
    fs.writeFileSync(lock, "held")
    const fd = fs.openSync(path, "a")
    fds.push(fd)
    const held = fs.lstatSync(lock, { bigint: true })
    const write: IoCalls.Write = { fd, path, directory, lock, lockDev: BigInt.asUintN(64, held.dev), lockIno: BigInt.asUintN(64, held.ino) }
    return { path, lock, write }
  }
  const journalPath = join(directory, "journal.wal")
  const journal = fs.openSync(journalPath, "w+")
  fds.push(journal)
  return { session, journal, journalPath, close: () => fds.forEach((fd) => fs.closeSync(fd)) }
}

/** A batch: its record header and its lines, as the committer hands it over. */
const handed = (id: number, lines: string, write: IoCalls.Write | undefined): IoCalls.Handed => {
  const header = encoder.encode(`{"record":${id}}\n`)
  const buffer = new Uint8Array(header.length + lines.length)
  buffer.set(header)
  buffer.set(encoder.encode(lines), header.length)
  return { id, buffer, lines: header.length, write }
}

const text = (bytes: Uint8Array | Buffer) => Buffer.from(bytes).toString("utf8")

/** The same stats with other fields: what these tests' directory and session files show. */
const altered = (info: fs.BigIntStats | undefined, fields: Partial<Record<"dev" | "ino" | "ctimeNs", bigint>>): fs.BigIntStats | undefined =>
  info === undefined ? undefined : Object.assign(Object.create(Object.getPrototypeOf(info)), info, fields)

/**
 * Node's calls, counting the `lstat`s of each path and the `stat`s; what a `stat` of `directory`
 * shows, and what the `lstat` of a session file shows, altered as `shown` says at the time.
 */
const counting = (directory: string, shown: {
  readonly directory?: () => Partial<Record<"dev" | "ino" | "ctimeNs", bigint>>
  readonly file?: () => Partial<Record<"dev" | "ino" | "ctimeNs", bigint>>
}) => {
  const lstats = new Map<string, number>()
  let stats = 0
  const calls: IoCalls.Calls = {
    ...failingCalls(() => undefined),
    lstatSync: (path, options) => {
      lstats.set(path, (lstats.get(path) ?? 0) + 1)
      const info = fs.lstatSync(path, options)
      return shown.file === undefined || !path.endsWith(".jsonl") ? info : altered(info, shown.file())
    },
    statSync: (path, options) => {
      stats++
      const info = fs.statSync(path, options)
      return shown.directory === undefined || path !== directory ? info : altered(info, shown.directory())
    }
  }
  return { calls, lstatsOf: (path: string) => lstats.get(path) ?? 0, stats: () => stats }
}

/** Waits, blocking: long enough for a file system's clock to move on (its tick is a few ms here). */
const pause = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)

/** Writes one group after another, each batch a line for its writer, numbered on. */
const grouping = (io: ReturnType<typeof IoCalls.ioWith>) => {
  let id = 0
  return {
    group: (...writers: Array<IoCalls.Write>) => io.write(writers.map((write) => handed(id++, `line ${id - 1}\n`, write))),
    /** What became of every batch written, committed to `journal`. */
    outcomes: (journal: number) => io.commit(id - 1, journal, 0).outcomes
  }
}

describe("IoCalls: a lock looked at through its directory", () => {
  it("while no entry of the directory changes, a writer's lock is looked at until the directory's stamp is seen settled, then no more; after a change, again", () =>
    withFiles(({ journal, session }) => {
      const [a, b] = ["a", "b"].map(session)
      // The directory last changed at time 1, the session files at 50 (the clock seen past it), then later.
      let changed = 1n
      let clock = 50n
      const { calls, lstatsOf, stats } = counting(a!.write.directory, { directory: () => ({ ctimeNs: changed }), file: () => ({ ctimeNs: clock }) })
      const { group, outcomes } = grouping(IoCalls.ioWith(calls, true))
      const looked = () => [lstatsOf(a!.lock), lstatsOf(b!.lock)]
      // No session file seen written yet: the stamp can't be trusted, the locks are looked at.
      group(a!.write, b!.write)
      assert.deepStrictEqual(looked(), [1, 1])
      // Seen settled now: looked at once more, with the stamp read before.
      group(a!.write, b!.write)
      assert.deepStrictEqual(looked(), [2, 2])
      group(a!.write, b!.write)
      group(a!.write)
      assert.deepStrictEqual(looked(), [2, 2], "the stamp unchanged: no lock looked at")
      assert.strictEqual(stats(), 4, "one stat of the directory per group")
      // An entry changes (a session starts): the clock isn't seen past it until a file is written after it.
      changed = 100n
      clock = 150n
      group(a!.write)
      assert.deepStrictEqual(looked(), [3, 2])
      group(a!.write)
      assert.deepStrictEqual(looked(), [4, 2], "settled by the write after the change: looked at once more")
      group(a!.write)
      assert.deepStrictEqual(looked(), [4, 2], "and then no more")
      // Someone removes b's lock: the directory changes.
      fs.rmSync(b!.lock)
      changed = 200n
      group(a!.write, b!.write)
      assert.deepStrictEqual(outcomes(journal).slice(-2).map((outcome) => outcome._tag), ["Durable", "LockNotHeld"])
      assert.deepStrictEqual(looked(), [5, 3])
      assert.strictEqual(fs.readFileSync(b!.path, "utf8"), "line 1\nline 3\nline 5\n", "nothing written after its lock went")
    }))

  it("a stamp the file system's clock was not seen past is never trusted: a change within its tick can leave the same time", () =>
    withFiles(({ journal, session }) => {
      const a = session("a")
      // The session file's change time after each write is the directory's: the clock not seen past it.
      const { calls, lstatsOf } = counting(a.write.directory, { directory: () => ({ ctimeNs: 5n }), file: () => ({ ctimeNs: 5n }) })
      const { group, outcomes } = grouping(IoCalls.ioWith(calls, true))
      for (let i = 0; i < 3; i++) group(a.write)
      assert.strictEqual(lstatsOf(a.lock), 3)
      // Replaced, the directory's times left the same (as two changes within one tick may).
      fs.writeFileSync(`${a.lock}.new`, "someone else's")
      fs.renameSync(`${a.lock}.new`, a.lock)
      group(a.write)
      assert.strictEqual(outcomes(journal)[3]?._tag, "LockNotHeld")
    }))

  it("a change the kernel has stamped on the directory but lookups don't see yet is waited out before a stamp is trusted", () =>
    withFiles(({ journal, session }) => {
      const a = session("a")
      let changed = 1n
      let clock = 50n
      const counted = counting(a.write.directory, { directory: () => ({ ctimeNs: changed }), file: () => ({ ctimeNs: clock }) })
      // An unlink under way: the directory stamped, the entry not yet gone (the task preempted, or
      // waiting for a synchronous directory's commit). It holds the directory's lock: a read waits for it.
      let underWay: (() => void) | undefined
      const calls: IoCalls.Calls = {
        ...counted.calls,
        opendirSync: (path) => {
          underWay?.()
          underWay = undefined
          return counted.calls.opendirSync(path)
        }
      }
      const { group, outcomes } = grouping(IoCalls.ioWith(calls, true))
      group(a.write)
      group(a.write)
      changed = 100n
      underWay = () => fs.rmSync(a.lock)
      clock = 150n
      // The stamp of 100, not settled; then settled: the read waits the removal out, the lock is found gone.
      group(a.write)
      group(a.write)
      group(a.write)
      assert.deepStrictEqual(outcomes(journal).map((outcome) => outcome._tag), ["Durable", "Durable", "Durable", "LockNotHeld", "LockNotHeld"])
    }))

  it("a directory that can't be read (search rights only) is never trusted: each lock is looked at", () =>
    withFiles(({ session }) => {
      const a = session("a")
      const counted = counting(a.write.directory, { directory: () => ({ ctimeNs: 1n }), file: () => ({ ctimeNs: 50n }) })
      const calls: IoCalls.Calls = { ...counted.calls, opendirSync: () => { throw errno("EACCES") } }
      const { group } = grouping(IoCalls.ioWith(calls, true))
      for (let i = 0; i < 4; i++) group(a.write)
      assert.strictEqual(counted.lstatsOf(a.lock), 4)
    }))

  it("a clock set back, first seen in the middle of a group: the group's stamp is not trusted again by its later batches", () =>
    withFiles(({ journal, session }) => {
      const [a, b] = ["a", "b"].map(session)
      let changed = 30n
      let clock = 50n
      const { calls } = counting(a!.write.directory, { directory: () => ({ ctimeNs: changed }), file: () => ({ ctimeNs: clock }) })
      const { group, outcomes } = grouping(IoCalls.ioWith(calls, true))
      for (let i = 0; i < 3; i++) group(a!.write, b!.write)
      // Set back below the directory's change time; seen on a's write, before b's batch.
      clock = 10n
      group(a!.write, b!.write)
      // Back at exactly 30 (a file system keeping whole seconds), b's lock is removed: the directory reads 30 again.
      fs.rmSync(b!.lock)
      clock = 30n
      changed = 30n
      group(b!.write)
      assert.strictEqual(outcomes(journal).at(-1)?._tag, "LockNotHeld")
    }))

  it("where stamps can't stand for locks (not Linux), each lock is looked at and the directory never", () =>
    withFiles(({ session }) => {
      const a = session("a")
      const { calls, lstatsOf, stats } = counting(a.write.directory, { directory: () => ({ ctimeNs: 1n }), file: () => ({ ctimeNs: 50n }) })
      const { group } = grouping(IoCalls.ioWith(calls, false))
      for (let i = 0; i < 4; i++) group(a.write)
      assert.deepStrictEqual([lstatsOf(a.lock), stats()], [4, 0])
    }))

  it("a clock set back drops every stamp trusted: a change could get a time already seen", () =>
    withFiles(({ session }) => {
      const a = session("a")
      let clock = 50n
      const { calls, lstatsOf } = counting(a.write.directory, { directory: () => ({ ctimeNs: 1n }), file: () => ({ ctimeNs: clock }) })
      const { group } = grouping(IoCalls.ioWith(calls, true))
      for (let i = 0; i < 3; i++) group(a.write)
      assert.strictEqual(lstatsOf(a.lock), 2)
      clock = 40n
      group(a.write)
      assert.strictEqual(lstatsOf(a.lock), 2, "the step is seen after this batch's write")
      clock = 45n
      group(a.write)
      group(a.write)
      assert.strictEqual(lstatsOf(a.lock), 3, "looked at again once, then trusted again")
    }))

  it("the clock is seen only on the directory's own device: a session file on another (mounted over it) settles nothing", () =>
    withFiles(({ session }) => {
      const a = session("a")
      const dev = fs.statSync(a.write.directory, { bigint: true }).dev
      const { calls, lstatsOf } = counting(a.write.directory, { directory: () => ({ ctimeNs: 1n }), file: () => ({ dev: dev + 1n, ctimeNs: 50n }) })
      const { group } = grouping(IoCalls.ioWith(calls, true))
      for (let i = 0; i < 3; i++) group(a.write)
      assert.strictEqual(lstatsOf(a.lock), 3)
    }))

  it("a directory that can't be looked at: each lock is, and the batches are written", () =>
    withFiles(({ journal, session }) => {
      const a = session("a")
      const { calls: counted, lstatsOf } = counting(a.write.directory, { directory: () => ({ ctimeNs: 1n }), file: () => ({ ctimeNs: 50n }) })
      let refused = false
      const calls: IoCalls.Calls = {
        ...counted,
        statSync: (path, options) => {
          if (refused) throw errno("EACCES")
          return counted.statSync(path, options)
        }
      }
      const { group, outcomes } = grouping(IoCalls.ioWith(calls, true))
      for (let i = 0; i < 3; i++) group(a.write)
      refused = true
      for (let i = 0; i < 2; i++) group(a.write)
      assert.strictEqual(lstatsOf(a.lock), 4)
      assert.deepStrictEqual(outcomes(journal).map((outcome) => outcome._tag), ["Durable", "Durable", "Durable", "Durable", "Durable"])
    }))

  for (const field of ["dev", "ino"] as const) {
    it(`another directory at the path (its ${field} differs), with the same change time: the locks are looked at`, () =>
      withFiles(({ session }) => {
        const a = session("a")
        const real = fs.statSync(a.write.directory, { bigint: true })[field]
        let other = false
        const { calls, lstatsOf } = counting(a.write.directory, {
          directory: () => ({ ctimeNs: 1n, [field]: other ? real + 1n : real }),
          file: () => ({ ctimeNs: 50n })
        })
        const { group } = grouping(IoCalls.ioWith(calls, true))
        for (let i = 0; i < 3; i++) group(a.write)
        assert.strictEqual(lstatsOf(a.lock), 2)
        other = true
        group(a.write)
        assert.strictEqual(lstatsOf(a.lock), 3)
      }))
  }

  it("on a real directory: a lock taken over (renamed aside, another put in its place) is found out after the stamp settled", () =>
    withFiles(({ journal, session }) => {
      const a = session("a")
      const { calls, lstatsOf } = counting(a.write.directory, {})
      const { group, outcomes } = grouping(IoCalls.ioWith(calls, true))
      // The clock moves on past the directory's last change before the session file is written.
      pause(30)
      for (let i = 0; i < 4; i++) group(a.write)
      const looked = lstatsOf(a.lock)
      pause(30)
      fs.renameSync(a.lock, `${a.lock}.stale`)
      fs.writeFileSync(a.lock, "another process's")
      group(a.write)
      assert.deepStrictEqual(outcomes(journal).map((outcome) => outcome._tag), ["Durable", "Durable", "Durable", "Durable", "LockNotHeld"])
      assert.strictEqual(looked, 2, "looked at until the stamp was seen settled, then not while the directory stayed the same")
      assert.strictEqual(lstatsOf(a.lock), looked + 1)
    }))
})

describe("IoCalls: what the journal's I/O thread does", () => {
  it("writes a batch only while its lock is this writer's; journals only the batches written, and those written before", () =>
    withFiles(({ journal, journalPath, session }) => {
      const [ok, removed, unreadable, replaced] = ["ok", "removed", "unreadable", "replaced"].map(session)
      fs.rmSync(removed!.lock)
      // Replaced by a file made before the old one goes: another inode, always. (Removed first, the new
      // file could reuse the freed inode here, and the test failed now and then; a writer keeps its lock
      // open, so its inode is never freed while it holds it.)
      fs.writeFileSync(`${replaced!.lock}.new`, "someone else's")
      fs.renameSync(`${replaced!.lock}.new`, replaced!.lock)
      const io = IoCalls.ioWith(failingCalls((call, target) => call === "lstatSync" && target === unreadable!.lock ? errno("EACCES") : undefined), true)
      const batches = [
        handed(0, "zero\n", ok!.write),
        handed(1, "one\n", removed!.write),
        handed(2, "two\n", unreadable!.write),
        handed(3, "three\n", replaced!.write),
        handed(4, "four\n", undefined)
      ]
      const records = text(batches[0]!.buffer) + text(batches[4]!.buffer)
      io.write(batches)
      const response = io.commit(4, journal, 7)
      assert.deepStrictEqual(response.ids, [0, 1, 2, 3, 4])
      assert.strictEqual(response.stored, records.length)
      assert.isUndefined(response.journal)
      const [written, lost, failed, other, before] = response.outcomes
      assert.deepInclude(written, { _tag: "Durable", fault: undefined })
      assert.strictEqual(written?._tag === "Durable" ? written.found?.size : undefined, 5n, "the file as it was right after the write")
      assert.deepStrictEqual(lost, { _tag: "LockNotHeld", found: undefined })
      assert.deepInclude(failed, { _tag: "LockFailed" })
      assert.strictEqual(failed?._tag === "LockFailed" ? failed.fault.code : undefined, "EACCES")
      assert.strictEqual(other?._tag, "LockNotHeld")
      assert.isDefined(other?._tag === "LockNotHeld" ? other.found : undefined)
      assert.deepStrictEqual(before, { _tag: "Durable", found: undefined, fault: undefined })
      // Records at the position asked for, written batches only; a session file only if its lock held.
      assert.strictEqual(text(fs.readFileSync(journalPath)).slice(7), records)
      assert.strictEqual(fs.readFileSync(ok!.path, "utf8"), "zero\n")
      for (const s of [removed, unreadable, replaced]) assert.strictEqual(fs.readFileSync(s!.path, "utf8"), "")
    }))

  it("commits the batches handed over up to an id; later ones wait for the next commit", () =>
    withFiles(({ journal, journalPath, session }) => {
      const a = session("a")
      const io = IoCalls.ioWith(failingCalls(() => undefined), true)
      io.write([handed(0, "zero\n", a.write)])
      io.write([handed(1, "one\n", a.write)])
      const first = io.commit(0, journal, 0)
      assert.deepStrictEqual(first.ids, [0])
      const second = io.commit(1, journal, first.stored)
      assert.deepStrictEqual(second.ids, [1])
      assert.deepStrictEqual(io.commit(1, journal, first.stored + second.stored).ids, [])
      assert.strictEqual(text(fs.readFileSync(journalPath)), `{"record":0}\nzero\n{"record":1}\none\n`)
    }))

  it("commits every batch up to the id, in the order handed over, wherever later ones were handed in between", () =>
    withFiles(({ journal, journalPath }) => {
      const io = IoCalls.ioWith(failingCalls(() => undefined), true)
      io.write([handed(5, "five\n", undefined)])
      io.write([handed(3, "three\n", undefined)])
      assert.deepStrictEqual(io.commit(4, journal, 0).ids, [3])
      assert.deepStrictEqual(io.commit(5, journal, text(handed(3, "three\n", undefined).buffer).length).ids, [5])
      assert.strictEqual(text(fs.readFileSync(journalPath)), `{"record":3}\nthree\n{"record":5}\nfive\n`)
    }))

  it("a journal that can't be synced is cut back to where the commit began; the batches written are not durable", () =>
    withFiles(({ journal, journalPath, session }) => {
      const [a, b] = ["a", "b"].map(session)
      fs.rmSync(b!.lock)
      fs.writeFileSync(journalPath, "kept")
      const io = IoCalls.ioWith(failingCalls((call) => call === "fdatasyncSync" ? errno("EIO") : undefined), true)
      io.write([handed(0, "zero\n", a!.write)])
      io.write([handed(1, "one\n", b!.write)])
      const response = io.commit(1, journal, 4)
      assert.deepStrictEqual(response.outcomes.map((o) => o._tag), ["NotDurable", "LockNotHeld"])
      assert.strictEqual(response.stored, 0)
      assert.deepInclude(response.journal, { cut: true })
      assert.deepInclude(response.journal?.fault, { code: "EIO", syscall: "fdatasync" })
      assert.strictEqual(fs.readFileSync(journalPath, "utf8"), "kept")
    }))

  it("a journal that can't be cut either says so", () =>
    withFiles(({ journal, session }) => {
      const a = session("a")
      const io = IoCalls.ioWith(failingCalls((call) => call === "writevSync" ? errno("ENOSPC") : call === "ftruncateSync" ? errno("EIO") : undefined), true)
      io.write([handed(0, "zero\n", a.write)])
      const response = io.commit(0, journal, 0)
      assert.deepStrictEqual(response.journal, { fault: { code: "ENOSPC", syscall: "write", message: "ENOSPC: failed" }, cut: false })
      assert.deepStrictEqual(response.outcomes, [{ _tag: "NotDurable" }])
    }))

  it("a write to a session file that fails is reported, and its batch goes to no journal", () =>
    withFiles(({ journal, journalPath, session }) => {
      const [a, b] = ["a", "b"].map(session)
      const io = IoCalls.ioWith(failingCalls((call, target) => call === "writeSync" && target === a!.write.fd ? errno("ENOSPC") : undefined), true)
      const batches = [handed(0, "zero\n", a!.write), handed(1, "one\n", b!.write)]
      io.write(batches)
      const response = io.commit(1, journal, 0)
      assert.strictEqual(response.outcomes[0]?._tag === "WriteFailed" ? response.outcomes[0].fault.code : undefined, "ENOSPC")
      assert.strictEqual(response.outcomes[1]?._tag, "Durable")
      assert.strictEqual(text(fs.readFileSync(journalPath)), text(batches[1]!.buffer))
    }))

  it("a short writev is finished with writes", () =>
    withFiles(({ journal, journalPath, session }) => {
      const a = session("a")
      const io = IoCalls.ioWith({
        ...failingCalls(() => undefined),
        // Only the first 3 bytes of the first buffer.
        writevSync: (fd, buffers, position) => fs.writeSync(fd, buffers[0]!, 0, 3, position)
      }, true)
      const batches = [handed(0, "zero\n", a.write), handed(1, "one\n", a.write)]
      io.write(batches)
      const response = io.commit(1, journal, 0)
      assert.isUndefined(response.journal)
      assert.strictEqual(text(fs.readFileSync(journalPath)), text(batches[0]!.buffer) + text(batches[1]!.buffer))
    }))

  it("without a journal to write to (it is broken), the batches written are let go of, none durable", () =>
    withFiles(({ journalPath, session }) => {
      const a = session("a")
      const io = IoCalls.ioWith(failingCalls(() => undefined), true)
      io.write([handed(0, "zero\n", a.write)])
      assert.deepStrictEqual(io.commit(0, -1, 0), { ids: [0], outcomes: [{ _tag: "NotDurable" }], stored: 0, journal: undefined })
      assert.strictEqual(fs.readFileSync(journalPath, "utf8"), "")
      assert.strictEqual(fs.readFileSync(a.path, "utf8"), "zero\n", "written: its writer cuts it")
    }))
})
