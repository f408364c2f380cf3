/**
 * The system calls of the journal's shared appends, on a thread of their own. While sessions append
 * concurrently, each batch's calls (its lock's `lstat`, its write, the session file's `lstat`) cost
 * the event loop's thread more than the JavaScript around them (at 128 sessions on a 2-vCPU VM,
 * ~45-60 µs of its CPU per append with them, ~20 µs without). Batches go to the thread as writers
 * hand them over, in groups of `groupSize` (a message wakes the thread with a system call), their
 * journal records in one transferred buffer per group, each writer's paths told once (`IoMessages`);
 * the thread makes their calls while the event loop's thread prepares the next. The committer's
 * round then has it commit every batch handed over up to its last: one `writev` of their records to
 * the journal, one fdatasync, one answer. What the checks mean stays with the writers (`Writer`): the
 * thread reports identities and failures.
 *
 * The session file is looked at right after the batch's write, not after the journal's sync: it
 * proves the same (the path named this writer's file, ending where its batch ends, at a moment after
 * the write), as nothing after the check is watched either way.
 *
 * The thread starts with the first batch and is referenced only while a commit is in flight (an idle
 * log keeps no process alive). If it stops, the commit in flight fails (the committer cuts the
 * journal, the writers their files), so do the batches it held, and later ones make the same calls
 * on the event loop's thread (`IoCalls.ioWith`).
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Scope from "effect/Scope"
import * as fs from "node:fs"
import { Worker } from "node:worker_threads"
import { StorageFailure } from "../SessionLogError.ts"
import * as BlockingIo from "./BlockingIo.ts"
import * as IoCalls from "./IoCalls.ts"
import * as IoMessages from "./IoMessages.ts"

const source = `"use strict"
const { parentPort } = require("node:worker_threads")
const io = (${IoCalls.ioWith.toString()})(require("node:fs"), ${IoCalls.byDirectory})
const handedOf = ${IoMessages.handedOf.toString()}
const packed = ${IoMessages.packed.toString()}
const tags = ${JSON.stringify(IoMessages.tags)}
const writers = new Map()
parentPort.on("message", (message) => {
  if (message.kind === "commit") {
    const answer = packed(io.commit(message.upTo, message.fd, message.position), tags, writers.size)
    return parentPort.postMessage(answer, [answer.ids.buffer, answer.kinds.buffer, answer.found.buffer])
  }
  for (const [id, write] of message.fresh) writers.set(id, write)
  io.write(handedOf(message, writers, ${IoMessages.fields}))
  for (const id of message.forgotten) writers.delete(id)
})`

const groupSize = 16

/** Writers the thread holds by default at most: past that, the longest held is let go of (told again if it writes again). */
const maxWriters = 1024

/** Hands batches to the thread, and commits them; in place once the thread has stopped. */
export interface IoThread {
  readonly write: (batch: IoMessages.Batch) => void
  /**
   * Commits every batch handed over up to `upTo` (see `IoCalls.ioWith`); a batch the stopped thread
   * held is missing from the answer. The message is posted as this is called, not as the effect runs:
   * the effect waits for the answer (once: run it once), and fails, saying why, if the thread stops
   * before it answers. One commit at a time: post the next once this one is answered.
   */
  readonly postUnsafe: (upTo: number, fd: number, position: number) => Effect.Effect<IoMessages.Committed, StorageFailure>
  /** Whether the thread is running. */
  readonly threaded: () => boolean
}

/**
 * The calls the journal's I/O thread makes; `undefined`: Node's, on the thread. Tests provide ones
 * that fail: they are made in place, on the event loop's thread.
 *
 * @since 0.2.0
 * @category references
 */
export const ThreadCalls = Context.Reference<IoCalls.Calls | undefined>("effect-todo-write/file/IoThreadCalls", {
  defaultValue: () => undefined
})

/** Starts the thread: a worker running `source`, as `new Worker` (a test's may be one it stops). */
export type Spawn = (source: string) => Worker

/**
 * Whether a log whose batches make `blocking`'s calls has an I/O thread: with Node's own calls, or a
 * test's `ThreadCalls`; never where nothing may block.
 */
export const wanted = (blocking: BlockingIo.Blocking | undefined): Effect.Effect<boolean> =>
  Effect.map(ThreadCalls, (calls) => blocking !== undefined && (calls !== undefined || blocking === BlockingIo.node))

