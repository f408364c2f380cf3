/**
 * `todo-write verify`: loads sessions through every check and invariant and reports each as ok,
 * repaired or bad. Session files are read line by line (a torn tail is cut when no one holds the
 * session); in PostgreSQL, each session is read through the checked log.
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Path from "effect/Path"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import { CheckedSessionLog } from "../log/CheckedSessionLog.ts"
import * as SessionLogFile from "../log/file/SessionLogFile.ts"
import type * as SessionId from "../log/SessionId.ts"
import * as TodoEvents from "../todo/TodoEvents.ts"
import type * as Flags from "./Flags.ts"
import * as Output from "./Output.ts"
import * as SessionArgument from "./SessionArgument.ts"
import * as Store from "./Store.ts"

/** One session's row of the report. */
interface Outcome {
  readonly status: "ok" | "repaired" | "BAD" | "MISSING"
  readonly detail: string
}

const outcome = (status: Outcome["status"], detail: string): Outcome => ({ status, detail: Output.oneLine(detail) })

const isBad = (outcome: Outcome) => outcome.status === "BAD" || outcome.status === "MISSING"

/** A session file, line by line. */
const verifyFile = (dir: string, id: SessionId.SessionId) =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const found = yield* SessionLogFile.verify({ directory: dir }, id, TodoEvents.invariants)
    if (found === undefined) return outcome("MISSING", `no file ${SessionLogFile.fileOf(path, dir, id)}`)
    if (found.violation !== undefined) {
      const { line, reason } = found.violation
      return outcome(
        "BAD",
        `${found.path}, line ${line}: invariant "${reason.rule}" violated at seq ${reason.seq}: ${reason.detail}`
      )
    }
    const events = Output.count(found.events, "event")
    if (found.tornTailBytes === 0) return outcome("ok", events)
    const repaired = yield* Effect.result(SessionLogFile.repair({ directory: dir }, id))
    if (Result.isSuccess(repaired)) {
      return outcome("repaired", `${events}; cut a torn tail of ${found.tornTailBytes} bytes (a write that was never acknowledged)`)
    }
    const why = repaired.failure.reason._tag === "Locked" ? "the session is in use" : repaired.failure.message
    return outcome("ok", `${events}; a torn tail of ${found.tornTailBytes} bytes was left: ${why}`)
  }).pipe(Effect.catch((error) => Effect.succeed(outcome("BAD", error.message))))

/** A session of any store, read whole through the checked log. */
const verifyLog = (sessions: ReadonlyArray<SessionId.SessionId>, id: SessionId.SessionId, where: string) =>
  Effect.gen(function*() {
    if (!sessions.includes(id)) return outcome("MISSING", `no session in ${where}`)
    const events = yield* Stream.runCount((yield* CheckedSessionLog).read(id))
    return outcome("ok", Output.count(events, "event"))
  }).pipe(Effect.catch((error) => Effect.succeed(outcome("BAD", error.message))))

/** The command's input, as `Cli.ts` parses it. */
export interface Input {
  readonly dir: string
  readonly store: Flags.Store
  readonly sessions: ReadonlyArray<string>
}

/** Verifies the sessions named, or all in the store; fails (exit 1) if any is bad or missing. */
export const run = ({ dir, store, sessions }: Input) =>
  Effect.gen(function*() {
    const where = yield* Store.describe(store, dir)
    yield* Store.reported(
      Effect.gen(function*() {
        const all = yield* (yield* CheckedSessionLog).sessions
        const ids = sessions.length > 0 ? yield* Effect.forEach(sessions, SessionArgument.decode) : all
        if (ids.length === 0) return yield* Console.log(`no sessions in ${where}`)
        const width = Math.max(...ids.map((id) => id.length))
        let bad = 0
        for (const id of ids) {
          const found = store === "file" ? yield* verifyFile(dir, id) : yield* verifyLog(all, id, where)
          if (isBad(found)) bad++
          yield* Console.log(`${id.padEnd(width)}  ${found.status.padEnd(8)}  ${found.detail}`)
        }
        if (bad > 0) {
          return yield* Store.userError(`${bad} of ${Output.count(ids.length, "session")} failed verification`)
        }
      }).pipe(Effect.provide(Store.existing(store, dir))),
      `verifying ${where}`
    )
  })
