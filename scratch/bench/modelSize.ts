/**
 * 6. Model-facing size: the tokens of the tool definition as a model receives it (name, description,
 * JSON Schema of the parameters) for each of the four policy combinations, in the general form (MCP,
 * Anthropic, `effect/ai`) and in OpenAI's strict form; of the one-line success reply, with and
 * without its hint; of a two-problem error, per path (over MCP the model reads the text; through the
 * Effect AI providers it reads `JSON.stringify` of the tool's encoded result, the same text as a JSON
 * string, which test/todo/Providers.test.ts checks on the providers' own code; the encoded error
 * object those providers sent before the result became text is measured for contrast); and of the
 * re-anchor text for a 10-item list. All counted with a real o200k tokenizer.
 */
import { Result, Schema } from "effect"
import { encode } from "gpt-tokenizer/encoding/o200k_base"
import * as ToolDefinition from "../../src/mcp/ToolDefinition.ts"
import * as Todo from "../../src/todo/Todo.ts"
import * as TodoPolicy from "../../src/todo/TodoPolicy.ts"
import * as TodoReminder from "../../src/todo/TodoReminder.ts"
import * as TodoValidation from "../../src/todo/TodoValidation.ts"
import * as TodoWrite from "../../src/todo/TodoWrite.ts"
import { TodoWriteError } from "../../src/todo/TodoWriteError.ts"

export interface Size {
  readonly name: string
  readonly tokens: number
  readonly goal?: { readonly max: number } | undefined
  readonly note?: string | undefined
}

/** The published size of a widely used peer's todo tool description, for scale (not measured here). */
export const peerReference = 2_000

/** A realistic 10-item list mid-way through a task: 4 completed (2 with evidence), 1 in progress, 5 pending. */
export const tenItems: Todo.List = [
  { content: "Read the config loader and its tests", status: "completed" },
  { content: "Add a --verbose flag to the CLI parser", status: "completed", evidence: "npm test: parser tests pass" },
  { content: "Thread the flag through to the logger", status: "completed" },
  { content: "Print each request's timing when verbose", status: "completed", evidence: "ran todo-write show -v" },
  { content: "Cover verbose output with a snapshot test", status: "in_progress" },
  { content: "Document the flag in the README", status: "pending" },
  { content: "Add the flag to the shell completions", status: "pending" },
  { content: "Update the changelog", status: "pending" },
  { content: "Run the full test suite", status: "pending" },
  { content: "Open the pull request", status: "pending" }
]

const count = (text: string) => encode(text).length

export const run = (): ReadonlyArray<Size> => {
  const policies = [false, true].flatMap((allowParallelInProgress) =>
    [false, true].map((requireCompletedEvidence) => ({ allowParallelInProgress, requireCompletedEvidence }))
  )
  const label = (policy: (typeof policies)[number]) =>
    `${policy.allowParallelInProgress ? "parallel" : "single-active"}, evidence ${
      policy.requireCompletedEvidence ? "required" : "invited"
    }`
  const definitions = policies.flatMap((policy): ReadonlyArray<Size> => {
    const description = TodoWrite.description(policy)
    return [
      {
        name: `tool definition, ${label(policy)}`,
        tokens: count(JSON.stringify({ name: TodoWrite.name, description, parameters: TodoWrite.parametersJsonSchema })),
        goal: { max: 250 }
      },
      {
        name: `  OpenAI strict form`,
        tokens: count(JSON.stringify({ name: TodoWrite.name, description, parameters: ToolDefinition.openAiParameters })),
        goal: { max: 250 }
      }
    ]
  })
  const policy = { allowParallelInProgress: false, requireCompletedEvidence: false, maxItems: TodoPolicy.defaultMaxItems, maxContentLength: TodoPolicy.defaultMaxContentLength }
  const rejected = TodoValidation.validate(policy, {
    todos: [{ content: "a", status: "in_progress" }, { content: "A", status: "in_progress" }]
  })
  if (Result.isSuccess(rejected)) throw new Error("the rejection sample was accepted")
  const error = Schema.encodeSync(TodoWrite.FailureText)(rejected.failure)
  const success = { todos: [], counts: { pending: 2, in_progress: 1, completed: 3 } }
  const providers = "Effect AI providers (JSON string)"
  return [
    ...definitions,
    { name: "success reply, MCP (text)", tokens: count(Todo.summary(success.counts)) },
    { name: `success reply, ${providers}`, tokens: count(JSON.stringify(Schema.encodeSync(TodoWrite.SuccessText)(success))) },
    {
      name: "success reply with its hint",
      tokens: count(Todo.summary({ pending: 5, in_progress: 0, completed: 3 })),
      goal: { max: 30 }
    },
    { name: "two-problem error, MCP (text)", tokens: count(error) },
    { name: `two-problem error, ${providers}`, tokens: count(JSON.stringify(error)) },
    {
      name: "two-problem error as the encoded error object",
      tokens: count(JSON.stringify(Schema.encodeSync(TodoWriteError)(rejected.failure))),
      note: "what the providers sent before; contrast"
    },
    { name: "re-anchor text, 10 items (TodoReminder)", tokens: count(TodoReminder.render(tenItems)), goal: { max: 120 } },
    {
      name: "  of which the items' own text",
      tokens: count(tenItems.map((item) => `${item.content} ${item.evidence ?? ""}`).join("\n")),
      note: "content and evidence alone"
    },
    { name: "peer's todo tool description (published, for scale)", tokens: peerReference, note: "reference, not measured" }
  ]
}

