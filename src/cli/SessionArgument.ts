/**
 * A session id given on the command line, validated as everywhere else.
 */
import { Effect } from "effect"
import * as SessionId from "../log/SessionId.ts"
import { userError } from "./Store.ts"

export const decode = (id: string) =>
  SessionId.decode(id).pipe(Effect.mapError((error) => userError(`invalid session id ${JSON.stringify(id)}: ${error.message}`)))
