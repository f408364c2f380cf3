/**
 * Timing for the benchmarks: every figure is a ratio against a baseline measured in the same run,
 * with target and baseline interleaved round by round so that machine noise hits both alike.
 */
export interface Comparison {
  readonly name: string
  /** Median time per operation, in microseconds. */
  readonly target: number
  readonly baseline: number
  readonly ratio: number
  /** The target ratio and which way it must hold. */
  readonly goal?: { readonly max: number } | undefined
  readonly note?: string | undefined
}

export const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

export const percentile = (values: ReadonlyArray<number>, p: number): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}

const now = () => process.hrtime.bigint()

/** Collects garbage between batches (with --expose-gc), so one batch's garbage isn't billed to the next. */
const collect = () => (globalThis as { gc?: () => void }).gc?.()

/** Runs `op` `count` times (awaiting it if it returns a promise) and answers µs per operation. */
export const timeBatch = async (op: () => unknown, count: number): Promise<number> => {
  const start = now()
  for (let i = 0; i < count; i++) {
    const result = op()
    if (result instanceof Promise) await result
  }
  return Number(now() - start) / 1000 / count
}

/** Times a whole batch function that performs `count` operations itself (e.g. one Effect program). */
export const timeRun = async (run: () => unknown, count: number): Promise<number> => {
  const start = now()
  const result = run()
  if (result instanceof Promise) await result
  return Number(now() - start) / 1000 / count
}

/**
 * Interleaves `rounds` rounds of target and baseline batches (after a warm-up round each) and
 * compares their medians.
 */
export const compare = async (options: {
  readonly name: string
  readonly rounds: number
  readonly target: () => Promise<number>
  readonly baseline: () => Promise<number>
  readonly goal?: { readonly max: number } | undefined
  readonly note?: string | undefined
}): Promise<Comparison> => {
  await options.target()
  await options.baseline()
  const targets: Array<number> = []
  const baselines: Array<number> = []
  const target = async () => (collect(), targets.push(await options.target()))
  const baseline = async () => (collect(), baselines.push(await options.baseline()))
  for (let round = 0; round < options.rounds; round++) {
    if (round % 2 === 0) {
      await target()
      await baseline()
    } else {
      await baseline()
      await target()
    }
  }
  const targetMedian = median(targets)
  const baselineMedian = median(baselines)
  return {
    name: options.name,
    target: targetMedian,
    baseline: baselineMedian,
    ratio: targetMedian / baselineMedian,
    goal: options.goal,
    note: options.note
  }
}

export const verdict = (c: Comparison): string =>
  c.goal === undefined ? "" : c.ratio <= c.goal.max ? `ok (≤ ${c.goal.max}×)` : `MISS (target ≤ ${c.goal.max}×)`
