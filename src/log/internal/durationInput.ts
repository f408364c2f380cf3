/**
 * A duration as a layer option takes it: anything `Duration.fromInput` reads ("5 minutes", a number
 * of milliseconds, a `Duration`) of at least a millisecond, validated with the rest of the options.
 * (A shorter one would turn a timeout off, or make a timer loop spin; an infinite one means "never",
 * which only some options may mean.)
 */
import * as Duration from "effect/Duration"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

const atLeastAMillisecond = (u: unknown, infinityAllowed: boolean): boolean => {
  if (typeof u === "number" && Number.isNaN(u)) return false
  const duration = Duration.fromInput(u as Duration.Input)
  return Option.isSome(duration) && Duration.toMillis(duration.value) >= 1 && (infinityAllowed || Duration.isFinite(duration.value))
}

/** A finite duration of at least a millisecond. */
export const DurationInput = Schema.declare(
  (u: unknown): u is Duration.Input => atLeastAMillisecond(u, false),
  { expected: "a finite duration of at least a millisecond" }
)

/** A duration of at least a millisecond, or an infinite one ("never"). */
export const DurationOrNever = Schema.declare(
  (u: unknown): u is Duration.Input => atLeastAMillisecond(u, true),
  { expected: "a duration of at least a millisecond, or infinity" }
)
