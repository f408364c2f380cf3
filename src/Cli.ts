/**
 * The `todo-write` command: an MCP server over stdio, and tools to look into session logs. Built
 * with `effect/cli`; `bin.ts` runs it.
 */
import { PgClient } from "@effect/sql-pg"
import { Clock, Config, Console, DateTime, Effect, FileSystem, Layer, Option, Path, type PlatformError, Stream } from "effect"
import type { SqlError } from "effect/sql"
import { McpProtocol, McpServer } from "effect/ai"
import { Argument, CliError, Command, Flag } from "effect/cli"
import * as AgentSession from "./AgentSession.ts"
import * as Checklist from "./Checklist.ts"
import * as Demo from "./Demo.ts"
import * as ProjectionStore from "./ProjectionStore.ts"
import * as SessionFile from "./SessionFile.ts"
import * as SessionId from "./SessionId.ts"
import * as SessionInvariant from "./SessionInvariant.ts"
import { SessionLog } from "./SessionLog.ts"
import type { SessionLogError } from "./SessionLogError.ts"
import * as SessionLogFile from "./SessionLogFile.ts"
import * as SessionLogSql from "./SessionLogSql.ts"
import * as TodoHistory from "./TodoHistory.ts"
import * as TodoPolicy from "./TodoPolicy.ts"
import * as TodoWrite from "./TodoWrite.ts"
import * as TodoWriteMcp from "./TodoWriteMcp.ts"
import * as ToolDefinition from "./ToolDefinition.ts"

export const defaultDirectory = "./.todo-write/sessions"

export const version = "0.1.0"

const directory = Flag.String("dir").pipe(
  Flag.withDescription("The directory of session logs, one <session>.jsonl file per session"),
  Flag.withDefault(defaultDirectory)
)

const inProgressChoices = ["single", "parallel"] as const
type InProgress = (typeof inProgressChoices)[number]
const policyOf = (choice: InProgress) => ({ allowParallelInProgress: choice === "parallel" })

const userError = (message: string) => new CliError.UserError({ cause: message, userMessage: message })

const sessionIdOf = (id: string) =>
  SessionId.decode(id).pipe(Effect.mapError((error) => userError(`invalid session id ${JSON.stringify(id)}: ${error.message}`)))

/** The checked JSONL log over a directory. */
const fileLog = (dir: string) =>
  SessionInvariant.layer().pipe(Layer.provide(SessionLogFile.layerFileSystem({ directory: dir })))

const storeChoices = ["file", "postgres"] as const
type Store = (typeof storeChoices)[number]

const store = Flag.Literals("store", storeChoices).pipe(
  Flag.withDescription("Where session logs live: JSONL files in --dir, or PostgreSQL at $DATABASE_URL"),
  Flag.withDefault("file")
)

/** The checked log of the chosen store; PostgreSQL's URL comes from DATABASE_URL. */
const storeLog = (
  kind: Store,
  dir: string
): Layer.Layer<
  SessionLog,
  PlatformError.PlatformError | SessionLogError | CliError.UserError | SqlError.SqlError,
  FileSystem.FileSystem | Path.Path
> =>
  kind === "file"
    ? fileLog(dir)
    : SessionInvariant.layer().pipe(
      Layer.provide(SessionLogSql.layer()),
      Layer.provide(PgClient.layerConfig({ url: Config.Redacted("DATABASE_URL") })),
      Layer.catchTag("ConfigError", (error) =>
        Layer.effect(
          SessionLog,
          Effect.fail(userError(`--store postgres reads the server's URL from DATABASE_URL: ${error.message}`))
        ))
    )

