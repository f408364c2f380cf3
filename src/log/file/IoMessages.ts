/**
 * What crosses between the event loop's thread and the journal's I/O thread (`IoThread`): groups of
 * batches one way, commits' answers the other. Both go as numbers in transferred buffers, with an
 * object only where one is rare (a writer told once, a failure): structured cloning an object per
 * batch cost ~1.5 µs per batch on each side, and an answer of 128 outcomes 50-80 µs on each, against
 * ~0.2 µs per batch and 6-15 µs per answer so. The thread runs `handedOf` and `packed` as source text:
 * they use nothing but their parameters and the language's globals.
 */
import type * as IoCalls from "./IoCalls.ts"

/** A batch to hand over: its journal record's header, and its lines. */
export interface Batch {
  readonly id: number
  readonly header: Uint8Array
  readonly lines: Uint8Array
  readonly write: IoCalls.Write | undefined
}

/**
 * A group of batches as a message: their records one after another in one buffer, and per batch
 * `fields` numbers (its id, its writer's id or -1, where its lines start and where it ends). Writers
 * go to the thread once (`fresh`), by id.
 */
export interface Group {
  readonly kind: "write"
  readonly records: Uint8Array<ArrayBuffer>
  readonly layout: Float64Array<ArrayBuffer>
  readonly fresh: ReadonlyArray<readonly [number, IoCalls.Write]>
  /** Writers the thread may let go of, once this group's batches are written. */
  readonly forgotten: ReadonlyArray<number>
}

/** The numbers of a batch in `Group.layout`. */
export const fields = 4

/** Batches' records one after another in one buffer, and where each starts and ends; writers' ids left at -1. */
export const laidOut = (batches: ReadonlyArray<Batch>): Pick<Group, "records" | "layout"> => {
  let length = 0
  for (const batch of batches) length += batch.header.length + batch.lines.length
  const records = new Uint8Array(length)
  const layout = new Float64Array(batches.length * fields)
  let at = 0
  for (let i = 0; i < batches.length; i++) {
    const { header, id, lines } = batches[i]!
    records.set(header, at)
    records.set(lines, at + header.length)
    at += header.length + lines.length
    // Field by field: an array per batch would be garbage on the event loop's thread.
    const base = i * fields
    layout[base] = id
    layout[base + 1] = -1
    layout[base + 2] = header.length
    layout[base + 3] = at
  }
  return { records, layout }
}

/** A group's batches as the thread takes them, their writers from `writers` by id (`fields`: as above). */
export const handedOf = (
  { layout, records }: Pick<Group, "records" | "layout">,
  writers: ReadonlyMap<number, IoCalls.Write>,
  stride: number
): Array<IoCalls.Handed> => {
  const group: Array<IoCalls.Handed> = []
  for (let i = 0, at = 0; i < layout.length; i += stride) {
    const writer = layout[i + 1]!
    const end = layout[i + 3]!
    // -1 (no writer) names none.
    group.push({ id: layout[i]!, buffer: records.subarray(at, end), lines: layout[i + 2]!, write: writers.get(writer) })
    at = end
  }
  return group
}

/** Batches as the thread takes them, made in place (their writers as they are, with no ids). */
export const assembled = (batches: ReadonlyArray<Batch>): ReadonlyArray<IoCalls.Handed> =>
  handedOf(laidOut(batches), new Map(), fields).map((handed, i) => ({ ...handed, write: batches[i]!.write }))

/** The outcomes' tags, by their number in `Packed.kinds`. */
export const tags: ReadonlyArray<IoCalls.Outcome["_tag"]> = ["LockFailed", "LockNotHeld", "WriteFailed", "NotDurable", "Durable"]

/**
 * A commit's answer as a message: per batch its id, its outcome's tag number (+8 with an identity
 * found, +16 with its inode) and the identity (device, inode, size) in `found`; faults by index.
 */
export interface Packed {
  readonly ids: Float64Array<ArrayBuffer>
  readonly kinds: Uint8Array<ArrayBuffer>
  readonly found: BigUint64Array<ArrayBuffer>
  readonly faults: ReadonlyArray<readonly [number, IoCalls.Fault]>
  readonly stored: number
  readonly journal: IoCalls.Response["journal"]
  /** How many writers the thread holds. */
  readonly writers: number
}

/** An answer packed (on the thread); `names`: `tags`. */
export const packed = (response: IoCalls.Response, names: ReadonlyArray<string>, writers: number): Packed => {
  const count = response.ids.length
  const ids = new Float64Array(response.ids)
  const kinds = new Uint8Array(count)
  const found = new BigUint64Array(count * 3)
  const faults: Array<readonly [number, IoCalls.Fault]> = []
  for (let i = 0; i < count; i++) {
    const outcome = response.outcomes[i]!
    const identity = "found" in outcome ? outcome.found : undefined
    kinds[i] = names.indexOf(outcome._tag) + (identity === undefined ? 0 : 8) + (identity?.ino === undefined ? 0 : 16)
    if (identity !== undefined) found.set([identity.dev, identity.ino ?? 0n, identity.size], i * 3)
    if ("fault" in outcome && outcome.fault !== undefined) faults.push([i, outcome.fault])
  }
  return { ids, kinds, found, faults, stored: response.stored, journal: response.journal, writers }
}

/** A commit's answer, and how many writers the thread holds then (none in place): at most its bound. */
export type Committed = IoCalls.Response & { readonly writers: number }

/** An answer as `IoCalls.Response`, with how many writers the thread holds. */
export const unpacked = (message: Packed): Committed => {
  const faults = new Map(message.faults)
  const outcomes = Array.from(message.kinds, (kind, i): IoCalls.Outcome => {
    const found = kind & 8
      ? { dev: message.found[i * 3]!, ino: kind & 16 ? message.found[i * 3 + 1]! : undefined, size: message.found[i * 3 + 2]! }
      : undefined
    const fault = faults.get(i)
    switch (tags[kind & 7]) {
      case "LockFailed":
        return { _tag: "LockFailed", fault: fault! }
      case "LockNotHeld":
        return { _tag: "LockNotHeld", found }
      case "WriteFailed":
        return { _tag: "WriteFailed", fault: fault! }
      case "NotDurable":
        return { _tag: "NotDurable" }
      default:
        return { _tag: "Durable", found, fault }
    }
  })
  return { ids: Array.from(message.ids), outcomes, stored: message.stored, journal: message.journal, writers: message.writers }
}
