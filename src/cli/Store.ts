/**
 * The checked session log a command works on: JSONL files in a directory, or PostgreSQL at
 * `$DATABASE_URL`. The PostgreSQL driver is an optional peer dependency, loaded only when asked for.
 */
import * as CliError from "effect/cli/CliError"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as Path from "effect/Path"
import type { CheckedSessionLog } from "../log/CheckedSessionLog.ts"
import * as SessionLogFile from "../log/file/SessionLogFile.ts"
import type * as SessionId from "../log/SessionId.ts"
import { SessionLog } from "../log/SessionLog.ts"
import { SessionLogError } from "../log/SessionLogError.ts"
import * as SubagentEvents from "../todo/SubagentEvents.ts"
import type * as Flags from "./Flags.ts"

export const userError = (message: string) => new CliError.UserError({ cause: message, userMessage: message })

/**
 * A failed log operation as the one line a user reads, after what the command was doing, instead of
 * a stack trace.
 */
export const reported = <A, E, R>(effect: Effect.Effect<A, E, R>, doing: string) =>
  Effect.mapError(effect, (error) => error instanceof SessionLogError ? userError(`${doing}: ${error.message}`) : error)

/** Where the chosen store keeps sessions, for messages: the absolute directory, or PostgreSQL. */
export const describe = (kind: Flags.Store, dir: string) =>
  Effect.map(Path.Path, (path) => kind === "file" ? path.resolve(dir) : "PostgreSQL at $DATABASE_URL")

/** The raw PostgreSQL log, its driver imported only now. */
const postgres: Layer.Layer<SessionLog, SessionLogError | CliError.UserError> = Layer.unwrap(Effect.gen(function*() {
  const url = yield* Config.Redacted("DATABASE_URL").pipe(
    Effect.mapError(() =>
      userError("--store postgres reads the server's URL from DATABASE_URL, which is not set (e.g. postgres://user@host:5432/db)")
    )
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

/** What a command asks of the file store beyond its directory. */
export interface FileOptions {
  /** Sessions held (their locks taken) from the start. */
  readonly open?: ReadonlyArray<SessionId.SessionId> | undefined
  /** Watch the directory, so other processes' commits reach live readers. */
  readonly watch?: boolean | undefined
}

/** The checked log over JSONL files in a directory, created if missing. */
export const fileLog = (dir: string, options: FileOptions = {}) =>
  SubagentEvents.layerChecked.pipe(Layer.provide(SessionLogFile.layerFileSystem({ directory: dir, ...options })))

/** The checked log in PostgreSQL, which carries other instances' commits by itself (`LISTEN`). */
const postgresLog = SubagentEvents.layerChecked.pipe(Layer.provide(postgres))

/** Fails, naming it, unless the path is an existing directory: looking into logs never creates one. */
export const existingDirectory = (dir: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const absolute = (yield* Path.Path).resolve(dir)
    const info = yield* fs.stat(absolute).pipe(Effect.option)
    if (info._tag === "None") return yield* userError(`no directory ${absolute} (--dir)`)
    if (info.value.type !== "Directory") return yield* userError(`${absolute} is not a directory (--dir)`)
    return absolute
  })

type Log = Layer.Layer<CheckedSessionLog, SessionLogError | CliError.UserError, FileSystem.FileSystem | Path.Path>

/** The checked log of the chosen store; for files, the directory is created if missing. */
export const log = (kind: Flags.Store, dir: string, options: FileOptions = {}): Log =>
  kind === "file" ? fileLog(dir, options) : postgresLog

/** The checked log of the chosen store, to look into: a missing directory is an error, never created. */
export const existing = (kind: Flags.Store, dir: string): Log =>
  kind === "file" ? Layer.unwrap(Effect.as(existingDirectory(dir), fileLog(dir))) : postgresLog

/**
 * The checked log a server writes one session to: the session is opened (its lock held) while the
 * layer is built, so a session in use fails it.
 */
export const serving = (kind: Flags.Store, dir: string, session: SessionId.SessionId): Log =>
  log(kind, dir, { open: [session] })
