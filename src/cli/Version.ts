/** The CLI's version, as `--version` prints it. */
export const version = "0.2.0"
