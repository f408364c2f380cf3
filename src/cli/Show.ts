/**
 * `todo-write show`: a session's current list, and its history when asked, as a checklist or JSON.
 */
import * as Console from "effect/Console"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { CheckedSessionLog } from "../log/CheckedSessionLog.ts"
import type * as SessionId from "../log/SessionId.ts"
import * as Checklist from "../todo/Checklist.ts"
import * as TodoHistory from "../todo/TodoHistory.ts"
import type * as Flags from "./Flags.ts"
import * as Output from "./Output.ts"
import * as SessionArgument from "./SessionArgument.ts"
import * as Store from "./Store.ts"

const timeOf = (time: number | undefined) => time === undefined ? "never" : DateTime.formatIso(DateTime.makeUnsafe(time))

/**
 * Prints a session's current list, and its history when asked, as a checklist or as JSON. `where`
 * says where the log is, for the message when the session isn't there.
 */
export const printSession = (
  id: SessionId.SessionId,
  history: Option.Option<TodoHistory.By>,
  json: boolean,
  where: string
) =>
  Effect.gen(function*() {
    const log = yield* CheckedSessionLog
    if (!(yield* log.sessions).includes(id)) return yield* Store.userError(`no session ${id} in ${where}`)
    const replay = yield* TodoHistory.replay(log.read(id), Option.getOrUndefined(history))
    if (json) {
      const out = { session: id, events: replay.events, todos: replay.todos }
      return yield* Console.log(JSON.stringify(Option.isSome(history) ? { ...out, history: replay.history } : out, null, 2))
    }
    const lines: Array<string> = []
    for (const [i, snapshot] of replay.history.entries()) {
      const label = Option.getOrUndefined(history) === "turns"
        ? `Turn ${i + 1} ended (${snapshot.reason ?? "?"}) at ${timeOf(snapshot.time)}`
        : `Write at seq ${snapshot.seq}, ${timeOf(snapshot.time)}`
      lines.push(`-- ${label}`, Checklist.render(snapshot.todos), "")
    }
    lines.push(
      `Session ${id}: ${Output.count(replay.events, "event")}, last at ${timeOf(replay.lastTime)}`,
      Checklist.render(replay.todos)
    )
    yield* Console.log(lines.join("\n"))
  })

/** The command's input, as `Cli.ts` parses it. */
export interface Input {
  readonly dir: string
  readonly store: Flags.Store
  readonly session: string
  readonly history: Option.Option<TodoHistory.By>
  readonly json: boolean
  readonly tree: boolean
  readonly follow: boolean
}

/**
 * Prints the session once (its list, history or plan tree), or follows it; the tree's and the live
 * view's modules (`Tree.ts`, `Follow.ts`) are imported only for them.
 */
export const run = ({ dir, store, session, history, json, tree, follow }: Input) =>
  follow
    ? Effect.flatMap(Effect.promise(() => import("./Follow.ts")), (Follow) => Follow.run(session, store, dir, json, history))
    : Effect.gen(function*() {
      const id = yield* SessionArgument.decode(session)
      const where = yield* Store.describe(store, dir)
      const print = tree
        ? Effect.flatMap(Effect.promise(() => import("./Tree.ts")), (Tree) => Tree.print(id, json))
        : printSession(id, history, json, where)
      yield* Store.reported(print.pipe(Effect.provide(Store.existing(store, dir))), `session ${id} in ${where}`)
    })
