/**
 * A probe, not a benchmark with a goal: the journal's rounds answered as one (as before stop 31)
 * against a round posted while another answers (`JournalRound.postAt`), in the same process, round
 * by round in turn, so that the machine's and the disk's drift hit both alike (separate processes
 * differed by more than the effect here). Needs the switch in `roundPolicy.patch` (`git apply
 * scratch/bench/experiments/roundPolicy.patch`; `git apply -R` after). Run with
 * `npx node --expose-gc scratch/bench/experiments/roundPolicy.ts [directory-root] [rounds] [sessions]`
 * (default: the working directory's disk, 110 rounds, 128 sessions): per policy, the medians over the
 * rounds after the 30th of the event loop's CPU, the other threads', wall and idle time per append,
 * and the mean round size.
 */
import { NodeServices } from "@effect/platform-node"
import { Effect, Layer, ManagedRuntime } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { join } from "node:path"
import { CheckedSessionLog } from "../../../src/log/CheckedSessionLog.ts"
import * as SessionLogFile from "../../../src/log/file/SessionLogFile.ts"
import * as SessionId from "../../../src/log/SessionId.ts"
import * as TodoEvents from "../../../src/todo/TodoEvents.ts"
import { perAppend, todoWritePayload as payload } from "../fixtures.ts"

const root = mkdtempSync(join(process.argv[2] ?? process.cwd(), "round-policy-"))
const rounds = Number(process.argv[3] ?? 110)
const sessions = Number(process.argv[4] ?? 128)
const perSession = 10
const ids = Array.from({ length: sessions }, (_, i) => SessionId.decodeSync(`s${i}`))
const probe = globalThis as { __roundPolicy?: number; __rounds?: Array<number>; gc?: () => void }

const runtime = ManagedRuntime.make(
  TodoEvents.layerChecked.pipe(
    Layer.provide(SessionLogFile.layerFileSystem({ directory: join(root, "log"), journal: true })),
    Layer.provide(NodeServices.layer)
  )
)
const round = Effect.flatMap(CheckedSessionLog, (log) =>
  Effect.suspend(() => {
    probe.__rounds = []
    return perAppend(
      sessions * perSession,
      Effect.forEach(ids, (id) =>
        Effect.gen(function*() {
          for (let i = 0; i < perSession; i++) yield* log.append(id, "todo/write", payload)
        }), { concurrency: "unbounded", discard: true })
    )
  }).pipe(Effect.map((measured) => {
    const sizes = probe.__rounds ?? []
    return { ...measured, round: sizes.reduce((a, b) => a + b, 0) / Math.max(1, sizes.length) }
  })))
try {
  await runtime.runPromise(Effect.flatMap(CheckedSessionLog, (log) => Effect.forEach(ids, (id) => log.append(id, "turn/start", {}), { concurrency: "unbounded" })))
  const byPolicy: Array<Array<Effect.Success<typeof round>>> = [[], []]
  for (let r = 0; r < rounds; r++) {
    probe.__roundPolicy = r % 2
    probe.gc?.()
    const measured = await runtime.runPromise(round)
    if (r >= 30) byPolicy[r % 2]!.push(measured)
  }
  if (probe.__rounds === undefined || probe.__rounds.length === 0) throw new Error("no rounds seen: apply roundPolicy.patch first")
  const median = (xs: Array<number>) => xs.sort((a, b) => a - b)[xs.length >> 1]!
  byPolicy.forEach((ms, policy) =>
    console.log(
      `${policy === 0 ? "one round" : "posted   "}: ${median(ms.map((m) => m.cpu)).toFixed(1)} µs CPU, other threads ${
        median(ms.map((m) => m.others)).toFixed(1)
      }, wall ${median(ms.map((m) => m.wall)).toFixed(1)}, idle ${median(ms.map((m) => m.idle)).toFixed(1)} per append; rounds of ${
        median(ms.map((m) => m.round)).toFixed(1)
      } batches (${ms.length} rounds)`
    )
  )
} finally {
  await runtime.dispose()
  rmSync(root, { recursive: true, force: true })
}
