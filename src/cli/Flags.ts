/**
 * The flags several commands share: where session logs live (`--dir`, `--store`), and the policy of
 * every command that describes or serves the tool (`--in-progress`, `--evidence`). Only `effect/cli`
 * here: the command line is built from this on every start, whatever the command.
 */
import * as Flag from "effect/cli/Flag"

export const defaultDirectory = "./.todo-write/sessions"

/** `--dir`: the directory of session files. */
export const directory = Flag.String("dir").pipe(
  Flag.withDescription(`The directory of session logs, one <session>.jsonl file per session (default: ${defaultDirectory})`),
  Flag.withDefault(defaultDirectory)
)

export const storeChoices = ["file", "postgres"] as const
export type Store = (typeof storeChoices)[number]

/** `--store file|postgres`. */
export const store = Flag.Literals("store", storeChoices).pipe(
  Flag.withDescription("Where session logs live: JSONL files in --dir, or PostgreSQL at $DATABASE_URL (default: file)"),
  Flag.withDefault("file")
)

export const inProgressChoices = ["single", "parallel"] as const
export type InProgress = (typeof inProgressChoices)[number]

export const evidenceChoices = ["invite", "require"] as const
export type Evidence = (typeof evidenceChoices)[number]

/** `--evidence invite|require`: whether a completed todo may, or must, carry evidence. */
export const evidenceFlag = Flag.Literals("evidence", evidenceChoices).pipe(
  Flag.withDescription("invite: a completed todo may carry evidence; require: every completed todo must"),
  Flag.withDefault("invite")
)

/** The `TodoPolicy` options the two policy flags choose. */
export const policyOf = (choice: InProgress, evidence: Evidence = "invite") => ({
  allowParallelInProgress: choice === "parallel",
  requireCompletedEvidence: evidence === "require"
})
