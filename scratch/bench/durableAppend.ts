/**
 * 4. Durable append throughput: 1, 16 and 128 sessions appending `todo/write` events concurrently
 * (each session one append at a time, as an agent does), every append acknowledged only after its
 * fsync, against appending and fsyncing each event alone, one after another.
 */
import { NodeServices } from "@effect/platform-node"
import { Effect, Layer, ManagedRuntime } from "effect"
import { closeSync, fsyncSync, mkdirSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs"
import { join } from "node:path"
import * as SessionFile from "../../src/log/file/Format.ts"
import * as SessionId from "../../src/log/SessionId.ts"
import * as SessionLogFile from "../../src/log/file/SessionLogFile.ts"
import { type Comparison, median, percentile } from "./harness.ts"
import * as TodoEvents from "../../src/todo/TodoEvents.ts"
import { CheckedSessionLog } from "../../src/log/CheckedSessionLog.ts"

const payload = {
  todos: Array.from({ length: 10 }, (_, i) => ({ content: `Step ${i}: change the parser`, status: i === 0 ? "in_progress" : "pending" }))
}

export const run = async (): Promise<ReadonlyArray<Comparison>> => {
  // On the disk the sessions would live on, not a tmpfs: fsync must cost what it costs.
  const root = mkdtempSync(join(process.cwd(), ".bench-"))
  const results: Array<Comparison> = []
  try {
    for (const [sessions, journal] of [[1, false], [1, true], [16, false], [16, true], [128, false], [128, true]] as const) {
      const perSession = Math.max(10, Math.floor(600 / sessions))
      const total = sessions * perSession
      const directory = join(root, `target-${sessions}-${journal}`)
      const runtime = ManagedRuntime.make(
        TodoEvents.layerChecked.pipe(
          Layer.provide(SessionLogFile.layerFileSystem({ directory, journal })),
          Layer.provide(NodeServices.layer)
        )
      )
      const ids = Array.from({ length: sessions }, (_, i) => SessionId.decodeSync(`s${i}`))
      const latencies: Array<number> = []
      const target = Effect.gen(function*() {
        const log = yield* CheckedSessionLog
        yield* Effect.forEach(ids, (id) => log.append(id, "turn/start", {}), { concurrency: "unbounded", discard: true })
        const start = process.hrtime.bigint()
        yield* Effect.forEach(ids, (id) =>
          Effect.gen(function*() {
            for (let i = 0; i < perSession; i++) {
              const t0 = process.hrtime.bigint()
              yield* log.append(id, "todo/write", payload)
              latencies.push(Number(process.hrtime.bigint() - t0) / 1000)
            }
          }), { concurrency: "unbounded", discard: true })
        return Number(process.hrtime.bigint() - start) / 1000 / total
      })
      const targetPerAppend = await runtime.runPromise(target)
      await runtime.dispose()

      // The baseline: each event appended and fsynced alone, in turn.
      const baseDirectory = join(root, `baseline-${sessions}-${journal}`)
      mkdirSync(baseDirectory)
      const fds = ids.map((id) => openSync(join(baseDirectory, SessionFile.fileName(id)), "a"))
      const json = JSON.stringify(payload)
      const baseStart = process.hrtime.bigint()
      for (let i = 0; i < total; i++) {
        const fd = fds[i % sessions]!
        writeSync(fd, SessionFile.entryLine("todo/write", i, 0, json))
        fsyncSync(fd)
      }
      const baselinePerAppend = Number(process.hrtime.bigint() - baseStart) / 1000 / total
      fds.forEach(closeSync)

      const speedup = baselinePerAppend / targetPerAppend
      results.push({
        name: `durable append, ${sessions} session${sessions === 1 ? "" : "s"}, ${journal ? "journal" : "fsync per file"}`,
        target: targetPerAppend,
        baseline: baselinePerAppend,
        ratio: targetPerAppend / baselinePerAppend,
        goal: sessions === 128 && journal ? { max: 0.1 } : undefined,
        note: `${speedup.toFixed(1)}x throughput; latency p50 ${(median(latencies) / 1000).toFixed(2)} ms, p99 ${
          (percentile(latencies, 99) / 1000).toFixed(2)
        } ms`
      })
    }
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
  return results
}
