/**
 * A session log whose every append and every load is checked against the registered invariants.
 * Only `SessionInvariant.layer` provides it, over a raw `SessionLog`: code that folds payloads (the
 * projection store, the todo tool, turns) needs this service, so wiring a backend without the
 * invariant middleware fails to compile instead of folding unchecked data.
 *
 * @since 0.2.0
 */
import * as Context from "effect/Context"
import type * as SessionLog from "./SessionLog.ts"

/**
 * The checked log: the same operations as `SessionLog`, behind the invariant middleware.
 *
 * @since 0.2.0
 * @category services
 */
export class CheckedSessionLog
  extends Context.Service<CheckedSessionLog, SessionLog.Service>()("effect-todo-write/CheckedSessionLog")
{}
