/**
 * `effect-todo-write/file`: the session log as JSONL files in a directory, the embedded default.
 *
 * @since 0.2.0
 */

/** @since 0.2.0 */
export * as SessionLogFile from "./SessionLogFile.ts"
