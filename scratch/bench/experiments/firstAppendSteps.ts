/**
 * A probe: where a lone append's time goes when it is the first after other work (a bare
 * write+fsync round and a SQLite round, as in `durableAppend`), against the appends that follow it.
 * Each blocking call is timed through a recording `BlockingIo`; the gaps between them are the
 * JavaScript. `npx node scratch/bench/experiments/firstAppendSteps.ts [journal]`.
 */
import { NodeServices } from "@effect/platform-node"
import { Effect, Layer, ManagedRuntime } from "effect"
import { fsyncSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs"
import { join } from "node:path"
import { DatabaseSync } from "node:sqlite"
import { CheckedSessionLog } from "../../../src/log/CheckedSessionLog.ts"
import * as BlockingIo from "../../../src/log/file/BlockingIo.ts"
import * as SessionFile from "../../../src/log/file/Format.ts"
import * as SessionLogFile from "../../../src/log/file/SessionLogFile.ts"
import * as SessionId from "../../../src/log/SessionId.ts"
import * as TodoEvents from "../../../src/todo/TodoEvents.ts"
import { todoWritePayload as payload } from "../fixtures.ts"

const journal = process.argv[2] === "journal"
const json = JSON.stringify(payload)
const root = mkdtempSync(join(process.cwd(), ".probe-"))
const now = () => Number(process.hrtime.bigint()) / 1000
let marks: Array<[string, number, number]> = []
const timed = <A extends ReadonlyArray<unknown>, R>(name: string, f: (...args: A) => R) => (...args: A): R => {
  const t0 = now()
  const r = f(...args)
  marks.push([name, t0, now()])
  return r
}
const n = BlockingIo.node
const blocking: BlockingIo.Blocking = {
  write: timed("write", n.write), writeAt: timed("writeAt", n.writeAt), sync: timed("sync", n.sync),
  datasync: timed("datasync", n.datasync), truncate: n.truncate, lstat: timed("lstat", n.lstat), stillAt: timed("stillAt", n.stillAt)
}
const runtime = ManagedRuntime.make(
  TodoEvents.layerChecked.pipe(
    Layer.provide(SessionLogFile.layerFileSystem({ directory: join(root, "log"), journal })),
    Layer.provide(Layer.merge(NodeServices.layer, Layer.succeed(BlockingIo.BlockingIo, blocking)))
  )
)
const id = SessionId.decodeSync("lone")
const fd = openSync(join(root, "bare.jsonl"), "a")
const db = new DatabaseSync(join(root, "lite.sqlite"))
db.exec("PRAGMA journal_mode=WAL"); db.exec("PRAGMA synchronous=FULL")
db.exec("CREATE TABLE events (session TEXT, seq INTEGER, type TEXT, time INTEGER, data TEXT, PRIMARY KEY (session, seq))")
const insert = db.prepare("INSERT INTO events VALUES (?, ?, ?, ?, ?)")
let seq = 0
type Steps = Array<[string, number]>
const firsts: Array<Steps> = []
const rests: Array<Steps> = []
const perRound = 25
const targetRound = (record: boolean) => Effect.gen(function*() {
  const log = yield* CheckedSessionLog
  for (let i = 0; i < perRound; i++) {
    marks = []
    const t0 = now()
    yield* log.append(id, "todo/write", payload)
    const t1 = now()
    if (!record) continue
    const steps: Steps = []
    let at = t0
    for (const [name, s, e] of marks) {
      steps.push(["js", s - at], [name, e - s])
      at = e
    }
    steps.push(["js", t1 - at], ["total", t1 - t0])
    ;(i === 0 ? firsts : rests).push(steps)
  }
})
const bare = () => { for (let i = 0; i < perRound; i++) { writeSync(fd, SessionFile.entryLine("todo/write", seq++, 0, json)); fsyncSync(fd) } }
const lite = () => { for (let i = 0; i < perRound; i++) insert.run("lone", seq++, "todo/write", 0, json) }
const median = (xs: Array<number>) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!
try {
  for (let round = 0; round < 200; round++) {
    await runtime.runPromise(targetRound(round >= 100))
    if (round % 2 === 0) { bare(); lite() } else { lite(); bare() }
  }
  for (const [label, rows] of [["first", firsts], ["rest", rests]] as const) {
    const width = rows[0]!.length
    const cells: Array<string> = []
    for (let k = 0; k < width; k++) cells.push(`${rows[0]![k]![0]} ${median(rows.filter((r) => r.length === width).map((r) => r[k]![1])).toFixed(0)}`)
    console.log(`${label} (${rows.length}): ${cells.join(" | ")}`)
  }
} finally {
  await runtime.dispose()
  rmSync(root, { recursive: true, force: true })
}