const serve = Command.make("serve", {
  dir: directory,
  store,
  session: Flag.String("session").pipe(
    Flag.withDescription("The session to write to; restarting with the same id continues its log. Default: a new id"),
    Flag.optional
  ),
  inProgress: Flag.Literals("in-progress", inProgressChoices).pipe(
    Flag.withDescription(
      "REQUIRED. single: at most one todo in_progress; parallel: several when work truly runs in parallel"
    )
  )
}, ({ dir, store, session, inProgress }) =>
  Effect.gen(function*() {
    const id = yield* sessionIdOf(Option.getOrElse(session, () => crypto.randomUUID()))
    const where = store === "file" ? dir : "PostgreSQL ($DATABASE_URL)"
    yield* Console.error(`todo-write: serving todo_write over stdio; session ${id} in ${where} (in_progress: ${inProgress})`)
    const server = McpServer.layerStdio({
      name: "todo-write",
      version,
      protocols: [McpProtocol.v2025_11_25, McpProtocol.v2025_06_18, McpProtocol.v2025_03_26, McpProtocol.v2024_11_05],
      registrations: TodoWriteMcp.layer
    }).pipe(
      Layer.provide(Layer.mergeAll(storeLog(store, dir), TodoPolicy.layer(policyOf(inProgress)), AgentSession.layer(id)))
    )
    return yield* Layer.launch(server)
  })).pipe(Command.withDescription("Run an MCP server over stdio that exposes todo_write, writing to a JSONL session log"))

const timeOf = (time: number | undefined) => time === undefined ? "never" : DateTime.formatIso(DateTime.makeUnsafe(time))

/** Prints a session's current list, and its history when asked, as a checklist or as JSON. */
const printSession = (id: SessionId.SessionId, history: Option.Option<TodoHistory.By>, json: boolean) =>
  Effect.gen(function*() {
    const log = yield* SessionLog
    if (!(yield* log.sessions).includes(id)) return yield* userError(`no session ${id}`)
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
    lines.push(`Session ${id}: ${replay.events} events, last at ${timeOf(replay.lastTime)}`, Checklist.render(replay.todos))
    yield* Console.log(lines.join("\n"))
  })

const show = Command.make("show", {
  dir: directory,
  store,
  session: Argument.String("session").pipe(Argument.withDescription("The session id")),
  history: Flag.Literals("history", ["turns", "writes"]).pipe(
    Flag.withDescription("Also show the list as it stood at the end of each turn, or after each write"),
    Flag.optional
  ),
  json: Flag.Boolean("json").pipe(Flag.withDescription("Print JSON for machines"), Flag.withDefault(false))
}, ({ dir, store, session, history, json }) =>
  Effect.flatMap(sessionIdOf(session), (id) => printSession(id, history, json)).pipe(
    Effect.provide(storeLog(store, dir))
  )).pipe(
    Command.withDescription("Replay a session and print its current todo list as a checklist")
  )

const verify = Command.make("verify", {
  dir: directory,
  sessions: Argument.String("session").pipe(
    Argument.withDescription("Sessions to check (default: all in the directory)"),
    Argument.variadic()
  )
}, ({ dir, sessions }) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const log = yield* SessionLog
    const ids = sessions.length > 0
      ? yield* Effect.forEach(sessions, sessionIdOf)
      : yield* log.sessions
    const violation = SessionInvariant.checker()
    let bad = 0
    for (const id of ids) {
      const file = path.join(path.resolve(dir), `${id}.jsonl`)
      const outcome = yield* Effect.gen(function*() {
        if (!(yield* fs.exists(file))) {
          bad++
          return `MISSING  no file ${file}`
        }
        // One pass: the file's own checks, then every invariant, each problem named with its line.
        const scanned = yield* Stream.runFold(
          SessionLogFile.scan(fs, file, id, SessionFile.start, "verify"),
          () => ({ events: 0, tail: 0, broken: undefined as string | undefined }),
          (acc, item) => {
            if (item._tag === "Tail") acc.tail = item.length
            if (item._tag !== "Entry" || acc.broken !== undefined) return acc
            acc.events++
            const reason = violation(item.entry.type, item.entry.data, item.entry.seq)
            if (reason !== undefined) {
              acc.broken = `line ${item.line}: invariant "${reason.rule}" violated at seq ${item.entry.seq}: ${reason.detail}`
            }
            return acc
          }
        )
        if (scanned.broken !== undefined) {
          bad++
          return `BAD      ${file}, ${scanned.broken}`
        }
        const { events, tail } = scanned
        if (tail === 0) return `ok       ${events} events`
        const repaired = yield* Effect.exit(SessionLogFile.repair({ directory: dir }, id))
        return repaired._tag === "Success"
          ? `repaired ${events} events; cut a torn tail of ${tail} bytes (a write that was never acknowledged)`
          : `ok       ${events} events; a torn tail of ${tail} bytes was left: the session is in use`
      }).pipe(Effect.catch((error) => {
        bad++
        return Effect.succeed(`BAD      ${error.message}`)
      }))
      yield* Console.log(`${id}  ${outcome}`)
    }
    if (ids.length === 0) yield* Console.log(`no sessions in ${dir}`)
    if (bad > 0) return yield* userError(`${bad} of ${ids.length} sessions failed verification`)
  }).pipe(Effect.provide(fileLog(dir)))).pipe(
    Command.withDescription("Load sessions, run every invariant, and report each as ok, repaired or bad (exit 1)")
  )

