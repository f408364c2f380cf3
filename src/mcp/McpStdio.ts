/**
 * The stdio transport in front of Effect's `McpServer.layerStdio`: a `Stdio` that reads stdin line by
 * line itself and answers every line on its own, so one bad line can't cost the good ones.
 *
 * Why: `McpServer.layerStdio` (effect 4.1) decodes a whole stdin chunk at once; one line that isn't
 * JSON throws out every request of that chunk unanswered (the client waits to its timeout) and no
 * `-32700 Parse error` is ever sent; a message nested a few thousand levels deep overflows the stack
 * in its decoding; a request before `initialize` dies as `-32603 Internal error`. Here each line is
 * bounded (length, then nesting depth) and parsed before the server sees it: what fails gets its own
 * JSON-RPC error, and only valid JSON, one complete line at a time, is passed on.
 *
 * @since 0.2.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Sink from "effect/Sink"
import * as Stdio from "effect/Stdio"
import * as Stream from "effect/Stream"

/**
 * The bounds on one line of input.
 *
 * @since 0.2.0
 * @category models
 */
export interface Options {
  /**
   * The longest line accepted, in UTF-16 code units (default 4 MiB: far above the largest valid
   * `todo_write` call, 100 items of 1,000 characters each, escaped). A longer line is answered with
   * an error and dropped as it arrives, never held whole.
   */
  readonly maxLineLength?: number | undefined
  /** The deepest nesting of arrays and objects accepted (default 64; a tool call needs about 6). */
  readonly maxDepth?: number | undefined
}

/**
 * The JSON-RPC error code for a request before `initialize`: "server not initialized", as in LSP, in
 * the range JSON-RPC leaves to servers.
 *
 * @since 0.2.0
 * @category codes
 */
export const notInitializedCode = -32002

const parseErrorCode = -32700
const invalidRequestCode = -32600

const reply = (id: unknown, body: object) => JSON.stringify({ jsonrpc: "2.0", id, ...body }) + "\n"
const error = (id: unknown, code: number, message: string) => reply(id, { error: { code, message } })

/** The nesting depth of JSON text, counted without parsing it, stopping once past `limit`. */
const depthOver = (text: string, limit: number): boolean => {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92) i++ // backslash: skip the escaped character
      else if (c === 34) inString = false
    } else if (c === 34) inString = true
    else if (c === 91 || c === 123) {
      if (++depth > limit) return true
    } else if (c === 93 || c === 125) depth--
  }
  return false
}

const isObject = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const isId = (value: unknown): value is string | number => typeof value === "string" || typeof value === "number"

/** Where the client is in the MCP handshake, as the server's replies show it. */
type Handshake =
  | { readonly _tag: "None" }
  | { readonly _tag: "Pending"; readonly id: string | number }
  | { readonly _tag: "Ready" }

/** What to do with one line: pass it on to the server, answer it here, or neither. */
interface Outcome {
  readonly forward?: string
  readonly answer?: string
}

/**
 * Wraps the `Stdio` in context: stdin is framed and checked line by line, the answers for lines that
 * fail are written to stdout, and stdout is watched for the answer to `initialize`.
 *
 * @since 0.2.0
 * @category constructors
 */
export const make = (options: Options = {}): Effect.Effect<Stdio.Stdio, never, Stdio.Stdio> =>
  Effect.map(Stdio.Stdio, (stdio) => wrap(stdio, options))

