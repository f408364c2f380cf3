/**
 * What the journal's I/O thread (`IoThread`) does, as plain data and one function (`ioWith`): for
 * each batch handed over, check its lock, write it to its session file and look at the file; on
 * commit, write the records of those written to the journal with one `writev` and fdatasync it. The
 * function runs on the thread as its source text, or in place where there is no thread.
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
  readonly writeSync: (fd: number, buffer: Uint8Array, offset: number, length: number, position: number | null) => number
  readonly writevSync: (fd: number, buffers: ReadonlyArray<Uint8Array>, position: number) => number
  readonly fdatasyncSync: (fd: number) => void
  readonly fsyncSync: (fd: number) => void
  readonly ftruncateSync: (fd: number, length: number) => void
}

/**
 * The thread's side: `write` checks a batch's lock, writes it to its session file and looks at the
 * file right after (each as it is handed over, while the event loop's thread prepares the next);
 * `commit` writes the records of the batches written up to an id to the journal with one `writev`,
 * makes them durable with one fdatasync, and answers what became of each. Runs on the thread as its
 * source text: it must use nothing but its parameters and the language's globals.
 */
export const ioWith = (calls: Calls) => {
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
  const lstat = (path: string): { readonly found: BlockingIo.Identity | undefined } | { readonly fault: Fault } => {
    try {
      const info = calls.lstatSync(path, { bigint: true, throwIfNoEntry: false })
      return {
        found: info === undefined ? undefined : { dev: BigInt.asUintN(64, info.dev), ino: BigInt.asUintN(64, info.ino), size: info.size }
      }
    } catch (cause) {
      return { fault: fault("lstat", cause) }
    }
  }
  // Batches handed over, in order, until a commit takes them; a record only for those written.
  const pending: Array<{ readonly id: number; readonly record: Uint8Array | undefined; outcome: Outcome }> = []
  const written = (handed: Handed): Outcome => {
    const { write } = handed
    if (write === undefined) return { _tag: "Durable", found: undefined, fault: undefined }
    const held = lstat(write.lock)
    if ("fault" in held) return { _tag: "LockFailed", fault: held.fault }
    if (held.found === undefined || held.found.dev !== write.lockDev || held.found.ino !== write.lockIno) {
      return { _tag: "LockNotHeld", found: held.found }
    }
    // At the end of the session file, open for appending.
    const failed = writeAll(write.fd, handed.buffer, handed.lines, null)
    if (failed !== undefined) return { _tag: "WriteFailed", fault: failed }
    const after = lstat(write.path)
    return "fault" in after
      ? { _tag: "Durable", found: undefined, fault: after.fault }
      : { _tag: "Durable", found: after.found, fault: undefined }
  }
  return {
    write: (handed: Handed): void => {
      const outcome = written(handed)
      pending.push({ id: handed.id, record: outcome._tag === "Durable" ? handed.buffer : undefined, outcome })
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

/** A fault as `FileSystem` reports a failed call on `path`. */
export const toPlatformError = (fault: Fault, path: string): PlatformError.PlatformError =>
  BlockingIo.systemError(fault.syscall, fault.syscall, path)(Object.assign(new Error(fault.message), { code: fault.code }))
