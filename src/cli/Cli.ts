/**
 * The `todo-write` command line: every command, its flags and its description, built with
 * `effect/cli`; `bin.ts` runs it. What a command does lives in its own module (`Show.ts`,
 * `Serve.ts`…), imported only when that command runs: `todo-write schema` never loads the file log,
 * PostgreSQL, the HTTP server or MCP, and every start skips the modules of the commands not run.
 */
import * as Argument from "effect/cli/Argument"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import * as Flags from "./Flags.ts"

export { version } from "./Version.ts"

/** A handler that imports its module when the command runs, then hands it the parsed input. */
const lazy = <I, A, E, R>(load: () => Promise<{ readonly run: (input: I) => Effect.Effect<A, E, R> }>) => (input: I) =>
  Effect.flatMap(Effect.promise(load), (module) => module.run(input))

export const schemaFormats = ["all", "mcp", "openai", "openai-responses", "anthropic"] as const
export type SchemaFormat = (typeof schemaFormats)[number]

const schema = Command.make("schema", {
  inProgress: Flag.Literals("in-progress", Flags.inProgressChoices).pipe(
    Flag.withDescription("Print the definition for this policy only (default: both)"),
    Flag.optional
  ),
  format: Flag.Literals("format", schemaFormats).pipe(
    Flag.withDescription(
      "Which tool object: mcp, openai (Chat Completions), openai-responses (Responses API), anthropic, or all (default: all)"
    ),
    Flag.withDefault("all")
  ),
  evidence: Flags.evidenceFlag
}, lazy(() => import("./Schema.ts"))).pipe(
  Command.withDescription("Print the todo_write tool definition as MCP, OpenAI and Anthropic tool objects")
)

const show = Command.make("show", {
  dir: Flags.directory,
  store: Flags.store,
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
}, lazy(() => import("./Show.ts"))).pipe(
  Command.withDescription("Replay a session and print its current todo list as a checklist")
)

const verify = Command.make("verify", {
  dir: Flags.directory,
  store: Flags.store,
  sessions: Argument.String("session").pipe(
    Argument.withDescription("Sessions to check (default: all in the store)"),
    Argument.variadic()
  )
}, lazy(() => import("./Verify.ts"))).pipe(
  Command.withDescription("Load sessions, run every invariant, and report each as ok, repaired or bad (exit 1)")
)

const serve = Command.make("serve", {
  dir: Flags.directory,
  store: Flags.store,
  session: Flag.String("session").pipe(
    Flag.withDescription("The session to write to; restarting with the same id continues its log (default: a new id)"),
    Flag.optional
  ),
  inProgress: Flag.Literals("in-progress", Flags.inProgressChoices).pipe(
    Flag.withDescription(
      "REQUIRED. single: at most one todo in_progress; parallel: several when work truly runs in parallel"
    )
  ),
  evidence: Flags.evidenceFlag,
  http: Flag.Boolean("http").pipe(
    Flag.withDescription("Serve MCP Streamable HTTP at /mcp/<session-id> instead of stdio"),
    Flag.withDefault(false)
  ),
  host: Flag.String("host").pipe(
    Flag.withDescription("With --http: the address to listen on. Anything but loopback needs --token-file"),
    Flag.withDefault("127.0.0.1")
  ),
  port: Flag.Int("port").pipe(
    Flag.withDescription("With --http: the port to listen on (0: any free port, printed on stderr)"),
    Flag.withDefault(8080)
  ),
  tokenFile: Flag.FileText("token-file").pipe(
    Flag.withDescription("With --http: a file holding the bearer token every request must carry"),
    Flag.optional
  )
}, lazy(() => import("./Serve.ts"))).pipe(
  Command.withDescription("Run an MCP server over stdio that exposes todo_write, writing to a session log")
)

const demo = Command.make("demo", {
  dir: Flag.String("dir").pipe(
    Flag.withDescription("Where to write the demo's session log (default: a new temporary directory)"),
    Flag.optional
  )
}, lazy(() => import("./Demo.ts"))).pipe(
  Command.withDescription("Watch a scripted agent plan, work, make a mistake and recover, then replay its log")
)

const ui = Command.make("ui", {
  dir: Flags.directory,
  store: Flags.store,
  host: Flag.String("host").pipe(
    Flag.withDescription("The address to listen on; anything but loopback exposes the sessions to the network"),
    Flag.withDefault("127.0.0.1")
  ),
  port: Flag.Int("port").pipe(Flag.withDescription("The port to listen on (0: any free port)"), Flag.withDefault(7357))
}, lazy(() => import("./Ui.ts"))).pipe(
  Command.withDescription("Serve a live web page of the sessions and their todo lists (read-only)")
)

export const command = Command.make("todo-write").pipe(
  Command.withDescription("The todo_write tool for AI agents: an MCP server, and tools for its session logs"),
  Command.withSubcommands([serve, show, verify, demo, schema, ui])
)
