/**
 * Forking work that others wait on into a scope that may have closed: `Effect.forkIn` gives a
 * closed scope an unstarted fiber, which never runs its effect (nor its finalizers). Whoever waits
 * on that effect must then be answered some other way.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"

/**
 * Forks `effect` into `scope`; if its fiber ends without having run it, calls `neverRan`, once.
 */
export const forkOrElse = <A, E>(
  effect: Effect.Effect<A, E>,
  scope: Scope.Scope,
  neverRan: () => void,
  options?: { readonly uninterruptible?: boolean | undefined }
): Effect.Effect<void> => {
  let started = false
  return Effect.map(
    Effect.forkIn(Effect.suspend(() => (started = true, effect)), scope, options),
    (fiber) => {
      fiber.addObserver(() => {
        if (!started) neverRan()
      })
    }
  )
}
