/**
 * `effect-todo-write/sql`: the session log in PostgreSQL, over Effect's `SqlClient`. Needs the
 * optional peer dependency `@effect/sql-pg`.
 *
 * @since 0.2.0
 */

/** @since 0.2.0 */
export * as SessionLogSql from "./SessionLogSql.ts"
