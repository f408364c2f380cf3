/**
 * The plan tree: a session's current list and, recursively, each of its sub-agents' lists with the
 * status of their last run, read through the projection store. Bounded like the links themselves
 * (`Subagent.Limits`), so a tree that grew past the bounds elsewhere, or whose stored links loop, is
 * a clear error rather than an endless read. `summary` and `reminder` put a child's progress in one
 * line, for the parent's model.
 *
 * @since 0.2.0
 */
import * as Effect from "effect/Effect"
import type { SessionId } from "../log/SessionId.ts"
import type { SessionLogError } from "../log/SessionLogError.ts"
import { ProjectionStore } from "../projection/ProjectionStore.ts"
import * as Subagent from "./Subagent.ts"
import { Cycle, SubagentError, TooDeep, TooManyChildren } from "./SubagentError.ts"
import type * as SubagentEvents from "./SubagentEvents.ts"
import * as SubagentProjection from "./SubagentProjection.ts"
import * as Todo from "./Todo.ts"
import * as TodoProjection from "./TodoProjection.ts"

/**
 * One session in the tree: its list (`null`: no plan in its current turn), the status of its last
 * run as a sub-agent (`null` for the tree's root) and its sub-agents.
 *
 * @since 0.2.0
 * @category models
 */
export interface Node {
  readonly session: SessionId
  readonly status: SubagentProjection.Status | null
  readonly todos: Todo.List | null
  readonly children: ReadonlyArray<Node>
}

/**
 * The plan tree below `root`. Fails with a `SubagentError` when the tree is deeper than
 * `limits.maxDepth`, when a session has more than `limits.maxChildren` sub-agents, or when a
 * session reappears below itself.
 *
 * @since 0.2.0
 * @category reading
 */
export const get = Effect.fn("PlanTree.get")(
  function*(root: SessionId, limits: Subagent.Limits = Subagent.defaultLimits) {
    const store = yield* ProjectionStore
    const refuse = (session: SessionId, reason: SubagentError["reason"]) =>
      SubagentError.fromReason({ method: "tree", session: root, child: session, reason })
    const visit = (
      session: SessionId,
      status: SubagentProjection.Status | null,
      above: ReadonlyArray<SessionId>
    ): Effect.Effect<Node, SubagentError | SessionLogError> =>
      Effect.gen(function*() {
        if (above.length > limits.maxDepth) {
          return yield* refuse(session, new TooDeep({ depth: above.length, max: limits.maxDepth }))
        }
        const todos = yield* store.get(TodoProjection.todos, session)
        const kids = yield* store.get(SubagentProjection.children, session)
        if (kids.length > limits.maxChildren) {
          return yield* refuse(session, new TooManyChildren({ count: kids.length, max: limits.maxChildren }))
        }
        const path = [...above, session]
        const children = yield* Effect.forEach(kids, (kid) =>
          path.includes(kid.child)
            ? refuse(kid.child, new Cycle({ path: [...path.slice(path.indexOf(kid.child)), kid.child].reverse() }))
            : visit(kid.child, kid.status, path))
        return { session, status, todos, children }
      })
    return yield* visit(root, null, [])
  }
)

const endings: Record<SubagentEvents.EndReason, string> = {
  completed: " (finished)",
  error: " (failed)",
  interrupted: " (interrupted)",
  closed: " (session closed)"
}

/**
 * One line on a sub-agent's progress, for its parent's model: `sub-agent X: 3/5 completed, working
 * on Y`, and how its run ended once it has (finished, failed, interrupted, session closed).
 *
 * @since 0.2.0
 * @category rendering
 */
export const summary = (node: Node): string => {
  const ended = node.status === null || node.status === "running" ? "" : endings[node.status]
  if (node.todos === null) return `sub-agent ${node.session}: no plan yet${ended}`
  const counts = Todo.count(node.todos)
  const active = node.todos.filter((item) => item.status === "in_progress").map((item) => item.content)
  const doing = active.length === 0 ? "" : `, working on ${active.join("; ")}`
  return `sub-agent ${node.session}: ${counts.completed}/${node.todos.length} completed${doing}${ended}`
}

/**
 * The lines on a session's sub-agents, one per sub-agent, nested ones indented below theirs: the
 * text an agent loop adds to the parent's reminder so its model sees its children's progress.
 * Empty when the session has no sub-agents.
 *
 * @since 0.2.0
 * @category rendering
 */
export const reminder = (tree: Node): string => {
  const lines: Array<string> = []
  const walk = (node: Node, indent: string) => {
    for (const child of node.children) {
      lines.push(`${indent}${summary(child)}`)
      walk(child, `${indent}  `)
    }
  }
  walk(tree, "")
  return lines.join("\n")
}
