/**
 * A probe, not a benchmark with a goal: one agent's lone appends (one every 2 ms by default, as an agent's come
 * apart) through `SessionLogFile` on this disk, their p50 latency alone and while another process
 * follows the session (a log with `watch: true`, subscribed, as `todo-write follow` and the web view
 * are), four rounds each in turn; and the follower's CPU per append, per thread, from
 * `/proc/<pid>/task` (Linux). Run with `npx node scratch/bench/followedAppend.ts [journal|file]
 * [appends per round] [milliseconds between appends, default 2]`.
 */
import { NodeServices } from "@effect/platform-node"
import { Effect, Layer, ManagedRuntime, Stream } from "effect"
import { spawn } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { join } from "node:path"
import * as SessionLogFile from "../../src/log/file/SessionLogFile.ts"
import * as SessionId from "../../src/log/SessionId.ts"
import * as SessionLog from "../../src/log/SessionLog.ts"
import { todoWritePayload as payload } from "./fixtures.ts"

const id = SessionId.decodeSync("followed")

if (process.argv[2] === "follower") {
  const runtime = ManagedRuntime.make(SessionLogFile.layerFileSystem({ directory: process.argv[3]!, watch: true }).pipe(Layer.provide(NodeServices.layer)))
  process.on("SIGTERM", () => process.exit(0))
  await runtime.runPromise(
    Effect.scoped(Effect.flatMap(SessionLog.SessionLog, (log) => Effect.flatMap(log.subscribe, (committed) => Stream.runDrain(committed))))
  )
} else {
  const journal = process.argv[2] !== "file"
  const perRound = Number(process.argv[3] ?? 200)
  const spacing = Number(process.argv[4] ?? 2)
  const root = mkdtempSync(join(process.cwd(), ".followed-"))
  const runtime = ManagedRuntime.make(SessionLogFile.layerFileSystem({ directory: root, journal }).pipe(Layer.provide(NodeServices.layer)))
  const p50 = (count: number) =>
    runtime.runPromise(Effect.flatMap(SessionLog.SessionLog, (log) =>
      Effect.gen(function*() {
        const times: Array<number> = []
        for (let i = 0; i < count; i++) {
          yield* Effect.sleep(`${spacing} millis`)
          const t0 = process.hrtime.bigint()
          yield* log.append(id, "todo/write", payload)
          times.push(Number(process.hrtime.bigint() - t0) / 1000)
        }
        return times.sort((a, b) => a - b)[times.length >> 1]!
      })))
  /** CPU time (ms) of each thread of process `pid`, by name and id. */
  const threads = (pid: number) =>
    new Map(readdirSync(`/proc/${pid}/task`).map((task) => {
      const stat = readFileSync(`/proc/${pid}/task/${task}/stat`, "utf8")
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      return [`${stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"))} ${task}`, (Number(fields[11]) + Number(fields[12])) * 10] as const
    }))
  try {
    await p50(300)
    const alone: Array<string> = []
    const followed: Array<string> = []
    for (let round = 0; round < 4; round++) {
      alone.push((await p50(perRound)).toFixed(0))
      const follower = spawn(process.execPath, [process.argv[1]!, "follower", root], { stdio: "ignore" })
      // Started, subscribed and past its first look at the files.
      await new Promise((resolve) => setTimeout(resolve, 5000))
      const before = threads(follower.pid!)
      followed.push((await p50(perRound)).toFixed(0))
      const after = threads(follower.pid!)
      let total = 0
      const busy: Array<string> = []
      for (const [thread, ms] of after) {
        const spent = ms - (before.get(thread) ?? 0)
        total += spent
        if (spent > 0) busy.push(`${thread.split(" ")[0]} ${(spent * 1000 / perRound).toFixed(0)}`)
      }
      console.log(`follower: ${(total * 1000 / perRound).toFixed(0)} µs of CPU per append (${busy.join(", ")})`)
      follower.kill("SIGTERM")
      await new Promise((resolve) => follower.once("exit", resolve))
    }
    console.log(`${journal ? "journal" : "fsync per file"}: p50 per append alone ${alone.join(", ")} µs; followed ${followed.join(", ")} µs`)
  } finally {
    await runtime.dispose()
    rmSync(root, { recursive: true, force: true })
  }
}