/** An I/O thread, started with the first batch and stopped with `scope`; given `ThreadCalls`, those made in place. */
export const make = (
  scope: Scope.Scope,
  spawn: Spawn = (code) => new Worker(code, { eval: true }),
  heldWriters = maxWriters
): Effect.Effect<IoThread> =>
  Effect.gen(function*() {
    const calls = yield* ThreadCalls
    let worker: Worker | undefined
    let stopped: string | undefined = calls === undefined ? undefined : "calls were given"
    // Once the thread has stopped, the same calls on this thread.
    const inPlace = IoCalls.ioWith(calls ?? fs, IoCalls.byDirectory)
    // Handed over in groups: each message wakes the thread with a system call, dear here.
    let group: Array<IoMessages.Batch> = []
    let pending: ((response: IoMessages.Committed | string) => void) | undefined
    // Why it stopped, until said once (the calls then block the event loop's thread, fsyncs included).
    let unsaid: string | undefined
    const stop = (why: string) => {
      if (stopped === undefined) unsaid = why
      stopped ??= why
      // Ended for good, if it was still running (an answer that can't be read): it writes nothing more.
      worker?.unref()
      void worker?.terminate()
      worker = undefined
      // Not sent yet: written here, in the order handed over, before any batch handed over after.
      inPlace.write(IoMessages.assembled(group.splice(0)))
      const resume = pending
      pending = undefined
      resume?.(why)
    }
    const start = (): Worker | undefined => {
      try {
        const started = spawn(source)
        // Referenced until its first answer, then only while a commit waits for one.
        started.on("message", (answer: IoMessages.Packed) => {
          started.unref()
          const resume = pending
          pending = undefined
          resume?.(IoMessages.unpacked(answer))
        })
        started.on("messageerror", (error) => stop(`the journal's I/O thread answered what can't be read: ${error.message}`))
        started.on("error", (error) => stop(`the journal's I/O thread failed: ${error.message}`))
        started.on("exit", (code) => stop(`the journal's I/O thread exited (code ${code})`))
        return started
      } catch (error) {
        stop(`the journal's I/O thread could not start: ${error instanceof Error ? error.message : String(error)}`)
        return undefined
      }
    }
    yield* Scope.addFinalizer(
      scope,
      Effect.suspend(() => {
        const running = worker
        stop("the log was closed")
        return running === undefined ? Effect.void : Effect.promise(() => running.terminate())
      })
    )
    // Writers the thread was told of, by id, oldest first; told of, or let go of, with the next group.
    const told = new Map<IoCalls.Write, number>()
    let nextWriter = 0
    const idOf = (write: IoCalls.Write, fresh: Array<readonly [number, IoCalls.Write]>, forgotten: Array<number>): number => {
      const known = told.get(write)
      if (known !== undefined) return known
      const id = nextWriter++
      told.set(write, id)
      fresh.push([id, write])
      for (const [oldest, old] of told) {
        if (told.size <= heldWriters) break
        told.delete(oldest)
        forgotten.push(old)
      }
      return id
    }
    const flush = () => {
      if (group.length === 0 || stopped !== undefined) return
      const thread = worker ??= start()
      if (thread === undefined) return
      const { layout, records } = IoMessages.laidOut(group)
      const fresh: Array<readonly [number, IoCalls.Write]> = []
      const forgotten: Array<number> = []
      group.forEach(({ write }, i) => {
        if (write !== undefined) layout[i * IoMessages.fields + 1] = idOf(write, fresh, forgotten)
      })
      group = []
      const message: IoMessages.Group = { kind: "write", records, layout, fresh, forgotten }
      thread.postMessage(message, [records.buffer, layout.buffer])
    }
    const write = (batch: IoMessages.Batch) => {
      if (stopped !== undefined) return inPlace.write(IoMessages.assembled([batch]))
      group.push(batch)
      if (group.length >= groupSize) flush()
    }
    const postUnsafe = (upTo: number, fd: number, position: number): Effect.Effect<IoMessages.Committed, StorageFailure> => {
      flush()
      const thread = worker
      if (thread === undefined) {
        // Those the stopped thread held are missing from the answer.
        const said = unsaid === undefined ? Effect.void : Effect.logWarning(`SessionLogFile: ${unsaid}; its calls are made in place`)
        unsaid = undefined
        const committed = { ...inPlace.commit(upTo, fd, position), writers: 0 }
        return Effect.as(said, committed)
      }
      // Posted now; answered once the thread answers (kept until asked for).
      let answered: IoMessages.Committed | string | undefined
      let waiting: ((response: IoMessages.Committed | string) => void) | undefined
      pending = (response) => {
        if (waiting === undefined) answered = response
        else waiting(response)
      }
      thread.ref()
      thread.postMessage({ kind: "commit", upTo, fd, position })
      return Effect.callback<IoMessages.Committed, StorageFailure>((resume) => {
        const done = (response: IoMessages.Committed | string) =>
          resume(typeof response === "string" ? Effect.fail(new StorageFailure({ detail: response })) : Effect.succeed(response))
        if (answered !== undefined) done(answered)
        else waiting = done
      })
    }
    return { write, postUnsafe, threaded: () => worker !== undefined }
  })
