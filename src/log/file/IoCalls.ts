/**
 * What the journal's I/O thread (`IoThread`) does, as plain data and one function (`ioWith`): for
 * each batch handed over, check its lock, write it to its session file and look at the file; on
 * commit, write the records of those written to the journal with one `writev` and fdatasync it. The
 * function runs on the thread as its source text, or in place where there is no thread.
 *
 * The lock's check costs an `lstat` per batch, unless the session directory shows that no entry in
 * it changed since the writer's lock was last found its own: a lock removed, renamed aside or
 * replaced changes its directory's change time (`ctime`), as creating, linking or removing any entry
 * does, and nothing sets it back (`utimes` sets the modification time, and the change time to now).
 * One `stat` of the directory per group of batches then stands for their locks' `lstat`s. A
 * change time is only as fine as the file system's clock (a tick of a few ms, or a second on some),
 * so two changes within one tick may leave the same time: a directory's stamp is trusted only once
 * that clock is seen past it, by a session file in it written later (its own change time, after the
 * write, is the clock's reading then). A change after that gets a later time, whatever the clock's
 * grain, unless the clock is set back: a lower reading then drops every stamp trusted (a change
 * between the step and the next write could still go unseen, if it got exactly a time already seen).
 * And the kernel stamps a directory before lookups see the change: a stamp is kept only once the
 * directory has been read (which waits for a change under way) before the lock is found its own.
 */
import type * as fs from "node:fs"
import * as BlockingIo from "./BlockingIo.ts"
import type * as PlatformError from "effect/PlatformError"

/** A failed system call, as it crosses threads. */
export interface Fault {
  readonly code: string | undefined
  readonly syscall: string
  readonly message: string
}

/** A batch to write to its session file, after checking that its lock is still this writer's. */
export interface Write {
  readonly fd: number
  readonly path: string
  /** The directory holding the session file and its lock. */
  readonly directory: string
  readonly lock: string
  readonly lockDev: bigint
  readonly lockIno: bigint | undefined
}

/** A batch handed to the thread: its journal record (header, then lines) in a buffer of its own. */
export interface Handed {
  readonly id: number
  readonly buffer: Uint8Array
  /** Where its lines start in `buffer`. */
  readonly lines: number
  /** `undefined`: its lines are in its session file already; only its record goes to the journal. */
  readonly write: Write | undefined
}

/** What became of one batch (`NotDurable` reaches no writer: its append fails with the journal's failure). */
export type Outcome =
  | { readonly _tag: "LockFailed"; readonly fault: Fault }
  | { readonly _tag: "LockNotHeld"; readonly found: BlockingIo.Identity | undefined }
  | { readonly _tag: "WriteFailed"; readonly fault: Fault }
  /** Written to its session file, not durable: the journal failed (`Response.journal`). */
  | { readonly _tag: "NotDurable" }
  /**
   * Durable; `found`: what was at its session file's path right after its write (`undefined` for a
   * batch written before), or why that couldn't be told.
   */
  | { readonly _tag: "Durable"; readonly found: BlockingIo.Identity | undefined; readonly fault: Fault | undefined }

/** What a writer is answered with. */
export type Answer = Exclude<Outcome, { readonly _tag: "NotDurable" }>

export interface Response {
  /** The batches committed, by id, in the order they were handed over. */
  readonly ids: ReadonlyArray<number>
  readonly outcomes: ReadonlyArray<Outcome>
  /** Bytes of records stored in the journal. */
  readonly stored: number
  /** Why the journal's write or sync failed, and whether it was cut back to where the commit began. */
  readonly journal: { readonly fault: Fault; readonly cut: boolean } | undefined
}

/** The synchronous calls the thread makes. */
export interface Calls {
  readonly lstatSync: (path: string, options: { bigint: true; throwIfNoEntry: false }) => fs.BigIntStats | undefined
  readonly statSync: (path: string, options: { bigint: true; throwIfNoEntry: false }) => fs.BigIntStats | undefined
  readonly opendirSync: (path: string) => { readonly readSync: () => unknown; readonly closeSync: () => void }
  readonly writeSync: (fd: number, buffer: Uint8Array, offset: number, length: number, position: number | null) => number
  readonly writevSync: (fd: number, buffers: ReadonlyArray<Uint8Array>, position: number) => number
  readonly fdatasyncSync: (fd: number) => void
  readonly fsyncSync: (fd: number) => void
  readonly ftruncateSync: (fd: number, length: number) => void
}

