/**
 * effect-todo-write: the `todo_write` tool (the todo domain), the session log's core (the service,
 * ids, events, errors, the invariant middleware and its in-memory backend) and projections. The
 * file, SQL and MCP parts have entry points of their own: `effect-todo-write/file`,
 * `effect-todo-write/sql` (needs `@effect/sql-pg`) and `effect-todo-write/mcp`.
 *
 * @since 0.2.0
 */

/** @since 0.2.0 */
export * as AgentSession from "./todo/AgentSession.ts"
/** @since 0.2.0 */
export * as Checklist from "./todo/Checklist.ts"
/** @since 0.2.0 */
export * as PlanTree from "./todo/PlanTree.ts"
/** @since 0.2.0 */
export * as Subagent from "./todo/Subagent.ts"
/** @since 0.2.0 */
export * as SubagentError from "./todo/SubagentError.ts"
/** @since 0.2.0 */
export * as SubagentEvents from "./todo/SubagentEvents.ts"
/** @since 0.2.0 */
export * as SubagentProjection from "./todo/SubagentProjection.ts"
/** @since 0.2.0 */
export * as Todo from "./todo/Todo.ts"
/** @since 0.2.0 */
export * as TodoEvents from "./todo/TodoEvents.ts"
/** @since 0.2.0 */
export * as TodoHistory from "./todo/TodoHistory.ts"
/** @since 0.2.0 */
export * as TodoOverview from "./todo/TodoOverview.ts"
/** @since 0.2.0 */
export * as TodoPolicy from "./todo/TodoPolicy.ts"
/** @since 0.2.0 */
export * as TodoProjection from "./todo/TodoProjection.ts"
/** @since 0.2.0 */
export * as TodoReminder from "./todo/TodoReminder.ts"
/** @since 0.2.0 */
export * as TodoShape from "./todo/TodoShape.ts"
/** @since 0.2.0 */
export * as TodoText from "./todo/TodoText.ts"
/** @since 0.2.0 */
export * as TodoValidation from "./todo/TodoValidation.ts"
/** @since 0.2.0 */
export * as TodoWrite from "./todo/TodoWrite.ts"
/** @since 0.2.0 */
export * as TodoWriteError from "./todo/TodoWriteError.ts"

/** @since 0.2.0 */
export * as CheckedSessionLog from "./log/CheckedSessionLog.ts"
/** @since 0.2.0 */
export * as SessionEvent from "./log/SessionEvent.ts"
/** @since 0.2.0 */
export * as SessionId from "./log/SessionId.ts"
/** @since 0.2.0 */
export * as SessionInvariant from "./log/SessionInvariant.ts"
/** @since 0.2.0 */
export * as SessionLog from "./log/SessionLog.ts"
/** @since 0.2.0 */
export * as SessionLogError from "./log/SessionLogError.ts"

/** @since 0.2.0 */
export * as Projection from "./projection/Projection.ts"
/** @since 0.2.0 */
export * as ProjectionStore from "./projection/ProjectionStore.ts"