const wrap = (stdio: Stdio.Stdio, options: Options): Stdio.Stdio => {
  const maxLineLength = options.maxLineLength ?? 4 * 1024 * 1024
  const maxDepth = options.maxDepth ?? 64
  let handshake: Handshake = { _tag: "None" }

  /** Notes the server's answer to a pending `initialize`: only a result opens the session. */
  const watch = (text: string) => {
    if (handshake._tag !== "Pending") return
    const { id } = handshake
    for (const line of text.split("\n")) {
      const message = parse(line)
      if (isObject(message) && message.id === id) {
        handshake = "result" in message ? { _tag: "Ready" } : { _tag: "None" }
      }
    }
  }

  const decoder = new TextDecoder()
  const stdout: Stdio.Stdio["stdout"] = (sinkOptions) =>
    Sink.mapInput(stdio.stdout(sinkOptions), (chunk: string | Uint8Array) => {
      watch(typeof chunk === "string" ? chunk : decoder.decode(chunk))
      return chunk
    })

  const classify = (line: string): Outcome => {
    const text = line.endsWith("\r") ? line.slice(0, -1) : line
    if (text.trim().length === 0) return {}
    const tooDeep = depthOver(text, maxDepth)
    const message = parse(text)
    if (message === undefined) {
      return { answer: error(null, parseErrorCode, "Parse error: the line is not valid JSON") }
    }
    const id = isObject(message) && isId(message.id) ? message.id : null
    if (tooDeep) {
      return { answer: error(id, invalidRequestCode, `Invalid Request: nested deeper than ${maxDepth} levels`) }
    }
    if (isObject(message) && typeof message.method === "string" && handshake._tag !== "Ready") {
      if (message.method === "initialize") {
        if (id !== null) handshake = { _tag: "Pending", id }
      } else if (message.method === "ping" && id !== null) {
        return { answer: reply(id, { result: {} }) }
      } else if (handshake._tag === "None") {
        // A notification before initialize has no one to answer; a request gets told why.
        return id === null ? {} : {
          answer: error(id, notInitializedCode, `Server not initialized: send "initialize" before "${message.method}"`)
        }
      }
    }
    return { forward: text + "\n" }
  }

  const tooLong = error(null, invalidRequestCode, `Invalid Request: the line is longer than ${maxLineLength} characters`)

  const stdin = Stream.suspend(() => {
    // One run of stdin: the start of a line not complete yet, or whether the rest of an overlong
    // line is being dropped.
    let partial = ""
    let dropping = false
    const lines = (text: string, end: boolean): Array<Outcome> => {
      const outcomes: Array<Outcome> = []
      let start = 0
      for (let newline = text.indexOf("\n"); newline !== -1; newline = text.indexOf("\n", start)) {
        if (dropping) dropping = false
        else if (partial.length + newline - start > maxLineLength) outcomes.push({ answer: tooLong })
        else outcomes.push(classify(partial + text.slice(start, newline)))
        partial = ""
        start = newline + 1
      }
      if (dropping) return outcomes
      partial += text.slice(start)
      if (partial.length > maxLineLength) {
        outcomes.push({ answer: tooLong })
        partial = ""
        dropping = true
      } else if (end && partial.length > 0) {
        // The last line, without its newline.
        outcomes.push(classify(partial))
        partial = ""
      }
      return outcomes
    }
    const encoder = new TextEncoder()
    const handle = (outcomes: Array<Outcome>) => {
      const forward = outcomes.map((outcome) => outcome.forward ?? "").join("")
      const answers = outcomes.map((outcome) => outcome.answer ?? "").join("")
      const bytes = forward.length === 0 ? [] : [encoder.encode(forward)]
      return answers.length === 0
        ? Effect.succeed(bytes)
        : Effect.as(Stream.run(Stream.make(answers), stdout()), bytes)
    }
    return stdio.stdin.pipe(
      Stream.decodeText(),
      Stream.concat(Stream.make(undefined)), // the end of input: a last line without a newline counts
      Stream.mapEffect((text) => handle(text === undefined ? lines("", true) : lines(text, false))),
      Stream.flattenIterable
    )
  })

  return Stdio.make({
    args: stdio.args,
    stdinIsTerminal: stdio.stdinIsTerminal,
    stdoutIsTerminal: stdio.stdoutIsTerminal,
    stderrIsTerminal: stdio.stderrIsTerminal,
    stdout,
    stderr: stdio.stderr,
    stdin
  })
}

/** JSON text parsed, or `undefined` if it isn't JSON (or is too deep for the parser itself). */
const parse = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/**
 * Replaces the `Stdio` in context with the checked one: provide it to `McpServer.layerStdio`.
 *
 * @since 0.2.0
 * @category layers
 */
export const layer = (options: Options = {}): Layer.Layer<Stdio.Stdio, never, Stdio.Stdio> =>
  Layer.effect(Stdio.Stdio, make(options))
