/**
 * A probe: how the latency of a lone checked append changes as V8 warms up, in the first appends of a
 * process (which is what `durableAppend`'s latency rows measure). On a tmpfs (`/dev/shm`, fsync is
 * free), p50 per 100 appends, in rounds of 25 as the benchmark makes them; beside each append, the
 * same work as plain synchronous calls (the invariant, the snapshot and JSON, both lstats, the line,
 * write + fsync), with no Effect at all. `npx node --expose-gc scratch/bench/warmUp.ts [rounds] [journal]`.
 */
import { NodeServices } from "@effect/platform-node"
import { Effect, Layer, ManagedRuntime } from "effect"
import { closeSync, fsyncSync, lstatSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs"
import { join } from "node:path"
import { CheckedSessionLog } from "../../src/log/CheckedSessionLog.ts"
import * as Format from "../../src/log/file/Format.ts"
import * as SessionLogFile from "../../src/log/file/SessionLogFile.ts"
import * as Json from "../../src/log/internal/json.ts"
import * as SessionId from "../../src/log/SessionId.ts"
import * as TodoEvents from "../../src/todo/TodoEvents.ts"
import { median } from "./harness.ts"
import { todoWritePayload as payload } from "./fixtures.ts"

const rounds = Number(process.argv[2] ?? 60)
const journal = process.argv[3] === "journal"
const root = mkdtempSync("/dev/shm/warm-up-")
const id = SessionId.decodeSync("lone")
const runtime = ManagedRuntime.make(
  TodoEvents.layerChecked.pipe(
    Layer.provide(SessionLogFile.layerFileSystem({ directory: join(root, "log"), journal })),
    Layer.provide(NodeServices.layer)
  )
)
const file = join(root, "plain.jsonl")
const lock = join(root, "plain.lock")
const fd = openSync(file, "a")
closeSync(openSync(lock, "a"))
let seq = 0
const plain = () => {
  if (TodoEvents.writeInvariant.check(payload) !== undefined) return
  const encoded = Json.encode("todo/write", payload, 1 << 22)
  if ("problem" in encoded) return
  lstatSync(lock, { throwIfNoEntry: false })
  writeSync(fd, Format.encodeLines(Format.entryLine("todo/write", seq++, Date.now(), encoded.json)))
  fsyncSync(fd)
  lstatSync(file, { throwIfNoEntry: false })
}
const logged: Array<number> = []
const plainTimes: Array<number> = []
const since = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1000
const round = Effect.gen(function*() {
  const log = yield* CheckedSessionLog
  for (let i = 0; i < 25; i++) {
    let t0 = process.hrtime.bigint()
    yield* log.append(id, "todo/write", payload)
    logged.push(since(t0))
    t0 = process.hrtime.bigint()
    plain()
    plainTimes.push(since(t0))
  }
})
try {
  await runtime.runPromise(Effect.flatMap(CheckedSessionLog, (log) => log.append(id, "turn/start", {})))
  for (let r = 0; r < rounds; r++) await runtime.runPromise(round)
} finally {
  await runtime.dispose()
  closeSync(fd)
  rmSync(root, { recursive: true, force: true })
}
const blocks = (times: ReadonlyArray<number>) => {
  const out: Array<string> = []
  for (let b = 0; b < times.length; b += 100) out.push(median(times.slice(b, b + 100)).toFixed(0))
  return out.join(" ")
}
console.log(`p50 per 100 appends, µs (${journal ? "journal" : "fsync per file"})\nlog:   ${blocks(logged)}\nplain: ${blocks(plainTimes)}`)
