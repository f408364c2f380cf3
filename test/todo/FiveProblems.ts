/**
 * The call with five independent problems, sent down every path (validation, the toolkit,
 * MCP): an extra `id` key, status "done", two items in_progress, "A" / "a " duplicates, blank content.
 */
export const fiveProblems = [
  { content: "Read", status: "pending", id: 1 },
  { content: "A", status: "in_progress" },
  { content: "Write", status: "done" },
  { content: "a ", status: "in_progress" },
  { content: "  ", status: "pending" }
]