/**
 * The thread's side: `write` checks each batch's lock, writes it to its session file and looks at the
 * file right after (a group as it is handed over, while the event loop's thread prepares the next);
 * `commit` writes the records of the batches written up to an id to the journal with one `writev`,
 * makes them durable with one fdatasync, and answers what became of each. Runs on the thread as its
 * source text: it must use nothing but its parameters and the language's globals.
 */
export const ioWith = (
  calls: Calls,
  /** Whether a directory's stamp may stand for its locks' `lstat`s: the argument rests on Linux's VFS (see above). */
  byDirectory: boolean
) => {
  const fault = (syscall: string, cause: unknown): Fault => ({
    code: typeof cause === "object" && cause !== null && "code" in cause ? String(cause.code) : undefined,
    syscall,
    message: cause instanceof Error ? cause.message : String(cause)
  })
  // The fault, or undefined once every byte is written.
  const writeAll = (fd: number, buffer: Uint8Array, from: number, position: number | null): Fault | undefined => {
    try {
      for (let at = from; at < buffer.length;) {
        const n = calls.writeSync(fd, buffer, at, buffer.length - at, position === null ? null : position + at - from)
        if (n <= 0) return fault("write", new Error("wrote 0 bytes"))
        at += n
      }
      return undefined
    } catch (cause) {
      return fault("write", cause)
    }
  }
  const lstat = (path: string): { readonly found: BlockingIo.Identity | undefined; readonly changed?: bigint } | { readonly fault: Fault } => {
    try {
      const info = calls.lstatSync(path, { bigint: true, throwIfNoEntry: false })
      return info === undefined
        ? { found: undefined }
        : { found: { dev: BigInt.asUintN(64, info.dev), ino: BigInt.asUintN(64, info.ino), size: info.size }, changed: info.ctimeNs }
    } catch (cause) {
      return { fault: fault("lstat", cause) }
    }
  }
  // A directory's identity and change time, and whether its file system's clock was seen past it.
  type Stamp = { readonly dev: bigint; readonly ino: bigint; readonly ctime: bigint; readonly settled: boolean }
  // Per directory: the change time of the last session file written in it, read right after the write, and its device.
  const clocks = new Map<string, { readonly dev: bigint; readonly at: bigint }>()
  // Per writer: its directory's settled stamp, read before its lock was last found its own.
  let verified = new WeakMap<Write, Stamp>()
  // The group's stamps, each directory's read once, before the group's first write in it.
  let stamps = new Map<string, Stamp | undefined>()
  const stampOf = (directory: string): Stamp | undefined => {
    if (stamps.has(directory)) return stamps.get(directory)
    let stamp: Stamp | undefined
    try {
      const info = calls.statSync(directory, { bigint: true, throwIfNoEntry: false })
      if (info !== undefined) {
        const dev = BigInt.asUintN(64, info.dev)
        const clock = clocks.get(directory)
        stamp = { dev, ino: BigInt.asUintN(64, info.ino), ctime: info.ctimeNs, settled: clock?.dev === dev && clock.at > info.ctimeNs }
      }
    } catch {
      // Unknown: the locks are looked at.
    }
    stamps.set(directory, stamp)
    return stamp
  }
  const same = (a: Stamp, b: Stamp) => a.dev === b.dev && a.ino === b.ino && a.ctime === b.ctime
  // Reading a directory takes its inode's lock (shared), which an unlink, rename, link or create holds
  // from before it stamps the directory's change time until lookups see the change: once a read
  // returns, an lstat sees every change stamped before it.
  const waitedOut = (directory: string): boolean => {
    try {
      const dir = calls.opendirSync(directory)
      try {
        dir.readSync()
      } finally {
        dir.closeSync()
      }
      return true
    } catch {
      return false
    }
  }
  // Batches handed over, in order, until a commit takes them; a record only for those written.
  const pending: Array<{ readonly id: number; readonly record: Uint8Array | undefined; outcome: Outcome }> = []
  const written = (handed: Handed): Outcome => {
    const { write } = handed
    if (write === undefined) return { _tag: "Durable", found: undefined, fault: undefined }
    const stamp = byDirectory ? stampOf(write.directory) : undefined
    const known = verified.get(write)
    // No entry of the directory changed since the lock was found its own: it still is.
    if (stamp === undefined || known === undefined || !same(stamp, known)) {
      // A change the stamp shows may not be seen by lookups yet (the kernel stamps the directory,
      // then updates its entries): waited out before the lock is looked at, or the stamp not kept.
      const trusted = stamp?.settled === true && waitedOut(write.directory)
      const held = lstat(write.lock)
      if ("fault" in held) return { _tag: "LockFailed", fault: held.fault }
      if (held.found === undefined || held.found.dev !== write.lockDev || held.found.ino !== write.lockIno) {
        return { _tag: "LockNotHeld", found: held.found }
      }
      if (trusted && stamp !== undefined) verified.set(write, stamp)
    }
    // At the end of the session file, open for appending.
    const failed = writeAll(write.fd, handed.buffer, handed.lines, null)
    if (failed !== undefined) return { _tag: "WriteFailed", fault: failed }
    const after = lstat(write.path)
    if ("fault" in after) return { _tag: "Durable", found: undefined, fault: after.fault }
    if (after.found !== undefined && after.changed !== undefined) {
      const clock = clocks.get(write.directory)
      // Lower than the last reading: the clock was set back, and a later change could get a time
      // already seen (on a file system that keeps whole seconds, say): no stamp is trusted any more,
      // nor the group's, judged settled by readings from before the step.
      if (clock !== undefined && after.changed < clock.at) {
        verified = new WeakMap()
        stamps = new Map()
      }
      clocks.set(write.directory, { dev: after.found.dev, at: after.changed })
    }
    return { _tag: "Durable", found: after.found, fault: undefined }
  }
  return {
    write: (group: ReadonlyArray<Handed>): void => {
      stamps = new Map()
      for (const handed of group) {
        const outcome = written(handed)
        pending.push({ id: handed.id, record: outcome._tag === "Durable" ? handed.buffer : undefined, outcome })
      }
    },
    commit: (upTo: number, fd: number, position: number): Response => {
      // Every batch up to `upTo`, wherever it is: those handed over later stay.
      const taken = pending.filter((entry) => entry.id <= upTo)
      pending.splice(0, pending.length, ...pending.filter((entry) => entry.id > upTo))
      const ids = taken.map((entry) => entry.id)
      const records = taken.flatMap((entry) => entry.record === undefined ? [] : [entry.record])
      const outcomes = () => taken.map((entry) => entry.outcome)
      // No journal to write to (it is broken): the batches are let go of, none durable.
      if (fd < 0) {
        for (const entry of taken) if (entry.record !== undefined) entry.outcome = { _tag: "NotDurable" }
        return { ids, outcomes: outcomes(), stored: 0, journal: undefined }
      }
      if (records.length === 0) return { ids, outcomes: outcomes(), stored: 0, journal: undefined }
      let stored = 0
      for (const record of records) stored += record.length
      let failed: Fault | undefined
      let syscall = "write"
      try {
        const n = calls.writevSync(fd, records, position)
        if (n < stored) {
          // The rest, as one buffer: a short writev is rare (a full disk, a signal).
          const rest = new Uint8Array(stored)
          let at = 0
          for (const record of records) {
            rest.set(record, at)
            at += record.length
          }
          failed = writeAll(fd, rest.subarray(n), 0, position + n)
        }
        if (failed === undefined) {
          syscall = "fdatasync"
          calls.fdatasyncSync(fd)
        }
      } catch (cause) {
        failed ??= fault(syscall, cause)
      }
      if (failed !== undefined) {
        let cut = true
        try {
          calls.ftruncateSync(fd, position)
          calls.fsyncSync(fd)
        } catch {
          cut = false
        }
        for (const entry of taken) if (entry.record !== undefined) entry.outcome = { _tag: "NotDurable" }
        return { ids, outcomes: outcomes(), stored: 0, journal: { fault: failed, cut } }
      }
      return { ids, outcomes: outcomes(), stored, journal: undefined }
    }
  }
}

/** Whether directories' stamps stand for locks' `lstat`s here: on Linux, whose locking the argument rests on. */
export const byDirectory: boolean = process.platform === "linux"

/** A fault as `FileSystem` reports a failed call on `path`. */
export const toPlatformError = (fault: Fault, path: string): PlatformError.PlatformError =>
  BlockingIo.systemError(fault.syscall, fault.syscall, path)(Object.assign(new Error(fault.message), { code: fault.code }))
