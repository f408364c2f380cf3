/**
 * `todo-write show`: a session's current list, and its history when asked, as a checklist or JSON.
 */
import { Console, DateTime, Effect, Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { CheckedSessionLog } from "../log/CheckedSessionLog.ts"
import type * as SessionId from "../log/SessionId.ts"
import * as Checklist from "../todo/Checklist.ts"
import * as TodoHistory from "../todo/TodoHistory.ts"
import * as Follow from "./Follow.ts"
import * as Output from "./Output.ts"
import * as SessionArgument from "./SessionArgument.ts"
import * as Store from "./Store.ts"
import * as Tree from "./Tree.ts"

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

export const command = Command.make("show", {
  dir: Store.directory,
  store: Store.store,
  session: Argument.String("session").pipe(Argument.withDescription("The session id")),
  history: Flag.Literals("history", ["turns", "writes"]).pipe(
    Flag.withDescription("Also show the list as it stood at the end of each turn, or after each write"),
    Flag.optional
  ),
  json: Flag.Boolean("json").pipe(Flag.withDescription("Print JSON for machines"), Flag.withDefault(false)),
  tree: Flag.Boolean("tree").pipe(
    Flag.withDescription("Show the plan tree: the list, then each sub-agent's list and status, recursively"),
    Flag.withDefault(false)
  ),
  follow: Flag.Boolean("follow").pipe(
    Flag.withDescription("Keep printing the list on every change, another process's included, until interrupted"),
    Flag.withDefault(false)
  )
}, ({ dir, store, session, history, json, tree, follow }) =>
  follow
    ? Follow.run(session, store, dir, json, history)
    : Effect.gen(function*() {
      const id = yield* SessionArgument.decode(session)
      const where = yield* Store.describe(store, dir)
      yield* Store.reported(
        (tree ? Tree.print(id, json) : printSession(id, history, json, where)).pipe(Effect.provide(Store.existing(store, dir))),
        `session ${id} in ${where}`
      )
    })).pipe(Command.withDescription("Replay a session and print its current todo list as a checklist"))
