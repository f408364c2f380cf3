/**
 * A session id given on the command line, validated as everywhere else.
 */
import * as Effect from "effect/Effect"
import * as SessionId from "../log/SessionId.ts"
import { userError } from "./Store.ts"

const extension = ".jsonl"

/** For a session's file name or path given instead of its id, the id and directory meant. */
const suggestion = (argument: string): string => {
  if (!argument.endsWith(extension)) return ""
  const slash = Math.max(argument.lastIndexOf("/"), argument.lastIndexOf("\\"))
  const id = argument.slice(slash + 1, -extension.length)
  if (!SessionId.is(id)) return ""
  return slash === -1
    ? `; did you mean the session id "${id}"?`
    : `; did you mean --dir ${JSON.stringify(argument.slice(0, slash) || "/")} and the session id "${id}"?`
}

export const decode = (id: string) =>
  SessionId.decode(id).pipe(
    Effect.mapError((error) =>
      userError(`invalid session id ${JSON.stringify(id)}: ${error.message}${suggestion(id)}`)
    )
  )
