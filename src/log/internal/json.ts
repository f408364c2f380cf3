/**
 * Payload snapshots: every backend stores exactly JSON, so a value it would silently alter (NaN, a
 * Date, `undefined` in an array, a cycle) is refused instead, and what is stored is a frozen copy
 * that no caller can change afterwards.
 *
 * A string with a lone surrogate (`"x\ud800y"`: half of a UTF-16 pair, not Unicode text) is refused
 * too, on every backend alike: JSON text can only carry it as an escape, PostgreSQL's `jsonb`
 * rejects that escape, and UTF-8 can't encode it.
 */

/** A lone surrogate: in `u` mode a well-formed pair is one code point, so only a lone half matches. */
const loneSurrogate = /\p{Cs}/u

const notText = (path: string) => `${path}: a lone surrogate (half of a UTF-16 pair) is not Unicode text`

const isPlainObject = (value: object): boolean => {
  const proto = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

const at = (path: string, key: string | number) => typeof key === "number" ? `${path}[${key}]` : `${path}.${key}`

/**
 * A frozen copy of a JSON payload, or what in it JSON can't hold. Object properties that are
 * `undefined` are left out, as absent.
 */
export const snapshot = (value: unknown): { readonly copy: unknown } | { readonly problem: string } => {
  // A deeply frozen JSON value can't change under anyone: it is its own snapshot.
  if (isFrozenJson(value, 0)) return { copy: value }
  const ancestors = new Set<object>()
  let problem: string | undefined
  const visit = (v: unknown, path: string): unknown => {
    switch (typeof v) {
      case "string":
        if (loneSurrogate.test(v)) problem = notText(path)
        return v
      case "boolean":
        return v
      case "number":
        if (Number.isFinite(v)) return v
        problem = `${path}: ${v} is not a JSON number`
        return undefined
      case "object": {
        if (v === null) return null
        if (ancestors.has(v)) {
          problem = `${path}: a cycle`
          return undefined
        }
        ancestors.add(v)
        let out: unknown
        if (Array.isArray(v)) {
          const array: Array<unknown> = new Array(v.length)
          for (let i = 0; i < v.length && problem === undefined; i++) {
            if (v[i] === undefined) problem = `${at(path, i)}: undefined is not JSON`
            else array[i] = visit(v[i], at(path, i))
          }
          out = Object.freeze(array)
        } else if (isPlainObject(v)) {
          const object: Record<string, unknown> = {}
          for (const key in v) {
            const item = (v as Record<string, unknown>)[key]
            if (loneSurrogate.test(key)) problem = notText(`${path} (a key)`)
            else if (item !== undefined) object[key] = visit(item, at(path, key))
            if (problem !== undefined) break
          }
          out = Object.freeze(object)
        } else {
          problem = `${path}: a ${v.constructor?.name ?? "non-plain object"} is not JSON`
        }
        ancestors.delete(v)
        return out
      }
      default:
        problem = `${path}: a ${typeof v} is not JSON`
        return undefined
    }
  }
  const copy = visit(value, "data")
  return problem === undefined ? { copy } : { problem }
}

/** `v` is JSON, frozen all the way down, with no `undefined` property; `false` when unsure. */
const isFrozenJson = (v: unknown, depth: number): boolean => {
  switch (typeof v) {
    case "string":
      return !loneSurrogate.test(v)
    case "boolean":
      return true
    case "number":
      return Number.isFinite(v)
    case "object": {
      if (v === null) return true
      // Deep or cyclic values take the copying path, which reports cycles.
      if (depth > 32 || !Object.isFrozen(v)) return false
      if (Array.isArray(v)) {
        for (let i = 0; i < v.length; i++) if (v[i] === undefined || !isFrozenJson(v[i], depth + 1)) return false
        return true
      }
      if (!isPlainObject(v)) return false
      for (const key in v) {
        const item = (v as Record<string, unknown>)[key]
        if (item === undefined || loneSurrogate.test(key) || !isFrozenJson(item, depth + 1)) return false
      }
      return true
    }
    default:
      return false
  }
}

/** The UTF-8 length of well-formed text. */
const utf8Length = (text: string): number => {
  let bytes = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c < 0x80) bytes += 1
    else if (c < 0x800) bytes += 2
    else if (c >= 0xd800 && c <= 0xdbff) {
      bytes += 4 // a pair: one code point
      i++
    } else bytes += 3
  }
  return bytes
}

/**
 * An event ready to store: the payload's frozen copy and its JSON text, or why it can't be stored
 * (not JSON, or, with `maxBytes`, larger than the backend can store and read back: the UTF-8 of the
 * type's and the payload's JSON text together).
 */
export const encode = (
  type: string,
  data: unknown,
  maxBytes: number | undefined
): { readonly copy: unknown; readonly json: string } | { readonly problem: string } => {
  if (loneSurrogate.test(type)) return { problem: notText("the event type") }
  const snapshotted = snapshot(data)
  if ("problem" in snapshotted) return snapshotted
  const json = JSON.stringify(snapshotted.copy)
  if (maxBytes !== undefined && (type.length + json.length) * 3 > maxBytes) {
    const bytes = utf8Length(type) + utf8Length(json)
    if (bytes > maxBytes) return { problem: `the event is ${bytes} bytes of JSON, more than the ${maxBytes} this log stores` }
  }
  return { copy: snapshotted.copy, json }
}
