/**
 * A duration as a layer option takes it: anything `Duration.fromInput` reads ("5 minutes", a number
 * of milliseconds, a `Duration`) that is longer than zero, validated with the rest of the options.
 * (A zero or negative timeout would turn it off, or spin; an infinite one means "never", which only
 * some options may mean.)
 */
import * as Duration from "effect/Duration"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

const longerThanZero = (u: unknown, infinite: boolean): boolean => {
  if (typeof u === "number" && Number.isNaN(u)) return false
  const duration = Duration.fromInput(u as Duration.Input)
  return Option.isSome(duration) && Duration.isPositive(duration.value) && (infinite || Duration.isFinite(duration.value))
}

/** A finite duration longer than zero. */
export const DurationInput = Schema.declare(
  (u: unknown): u is Duration.Input => longerThanZero(u, false),
  { expected: "a finite duration longer than zero" }
)

/** A duration longer than zero, or an infinite one ("never"). */
export const DurationOrNever = Schema.declare(
  (u: unknown): u is Duration.Input => longerThanZero(u, true),
  { expected: "a duration longer than zero, or infinity" }
)
