/**
 * `todo-write schema`: the tool definition for agents not built on Effect.
 */
import { Console, Option } from "effect"
import { Command, Flag } from "effect/cli"
import * as ToolDefinition from "../mcp/ToolDefinition.ts"
import { type Evidence, evidenceFlag, type InProgress, inProgressChoices, policyOf } from "./Policy.ts"

export const formats = ["all", "mcp", "openai", "openai-responses", "anthropic"] as const
export type Format = (typeof formats)[number]

/** The definition object `--format` names, for one policy. */
export const definition = (format: Format, choice: InProgress, evidence: Evidence = "invite") => {
  const all = ToolDefinition.all(policyOf(choice, evidence))
  return format === "all" ? all : all[format]
}

export const command = Command.make("schema", {
  inProgress: Flag.Literals("in-progress", inProgressChoices).pipe(
    Flag.withDescription("Print the definition for this policy only (default: both)"),
    Flag.optional
  ),
  format: Flag.Literals("format", formats).pipe(
    Flag.withDescription(
      "Which tool object: mcp, openai (Chat Completions), openai-responses (Responses API), anthropic, or all (default: all)"
    ),
    Flag.withDefault("all")
  ),
  evidence: evidenceFlag
}, ({ inProgress, format, evidence }) => {
  const out = Option.isSome(inProgress)
    ? definition(format, inProgress.value, evidence)
    : { single: definition(format, "single", evidence), parallel: definition(format, "parallel", evidence) }
  return Console.log(JSON.stringify(out, null, 2))
}).pipe(Command.withDescription("Print the todo_write tool definition as MCP, OpenAI and Anthropic tool objects"))
