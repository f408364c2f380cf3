/**
 * Who holds a lock or a journal: a process, named by its pid and, where the system tells (Linux's
 * `/proc`), by when it started: the boot id and the start time in clock ticks since boot (field 22
 * of `/proc/<pid>/stat`). A pid alone is not enough: after a crash the pid may belong to another
 * process (or, in a restarted container, to this very one), and a lock or journal would then look
 * alive forever. With the start time, a holder is alive only if a process with that pid is running
 * AND started at that moment of that boot.
 *
 * Pids only mean something within one pid namespace: a session directory must not be shared between
 * machines, or containers that don't share a pid namespace.
 */
import * as Effect from "effect/Effect"
import type * as FileSystem from "effect/FileSystem"

/** A process: its pid and when it started (`<boot id>:<start ticks>`), if known. */
export interface Owner {
  readonly pid: number
  readonly started: string | undefined
}

/** A pid written as text, or `undefined` if the text isn't one. */
export const parsePid = (text: string): number | undefined => {
  const pid = Number(text)
  return text.length > 0 && Number.isInteger(pid) && pid > 0 ? pid : undefined
}

/** Whether a process with this pid exists (it may have been reused). */
export const pidExists = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (cause) {
    // EPERM: the process exists but belongs to someone else.
    return typeof cause === "object" && cause !== null && "code" in cause && cause.code === "EPERM"
  }
}

/** The start time of `/proc/<pid>/stat`, field 22: after the parenthesized command name, the 20th field. */
const startTicks = (stat: string): string | undefined => {
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  const ticks = fields[19]
  return ticks !== undefined && /^\d+$/.test(ticks) ? ticks : undefined
}

/** When the process with this pid started, `undefined` if the system doesn't say (no `/proc`, no such process). */
export const startedOf = (fs: FileSystem.FileSystem, pid: number | "self"): Effect.Effect<string | undefined> =>
  Effect.all([
    fs.readFileString("/proc/sys/kernel/random/boot_id"),
    fs.readFileString(`/proc/${pid}/stat`)
  ]).pipe(
    Effect.map(([boot, stat]) => {
      const ticks = startTicks(stat)
      return ticks === undefined || boot.trim() === "" ? undefined : `${boot.trim()}:${ticks}`
    }),
    Effect.orElseSucceed(() => undefined)
  )

/** This process. */
export const self = (fs: FileSystem.FileSystem): Effect.Effect<Owner> =>
  Effect.map(startedOf(fs, "self"), (started) => ({ pid: process.pid, started }))

/**
 * Whether the owner is still running: its pid exists and, when both start times are known, the
 * process with that pid started when the owner did. With no start time to compare (a lock of an
 * earlier version, a system without `/proc`), a pid that exists counts as alive.
 */
export const isAlive = (fs: FileSystem.FileSystem, owner: Owner): Effect.Effect<boolean> => {
  if (!pidExists(owner.pid)) return Effect.succeed(false)
  if (owner.started === undefined) return Effect.succeed(true)
  return Effect.map(startedOf(fs, owner.pid), (started) => started === undefined || started === owner.started)
}
