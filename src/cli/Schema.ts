/**
 * `todo-write schema`: the tool definition for agents not built on Effect.
 */
import * as Console from "effect/Console"
import * as Option from "effect/Option"
import * as ToolDefinition from "../mcp/ToolDefinition.ts"
import type { SchemaFormat } from "./Cli.ts"
import { type Evidence, type InProgress, policyOf } from "./Flags.ts"

/** The definition object `--format` names, for one policy. */
export const definition = (format: SchemaFormat, choice: InProgress, evidence: Evidence = "invite") => {
  const all = ToolDefinition.all(policyOf(choice, evidence))
  return format === "all" ? all : all[format]
}

/** The command's input, as `Cli.ts` parses it. */
export interface Input {
  readonly inProgress: Option.Option<InProgress>
  readonly format: SchemaFormat
  readonly evidence: Evidence
}

/** Prints the definition for the policy asked, or for both. */
export const run = ({ inProgress, format, evidence }: Input) => {
  const out = Option.isSome(inProgress)
    ? definition(format, inProgress.value, evidence)
    : { single: definition(format, "single", evidence), parallel: definition(format, "parallel", evidence) }
  return Console.log(JSON.stringify(out, null, 2))
}
