/**
 * The checked session log a command works on: JSONL files in a directory, or PostgreSQL at
 * `$DATABASE_URL`. The PostgreSQL driver is an optional peer dependency, loaded only when asked for.
 */
import { Config, Effect, type FileSystem, Layer, type Path } from "effect"
import { CliError, Flag } from "effect/cli"
import type { CheckedSessionLog } from "../log/CheckedSessionLog.ts"
import * as SessionLogFile from "../log/file/SessionLogFile.ts"
import { SessionLog } from "../log/SessionLog.ts"
import type { SessionLogError } from "../log/SessionLogError.ts"
import * as SubagentEvents from "../todo/SubagentEvents.ts"

export const defaultDirectory = "./.todo-write/sessions"

export const userError = (message: string) => new CliError.UserError({ cause: message, userMessage: message })

export const directory = Flag.String("dir").pipe(
  Flag.withDescription("The directory of session logs, one <session>.jsonl file per session"),
  Flag.withDefault(defaultDirectory)
)

export const storeChoices = ["file", "postgres"] as const
export type Store = (typeof storeChoices)[number]

export const store = Flag.Literals("store", storeChoices).pipe(
  Flag.withDescription("Where session logs live: JSONL files in --dir, or PostgreSQL at $DATABASE_URL"),
  Flag.withDefault("file")
)

/** The raw PostgreSQL log, its driver imported only now. */
const postgres: Layer.Layer<SessionLog, SessionLogError | CliError.UserError> = Layer.unwrap(Effect.gen(function*() {
  const url = yield* Config.Redacted("DATABASE_URL").pipe(
    Effect.mapError((error) => userError(`--store postgres reads the server's URL from DATABASE_URL: ${error.message}`))
  )
  const [{ PgClient }, SessionLogSql] = yield* Effect.tryPromise({
    try: () => Promise.all([import("@effect/sql-pg"), import("../log/sql/SessionLogSql.ts")]),
    catch: () => userError("--store postgres needs the PostgreSQL driver: npm install @effect/sql-pg")
  })
  return SessionLogSql.layer().pipe(
    Layer.provide(PgClient.layer({ url })),
    Layer.catchTag("SqlError", (error) =>
      Layer.effect(SessionLog, Effect.fail(userError(`can't reach PostgreSQL: ${error.message}`))))
  )
}))

/** The checked log over JSONL files in a directory. */
export const fileLog = (dir: string) => SubagentEvents.layerChecked.pipe(Layer.provide(SessionLogFile.layerFileSystem({ directory: dir })))

/** The checked log of the chosen store. */
export const log = (
  kind: Store,
  dir: string
): Layer.Layer<CheckedSessionLog, SessionLogError | CliError.UserError, FileSystem.FileSystem | Path.Path> =>
  kind === "file" ? fileLog(dir) : SubagentEvents.layerChecked.pipe(Layer.provide(postgres))
