/**
 * A todo list as a person reads it: one line per item with a status mark, the evidence of a
 * completed item on the line under it, then the counts. Text is printed through
 * `TodoText.printable`, so content a log holds from before validation refused control characters
 * (or from another writer) can't fake an item or reach the terminal as an escape sequence.
 *
 * @since 0.2.0
 */
import * as Todo from "./Todo.ts"
import * as TodoText from "./TodoText.ts"

const marks: Record<Todo.Status, string> = {
  pending: "[ ]",
  in_progress: "[>]",
  completed: "[x]"
}

/**
 * The checklist of a list; `null` (no plan in this turn) and `[]` (an empty list) read differently.
 *
 * @since 0.2.0
 * @category rendering
 */
export const render = (todos: Todo.List | null): string => {
  if (todos === null) return "(no plan in this turn)"
  if (todos.length === 0) return "(empty list)"
  const counts = Todo.count(todos)
  const lines: Array<string> = []
  for (const item of todos) {
    lines.push(`${marks[item.status]} ${TodoText.printable(item.content)}`)
    if (item.evidence !== undefined) {
      lines.push(`    evidence: ${TodoText.printable(item.evidence)}`)
    }
  }
  lines.push(`${counts.completed}/${todos.length} completed, ${counts.in_progress} in progress, ${counts.pending} pending`)
  return lines.join("\n")
}