const demo = Command.make("demo", {
  dir: Flag.String("dir").pipe(
    Flag.withDescription("Where to write the demo's session log (default: a new temporary directory)"),
    Flag.optional
  )
}, ({ dir }) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const target = Option.isSome(dir) ? dir.value : yield* fs.makeTempDirectory({ prefix: "todo-write-demo-" })
    const path = yield* Path.Path
    const session = yield* sessionIdOf(`demo-${yield* Clock.currentTimeMillis}`)
    yield* Console.log(`A scripted agent (a fake LanguageModel, no network) uses todo_write, single-active policy.`)
    yield* Console.log(`Session log: ${path.join(target, `${session}.jsonl`)}`)
    yield* Effect.gen(function*() {
      yield* Demo.run(session)
      yield* Console.log(`\n== Replayed from the log: todo-write show --dir ${target} --history turns ${session}\n`)
      yield* printSession(session, Option.some("turns"), false)
    }).pipe(
      Effect.provide(
        Layer.mergeAll(TodoWrite.layer, ProjectionStore.layer).pipe(
          Layer.provideMerge(Layer.mergeAll(fileLog(target), TodoPolicy.layer({ allowParallelInProgress: false })))
        )
      )
    )
  })).pipe(Command.withDescription("Watch a scripted agent plan, work, make a mistake and recover, then replay its log"))

const schema = Command.make("schema", {
  inProgress: Flag.Literals("in-progress", inProgressChoices).pipe(
    Flag.withDescription("Print the definition for this policy only (default: both)"),
    Flag.optional
  ),
  format: Flag.Literals("format", ["all", "mcp", "openai", "anthropic"]).pipe(
    Flag.withDescription("Which tool object to print"),
    Flag.withDefault("all")
  )
}, ({ inProgress, format }) => {
  const pick = (choice: InProgress) => {
    const policy = policyOf(choice)
    switch (format) {
      case "all":
        return ToolDefinition.all(policy)
      case "mcp":
        return ToolDefinition.mcp(policy)
      case "openai":
        return ToolDefinition.openAi(policy)
      case "anthropic":
        return ToolDefinition.anthropic(policy)
    }
  }
  const out = Option.isSome(inProgress)
    ? pick(inProgress.value)
    : { single: pick("single"), parallel: pick("parallel") }
  return Console.log(JSON.stringify(out, null, 2))
}).pipe(Command.withDescription("Print the todo_write tool definition as MCP, OpenAI and Anthropic tool objects"))

export const command = Command.make("todo-write").pipe(
  Command.withDescription("The todo_write tool for AI agents: an MCP server, and tools for its session logs"),
  Command.withSubcommands([serve, show, verify, demo, schema])
)
