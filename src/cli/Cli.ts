/**
 * The `todo-write` command: an MCP server over stdio, and tools to look into session logs. Built
 * with `effect/cli`; `bin.ts` runs it.
 */
import { Command } from "effect/cli"
import * as Demo from "./Demo.ts"
import * as Schema from "./Schema.ts"
import * as Serve from "./Serve.ts"
import * as Show from "./Show.ts"
import * as Ui from "./Ui.ts"
import * as Verify from "./Verify.ts"

export { version } from "./Version.ts"

export const command = Command.make("todo-write").pipe(
  Command.withDescription("The todo_write tool for AI agents: an MCP server, and tools for its session logs"),
  Command.withSubcommands([Serve.command, Show.command, Verify.command, Demo.command, Schema.command, Ui.command])
)
