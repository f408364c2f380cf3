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
    const write: IoCalls.Write = { fd, path, lock, lockDev: BigInt.asUintN(64, held.dev), lockIno: BigInt.asUintN(64, held.ino) }
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
      const io = IoCalls.ioWith(failingCalls((call, target) => call === "lstatSync" && target === unreadable!.lock ? errno("EACCES") : undefined))
      const batches = [
        handed(0, "zero\n", ok!.write),
        handed(1, "one\n", removed!.write),
        handed(2, "two\n", unreadable!.write),
        handed(3, "three\n", replaced!.write),
        handed(4, "four\n", undefined)
      ]
      const records = text(batches[0]!.buffer) + text(batches[4]!.buffer)
      for (const batch of batches) io.write(batch)
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
      const io = IoCalls.ioWith(failingCalls(() => undefined))
      io.write(handed(0, "zero\n", a.write))
      io.write(handed(1, "one\n", a.write))
      const first = io.commit(0, journal, 0)
      assert.deepStrictEqual(first.ids, [0])
      const second = io.commit(1, journal, first.stored)
      assert.deepStrictEqual(second.ids, [1])
      assert.deepStrictEqual(io.commit(1, journal, first.stored + second.stored).ids, [])
      assert.strictEqual(text(fs.readFileSync(journalPath)), `{"record":0}\nzero\n{"record":1}\none\n`)
    }))

  it("commits every batch up to the id, in the order handed over, wherever later ones were handed in between", () =>
    withFiles(({ journal, journalPath }) => {
      const io = IoCalls.ioWith(failingCalls(() => undefined))
      io.write(handed(5, "five\n", undefined))
      io.write(handed(3, "three\n", undefined))
      assert.deepStrictEqual(io.commit(4, journal, 0).ids, [3])
      assert.deepStrictEqual(io.commit(5, journal, text(handed(3, "three\n", undefined).buffer).length).ids, [5])
      assert.strictEqual(text(fs.readFileSync(journalPath)), `{"record":3}\nthree\n{"record":5}\nfive\n`)
    }))

  it("a journal that can't be synced is cut back to where the commit began; the batches written are not durable", () =>
    withFiles(({ journal, journalPath, session }) => {
      const [a, b] = ["a", "b"].map(session)
      fs.rmSync(b!.lock)
      fs.writeFileSync(journalPath, "kept")
      const io = IoCalls.ioWith(failingCalls((call) => call === "fdatasyncSync" ? errno("EIO") : undefined))
      io.write(handed(0, "zero\n", a!.write))
      io.write(handed(1, "one\n", b!.write))
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
      const io = IoCalls.ioWith(failingCalls((call) => call === "writevSync" ? errno("ENOSPC") : call === "ftruncateSync" ? errno("EIO") : undefined))
      io.write(handed(0, "zero\n", a.write))
      const response = io.commit(0, journal, 0)
      assert.deepStrictEqual(response.journal, { fault: { code: "ENOSPC", syscall: "write", message: "ENOSPC: failed" }, cut: false })
      assert.deepStrictEqual(response.outcomes, [{ _tag: "NotDurable" }])
    }))

  it("a write to a session file that fails is reported, and its batch goes to no journal", () =>
    withFiles(({ journal, journalPath, session }) => {
      const [a, b] = ["a", "b"].map(session)
      const io = IoCalls.ioWith(failingCalls((call, target) => call === "writeSync" && target === a!.write.fd ? errno("ENOSPC") : undefined))
      const batches = [handed(0, "zero\n", a!.write), handed(1, "one\n", b!.write)]
      for (const batch of batches) io.write(batch)
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
      })
      const batches = [handed(0, "zero\n", a.write), handed(1, "one\n", a.write)]
      for (const batch of batches) io.write(batch)
      const response = io.commit(1, journal, 0)
      assert.isUndefined(response.journal)
      assert.strictEqual(text(fs.readFileSync(journalPath)), text(batches[0]!.buffer) + text(batches[1]!.buffer))
    }))

  it("without a journal to write to (it is broken), the batches written are let go of, none durable", () =>
    withFiles(({ journalPath, session }) => {
      const a = session("a")
      const io = IoCalls.ioWith(failingCalls(() => undefined))
      io.write(handed(0, "zero\n", a.write))
      assert.deepStrictEqual(io.commit(0, -1, 0), { ids: [0], outcomes: [{ _tag: "NotDurable" }], stored: 0, journal: undefined })
      assert.strictEqual(fs.readFileSync(journalPath, "utf8"), "")
      assert.strictEqual(fs.readFileSync(a.path, "utf8"), "zero\n", "written: its writer cuts it")
    }))
})
