/**
 * A session's identity. Backends turn it into a file name or an SQL key, so it is validated before
 * any I/O: a bounded length and a character set with no path separators, dots or control characters.
 */
import { Schema } from "effect"

export const maxLength = 128

const reservedNames = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])$/i

export const SessionId = Schema.String.check(
  Schema.isPattern(/^[A-Za-z0-9][A-Za-z0-9_-]*$/, {
    expected: "a session id of letters, digits, '_' and '-', starting with a letter or digit"
  }),
  Schema.isMaxLength(maxLength),
  Schema.makeFilter((id: string) => !reservedNames.test(id) || `${JSON.stringify(id)} is a reserved device name`)
).pipe(Schema.brand("SessionId")).annotate({ description: "A session id" })

export type SessionId = typeof SessionId.Type

export const decode = Schema.decodeUnknownEffect(SessionId)
export const decodeSync = Schema.decodeUnknownSync(SessionId)
export const is = Schema.is(SessionId)
