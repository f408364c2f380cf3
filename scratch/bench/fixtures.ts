/**
 * Session files for the benchmarks, written directly in the session file format (an append with
 * fsync per event would take minutes for a long session and measure nothing of interest here).
 */
import { Effect, Result } from "effect"
import { mkdirSync, openSync, writeSync, closeSync } from "node:fs"
import { join } from "node:path"
import { performance } from "node:perf_hooks"
import * as SessionFile from "../../src/log/file/Format.ts"
import * as TodoPolicy from "../../src/todo/TodoPolicy.ts"
import * as TodoShape from "../../src/todo/TodoShape.ts"
import * as TodoValidation from "../../src/todo/TodoValidation.ts"

/** The payload the append benchmarks and probes store: a 10-item list, one item in progress. */
export const todoWritePayload = {
  todos: Array.from({ length: 10 }, (_, i) => ({ content: `Step ${i}: change the parser`, status: i === 0 ? "in_progress" : "pending" }))
}

/**
 * The same list as `todo_write` appends it: validated, frozen and marked (`TodoShape.markValidated`),
 * so the log neither copies it nor checks it against the stored shape again. The benchmarks append
 * `todoWritePayload`, a plain object, as a caller with a payload of its own would.
 */
export const todoWriteToolPayload = TodoShape.markValidated({
  todos: Result.getOrThrow(
    TodoValidation.validate(Effect.runSync(TodoPolicy.make({ allowParallelInProgress: false })), todoWritePayload)
  )
})

/** What a round of appends cost per append, in µs: the event loop's thread's CPU, the other threads', wall and idle time. */
export interface PerAppend {
  readonly cpu: number
  /** The process's other threads: the journal's I/O thread, GC helpers, libuv's pool. */
  readonly others: number
  readonly wall: number
  /** The event loop waiting. */
  readonly idle: number
}

/** Runs `appending` (`appends` appends) and answers what it cost per append. */
export const perAppend = <A, E, R>(appends: number, appending: Effect.Effect<A, E, R>): Effect.Effect<PerAppend, E, R> =>
  Effect.suspend(() => {
    const c0 = process.threadCpuUsage()
    const p0 = process.cpuUsage()
    const e0 = performance.eventLoopUtilization()
    const t0 = process.hrtime.bigint()
    return Effect.map(appending, () => {
      const c = process.threadCpuUsage(c0)
      const p = process.cpuUsage(p0)
      const e = performance.eventLoopUtilization(e0)
      return {
        cpu: (c.user + c.system) / appends,
        others: (p.user + p.system - c.user - c.system) / appends,
        wall: Number(process.hrtime.bigint() - t0) / 1000 / appends,
        idle: e.idle * 1000 / appends
      }
    })
  })

/** A realistic mix: turns, todo/write of 5–30 items, tool events this package doesn't know. */
export const eventAt = (seq: number): { readonly type: string; readonly json: string } => {
  const k = seq % 10
  if (k === 0) return { type: "turn/start", json: "{}" }
  if (k === 9) return { type: "turn/end", json: `{"reason":"completed"}` }
  if (k % 3 === 0) {
    return { type: "tool/bash", json: JSON.stringify({ command: `ls -la src/${seq}`, exitCode: 0, output: "x".repeat(80) }) }
  }
  const items = 5 + (seq % 26)
  const todos = Array.from({ length: items }, (_, i) => ({
    content: `Step ${i} of task ${seq >> 4}: update the module and its tests`,
    status: i < k ? "completed" : i === k ? "in_progress" : "pending"
  }))
  return { type: "todo/write", json: JSON.stringify({ todos }) }
}

/** Writes `events` events for `session` into `directory`; answers the file's path. */
export const writeSession = (directory: string, session: string, events: number): string => {
  mkdirSync(directory, { recursive: true })
  const path = join(directory, SessionFile.fileName(session))
  const fd = openSync(path, "w")
  writeSync(fd, SessionFile.headerLine(session, 0))
  let text = ""
  for (let seq = 0; seq < events; seq++) {
    const { type, json } = eventAt(seq)
    text += SessionFile.entryLine(type, seq, 1_796_000_000_000 + seq, json)
    if (text.length > 1 << 20) {
      writeSync(fd, text)
      text = ""
    }
  }
  writeSync(fd, text)
  closeSync(fd)
  return path
}
