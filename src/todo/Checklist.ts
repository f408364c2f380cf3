/**
 * A todo list as a person reads it: one line per item with a status mark, then the counts.
 */
import * as Todo from "./Todo.ts"

const marks: Record<Todo.Status, string> = {
  pending: "[ ]",
  in_progress: "[>]",
  completed: "[x]"
}

export const render = (todos: Todo.List | null): string => {
  if (todos === null) return "(no plan in this turn)"
  if (todos.length === 0) return "(empty list)"
  const counts = Todo.count(todos)
  const lines = todos.map((item) => `${marks[item.status]} ${item.content}`)
  lines.push(`${counts.completed}/${todos.length} completed, ${counts.in_progress} in progress, ${counts.pending} pending`)
  return lines.join("\n")
}
