/**
 * A session's identity. Backends turn it into a file name or an SQL key, so it is validated before
 * any I/O: a bounded length and a character set with no path separators, dots or control characters.
 *
 * @since 0.2.0
 */
import * as Schema from "effect/Schema"

/**
 * The longest id accepted.
 *
 * @since 0.2.0
 * @category constants
 */
export const maxLength = 128

const reservedNames = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])$/i

/**
 * A validated session id: letters, digits, `_` and `-`, starting with a letter or digit, at most
 * `maxLength` long, never a Windows device name.
 *
 * @since 0.2.0
 * @category schemas
 */
export const SessionId = Schema.String.check(
  Schema.isPattern(/^[A-Za-z0-9][A-Za-z0-9_-]*$/, {
    expected: "a session id of letters, digits, '_' and '-', starting with a letter or digit"
  }),
  Schema.isMaxLength(maxLength),
  Schema.makeFilter((id: string) => !reservedNames.test(id) || `${JSON.stringify(id)} is a reserved device name`)
).pipe(Schema.brand("SessionId")).annotate({ description: "A session id" })

/**
 * @since 0.2.0
 * @category models
 */
export type SessionId = typeof SessionId.Type

/**
 * Decodes a session id, failing with a `SchemaError` that says what is wrong.
 *
 * @since 0.2.0
 * @category decoding
 */
export const decode = Schema.decodeUnknownEffect(SessionId)

/**
 * Decodes a session id, throwing on a bad one: for ids written in code.
 *
 * @since 0.2.0
 * @category decoding
 */
export const decodeSync = Schema.decodeUnknownSync(SessionId)

/**
 * Whether a value is a valid session id.
 *
 * @since 0.2.0
 * @category guards
 */
export const is = Schema.is(SessionId)
