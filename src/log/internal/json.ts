/**
 * Payload snapshots: every backend stores exactly JSON, so a value it would silently alter (NaN, a
 * Date, `undefined` in an array, a cycle) is refused instead, and what is stored is a frozen copy
 * that no caller can change afterwards.
 */

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
            if (item !== undefined) object[key] = visit(item, at(path, key))
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
        if (item === undefined || !isFrozenJson(item, depth + 1)) return false
      }
      return true
    }
    default:
      return false
  }
}
