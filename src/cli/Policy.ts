/**
 * The `--in-progress` choice every command that describes or serves the tool takes.
 */
export const inProgressChoices = ["single", "parallel"] as const
export type InProgress = (typeof inProgressChoices)[number]

export const policyOf = (choice: InProgress) => ({ allowParallelInProgress: choice === "parallel" })
