/**
 * `todo-write show --follow`: a session's checklist, printed again on every change until
 * interrupted; redrawn in place on a terminal, one snapshot after another otherwise (or one JSON
 * line per change with `--json`). Another process's writes count: the store watches for them.
 */
import * as Console from "effect/Console"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stdio from "effect/Stdio"
import * as Stream from "effect/Stream"
import type * as SessionId from "../log/SessionId.ts"
import { ProjectionStore } from "../projection/ProjectionStore.ts"
import * as Checklist from "../todo/Checklist.ts"
import * as TodoOverview from "../todo/TodoOverview.ts"
import type * as Flags from "./Flags.ts"
import * as LiveStore from "./LiveStore.ts"
import * as SessionArgument from "./SessionArgument.ts"
import * as Store from "./Store.ts"

/** Home, then clear the screen: a redraw in place. */
const redraw = "\u001b[H\u001b[2J"

/** A session's overview as a person reads it. */
export const render = (session: SessionId.SessionId, overview: TodoOverview.Overview): string => {
  const header = overview.lastActivity === null
    ? `Session ${session}: no events yet`
    : `Session ${session}: ${overview.events} events, last at ${DateTime.formatIso(DateTime.makeUnsafe(overview.lastActivity))}`
  return `${header}\n${Checklist.render(overview.todos)}`
}

/** Prints the session's overview now and after every change, until interrupted. */
export const follow = (session: SessionId.SessionId, json: boolean) =>
  Effect.gen(function*() {
    const store = yield* ProjectionStore
    const terminal = !json && (yield* (yield* Stdio.Stdio).stdoutIsTerminal)
    yield* store.changes(TodoOverview.overview, session).pipe(
      Stream.runForEach((overview) =>
        json
          ? Console.log(JSON.stringify({ session, ...overview }))
          : Console.log(terminal ? redraw + render(session, overview) : `${render(session, overview)}\n`)
      )
    )
  })

/** The command's handler: validates the id and the flags, opens the live store, follows. */
export const run = (session: string, kind: Flags.Store, dir: string, json: boolean, history: Option.Option<unknown>) =>
  Option.isSome(history)
    ? Effect.fail(Store.userError("--follow prints the list as it changes; leave out --history, or --follow"))
    : Effect.flatMap(SessionArgument.decode(session), (id) => follow(id, json)).pipe(
      Effect.provide(LiveStore.layer(kind, dir))
    )
