/**
 * The policy choices every command that describes or serves the tool takes: `--in-progress`
 * (required) and `--evidence` (default: invite).
 */
import { Flag } from "effect/cli"

export const inProgressChoices = ["single", "parallel"] as const
export type InProgress = (typeof inProgressChoices)[number]

export const evidenceChoices = ["invite", "require"] as const
export type Evidence = (typeof evidenceChoices)[number]

/** `--evidence invite|require`: whether a completed todo may, or must, carry evidence. */
export const evidenceFlag = Flag.Literals("evidence", evidenceChoices).pipe(
  Flag.withDescription("invite: a completed todo may carry evidence; require: every completed todo must"),
  Flag.withDefault("invite")
)

export const policyOf = (choice: InProgress, evidence: Evidence = "invite") => ({
  allowParallelInProgress: choice === "parallel",
  requireCompletedEvidence: evidence === "require"
})
