/**
 * `todo-write show --tree`: a session's plan tree, its list and each sub-agent's below it, as
 * indented checklists or JSON.
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import { CheckedSessionLog } from "../log/CheckedSessionLog.ts"
import type * as SessionId from "../log/SessionId.ts"
import * as ProjectionStore from "../projection/ProjectionStore.ts"
import * as Checklist from "../todo/Checklist.ts"
import * as PlanTree from "../todo/PlanTree.ts"
import * as Store from "./Store.ts"

/** The tree as indented checklists: each sub-agent under its parent, with its one-line summary. */
export const render = (tree: PlanTree.Node): string => {
  const lines: Array<string> = [`Session ${tree.session}`, Checklist.render(tree.todos)]
  const walk = (node: PlanTree.Node, indent: string) => {
    for (const child of node.children) {
      lines.push("", `${indent}-- ${PlanTree.summary(child)}`)
      lines.push(...Checklist.render(child.todos).split("\n").map((line) => `${indent}   ${line}`))
      walk(child, `${indent}   `)
    }
  }
  walk(tree, "")
  return lines.join("\n")
}

/** Prints a session's plan tree; a tree past the bounds, or one that loops, is a user error. */
export const print = (id: SessionId.SessionId, json: boolean) =>
  Effect.gen(function*() {
    const log = yield* CheckedSessionLog
    if (!(yield* log.sessions).includes(id)) return yield* Store.userError(`no session ${id}`)
    const tree = yield* PlanTree.get(id).pipe(
      Effect.catchTag("SubagentError", (error) => Store.userError(error.message))
    )
    yield* Console.log(json ? JSON.stringify(tree, null, 2) : render(tree))
  }).pipe(Effect.provide(ProjectionStore.layer))
