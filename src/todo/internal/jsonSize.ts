/**
 * The size of an argument value as UTF-8 JSON, measured against a budget before anything else reads
 * it: a huge or deeply nested value costs no more than the budget, and can't overflow the stack.
 */

const isObject = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

/** The UTF-8 length of `s`, or more than `budget` once it is sure to exceed it. */
const stringBytes = (s: string, budget: number): number => {
  // 3 bytes per UTF-16 unit is an upper bound: when it fits, there's no need to count.
  if (3 * s.length + 2 <= budget) return 3 * s.length + 2
  if (s.length > budget) return budget + 1
  let n = 2
  for (let i = 0; i < s.length && n <= budget; i++) {
    const c = s.charCodeAt(i)
    n += c < 0x80 ? 1 : c < 0x800 ? 2 : c >= 0xd800 && c <= 0xdbff ? (i++, 4) : 3
  }
  return n
}

/**
 * `u`, as JSON, fits in `budget` bytes. An explicit stack, not recursion, so deep nesting can't
 * overflow it; it stops as soon as the budget is spent, so a huge value costs no more than the budget.
 */
export const fitsIn = (u: unknown, budget: number): boolean => {
  let left = budget
  const stack: Array<unknown> = [u]
  while (stack.length > 0) {
    const value = stack.pop()
    if (typeof value === "string") {
      left -= stringBytes(value, left)
    } else if (Array.isArray(value)) {
      left -= 1 + value.length
      if (left < 0) return false
      for (const element of value) stack.push(element)
    } else if (isObject(value)) {
      const keys = Object.keys(value)
      left -= 1 + 2 * keys.length
      if (left < 0) return false
      for (const key of keys) {
        left -= stringBytes(key, left)
        if (left < 0) return false
        stack.push(value[key])
      }
    } else {
      left -= 5 // a number, a boolean, null
    }
    if (left < 0) return false
  }
  return true
}

