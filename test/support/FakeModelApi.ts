/**
 * A local stand-in for the OpenAI Responses API (`POST /v1/responses`) and the Anthropic Messages
 * API (`POST /v1/messages`) on 127.0.0.1, for driving the real provider packages. It answers each
 * request with the next step of a script (a call of `todo_write` with given arguments, or a final
 * text), records every request body, and, like OpenAI in strict mode, refuses (HTTP 400) a request
 * whose function tools aren't strict-mode compliant.
 */
import { Effect } from "effect"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"

/** One model step: call `todo_write` with these arguments, or answer with text and stop. */
export type Step = { readonly call: unknown } | { readonly text: string }

export interface FakeModelApi {
  readonly url: string
  /** Every request body, in order. */
  readonly requests: ReadonlyArray<any>
  /** Every strict-mode problem found in a request's tools (each refused with a 400). */
  readonly refusals: ReadonlyArray<string>
}

// The JSON Schema keywords OpenAI's strict mode (structured outputs) accepts.
const strictKeywords = new Set([
  "type", "properties", "required", "additionalProperties", "items", "enum", "const", "description", "title",
  "anyOf", "$ref", "$defs", "pattern", "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
  "multipleOf", "minItems", "maxItems"
])

/** Strict-mode problems of a JSON Schema: closed objects, every property required, known keywords only. */
export const strictProblems = (schema: any, at = "parameters"): Array<string> => {
  if (typeof schema !== "object" || schema === null) return [`${at}: not a schema`]
  const problems = Object.keys(schema).filter((key) => !strictKeywords.has(key)).map((key) =>
    `${at}: unsupported keyword "${key}"`
  )
  if (schema.type === "object") {
    if (schema.additionalProperties !== false) problems.push(`${at}: additionalProperties must be false`)
    const keys = Object.keys(schema.properties ?? {})
    const required = new Set(schema.required ?? [])
    for (const key of keys) if (!required.has(key)) problems.push(`${at}: "${key}" must be required`)
    for (const key of keys) problems.push(...strictProblems(schema.properties[key], `${at}.${key}`))
  }
  if (schema.items !== undefined) problems.push(...strictProblems(schema.items, `${at}[]`))
  for (const [i, member] of (schema.anyOf ?? []).entries()) problems.push(...strictProblems(member, `${at}|${i}`))
  return problems
}

const rootProblems = (schema: any, at: string) =>
  schema?.type === "object" && schema.anyOf === undefined ? strictProblems(schema, at) : [`${at}: root must be an object`]

const openAiReply = (body: any, n: number, step: Step) => ({
  id: `resp_${n}`,
  object: "response",
  model: body.model,
  created_at: 1764547200,
  status: "completed",
  output: "call" in step
    ? [{
      id: `fc_${n}`,
      type: "function_call",
      call_id: `call_${n}`,
      name: "todo_write",
      arguments: JSON.stringify(step.call),
      status: "completed"
    }]
    : [{
      id: `msg_${n}`,
      type: "message",
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text: step.text, annotations: [] }]
    }],
  usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15 }
})

const anthropicReply = (body: any, n: number, step: Step) => ({
  id: `msg_${n}`,
  type: "message",
  role: "assistant",
  model: body.model,
  content: "call" in step
    ? [{ type: "tool_use", id: `toolu_${n}`, name: "todo_write", input: step.call }]
    : [{ type: "text", text: step.text }],
  stop_reason: "call" in step ? "tool_use" : "end_turn",
  stop_sequence: null,
  // The provider's response schema requires every usage key.
  usage: {
    input_tokens: 10,
    output_tokens: 5,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    cache_creation: null,
    server_tool_use: null,
    service_tier: null,
    inference_geo: null,
    iterations: null,
    speed: null
  },
  container: null,
  context_management: null
})

/** Serves the script until the scope closes. */
export const serve = (script: ReadonlyArray<Step>) =>
  Effect.acquireRelease(
    Effect.promise(() => {
      const requests: Array<any> = []
      const refusals: Array<string> = []
      const server = Http.createServer((req, res) => {
        let raw = ""
        req.on("data", (chunk) => raw += chunk)
        req.on("end", () => {
          const body = JSON.parse(raw)
          requests.push(body)
          const reply = (status: number, json: unknown) => {
            res.writeHead(status, { "content-type": "application/json" })
            res.end(JSON.stringify(json))
          }
          const path = new URL(req.url ?? "/", "http://localhost").pathname
          const openAi = path === "/v1/responses"
          if (!openAi && path !== "/v1/messages") return reply(404, { error: { message: `no route ${path}` } })
          const problems = (body.tools ?? []).flatMap((tool: any) =>
            openAi
              ? [
                ...(tool.type === "function" && tool.strict === true ? [] : [`${tool.name}: not a strict function`]),
                ...rootProblems(tool.parameters, `${tool.name}.parameters`)
              ]
              : rootProblems(tool.input_schema, `${tool.name}.input_schema`)
          )
          if (problems.length > 0) {
            refusals.push(...problems)
            return reply(400, { type: "error", error: { type: "invalid_request_error", message: problems.join("; ") } })
          }
          const n = requests.length
          const step = script[n - 1] ?? { text: "(the script has ended)" }
          reply(200, openAi ? openAiReply(body, n, step) : anthropicReply(body, n, step))
        })
      })
      return new Promise<{ readonly server: Http.Server; readonly api: FakeModelApi }>((resolve) =>
        server.listen(0, "127.0.0.1", () => {
          const { port } = server.address() as AddressInfo
          resolve({ server, api: { url: `http://127.0.0.1:${port}`, requests, refusals } })
        })
      )
    }),
    ({ server }) =>
      Effect.promise(() =>
        new Promise<void>((resolve) => {
          server.closeAllConnections()
          server.close(() => resolve())
        })
      )
  ).pipe(Effect.map(({ api }) => api))
