/**
 * The shape half of `todo_write`'s validation: decoding one item with the schema, strictly, and
 * turning the schema's issue tree into coded violations with messages written for the model.
 */
import * as Schema from "effect/Schema"
import type * as SchemaIssue from "effect/SchemaIssue"
import * as Todo from "../Todo.ts"
import * as TodoText from "../TodoText.ts"
import type { Violation } from "../TodoWriteError.ts"

type Path = ReadonlyArray<string | number>

export const isObject = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

/** What the model sent, said briefly: a short value quoted, anything else by its kind. */
export const describe = (u: unknown): string =>
  typeof u === "string"
    ? TodoText.quote(u, 40)
    : typeof u === "number" || typeof u === "boolean" || u === null
    ? String(u)
    : Array.isArray(u)
    ? "an array"
    : u === undefined
    ? "nothing"
    : `a${typeof u === "object" ? "n object" : ` ${typeof u}`}`

const statusList = Todo.Status.literals.map((s) => JSON.stringify(s)).join(", ")

export const decodeItem = Schema.decodeUnknownResult(Todo.ItemArguments, { onExcessProperty: "error", errors: "all" })

/** The message for a field that didn't decode. */
const fieldMessage = (key: string | number | undefined, value: unknown): [Violation["code"], string] => {
  switch (key) {
    case undefined:
      return ["invalid_type", `each item must be an object {"content", "status"}; got ${describe(value)}`]
    case "status":
      return ["invalid_status", `status must be one of ${statusList}; got ${describe(value)}`]
    case "evidence":
      return ["invalid_type", `evidence must be a string (or null for none); got ${describe(value)}`]
    default:
      return ["invalid_type", `${key} must be a string; got ${describe(value)}`]
  }
}

/** One violation per leaf of the schema's issue tree, relative to the item at `at`. */
export const shapeViolations = (issue: SchemaIssue.Issue, raw: unknown, at: Path, path: Path, out: Array<Violation>): void => {
  switch (issue._tag) {
    case "Pointer":
      return shapeViolations(issue.issue, raw, at, [...path, ...issue.path.map((k) => typeof k === "number" ? k : String(k))], out)
    case "Composite":
      for (const inner of issue.issues) shapeViolations(inner, raw, at, path, out)
      return
    case "Encoding":
      return shapeViolations(issue.issue, raw, at, path, out)
    case "MissingKey":
      out.push({ code: "missing_key", path: [...at, ...path], message: `${path.at(-1)} is missing: every item needs content and status` })
      return
    case "UnexpectedKey":
      out.push({
        code: "excess_property",
        path: [...at, ...path],
        message: "unknown property: items hold only content, status and evidence"
      })
      return
    default: {
      const key = path[0]
      const [code, message] = fieldMessage(key, key === undefined ? raw : isObject(raw) ? raw[key] : undefined)
      out.push({ code, path: [...at, ...path], message })
    }
  }
}

