/**
 * A duration as a layer option takes it: anything `Duration.fromInput` reads ("5 minutes", a number
 * of milliseconds, a `Duration`), validated with the rest of the options.
 */
import * as Duration from "effect/Duration"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

export const DurationInput = Schema.declare(
  (u: unknown): u is Duration.Input => Option.isSome(Duration.fromInput(u as Duration.Input)),
  { expected: "a duration" }
)
