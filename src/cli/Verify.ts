/**
 * `todo-write verify`: loads session files through every check and invariant, line by line.
 */
import { Console, Effect, Path } from "effect"
import { Argument, Command } from "effect/cli"
import { CheckedSessionLog } from "../log/CheckedSessionLog.ts"
import * as SessionLogFile from "../log/file/SessionLogFile.ts"
import type * as SessionId from "../log/SessionId.ts"
import * as TodoEvents from "../todo/TodoEvents.ts"
import * as SessionArgument from "./SessionArgument.ts"
import * as Store from "./Store.ts"

/** One session's line of the report, and whether it failed. */
const verifySession = (dir: string, id: SessionId.SessionId) =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const found = yield* SessionLogFile.verify({ directory: dir }, id, TodoEvents.invariants)
    if (found === undefined) return { bad: true, line: `MISSING  no file ${SessionLogFile.fileOf(path, dir, id)}` }
    if (found.violation !== undefined) {
      const { line, reason } = found.violation
      return {
        bad: true,
        line: `BAD      ${found.path}, line ${line}: invariant "${reason.rule}" violated at seq ${reason.seq}: ${reason.detail}`
      }
    }
    if (found.tornTailBytes === 0) return { bad: false, line: `ok       ${found.events} events` }
    const repaired = yield* Effect.exit(SessionLogFile.repair({ directory: dir }, id))
    return {
      bad: false,
      line: repaired._tag === "Success"
        ? `repaired ${found.events} events; cut a torn tail of ${found.tornTailBytes} bytes (a write that was never acknowledged)`
        : `ok       ${found.events} events; a torn tail of ${found.tornTailBytes} bytes was left: the session is in use`
    }
  }).pipe(Effect.catch((error) => Effect.succeed({ bad: true, line: `BAD      ${error.message}` })))

export const command = Command.make("verify", {
  dir: Store.directory,
  sessions: Argument.String("session").pipe(
    Argument.withDescription("Sessions to check (default: all in the directory)"),
    Argument.variadic()
  )
}, ({ dir, sessions }) =>
  Effect.gen(function*() {
    const ids = sessions.length > 0
      ? yield* Effect.forEach(sessions, SessionArgument.decode)
      : yield* (yield* CheckedSessionLog).sessions
    let bad = 0
    for (const id of ids) {
      const outcome = yield* verifySession(dir, id)
      if (outcome.bad) bad++
      yield* Console.log(`${id}  ${outcome.line}`)
    }
    if (ids.length === 0) yield* Console.log(`no sessions in ${dir}`)
    if (bad > 0) return yield* Store.userError(`${bad} of ${ids.length} sessions failed verification`)
  }).pipe(Effect.provide(Store.fileLog(dir)))).pipe(
    Command.withDescription("Load sessions, run every invariant, and report each as ok, repaired or bad (exit 1)")
  )
