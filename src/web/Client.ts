/**
 * The web view's script, written as a type-checked function and served as its source text
 * (`/app.js`, the only script the Content-Security-Policy allows). It listens to the feeds with
 * `EventSource` (which reconnects by itself, sending `Last-Event-ID`) and writes everything with
 * `textContent`: a todo like `<img src=x onerror=alert(1)>` shows as those characters. It must
 * not refer to anything outside itself: only its text reaches the browser.
 *
 * @since 0.2.0
 */

/** Runs in the browser. */
function main(): void {
  interface Item {
    readonly content: string
    readonly status: string
    readonly evidence: string | undefined
  }
  interface Overview {
    readonly todos: ReadonlyArray<Item> | null
    readonly events: number
    readonly lastWrite: number | null
    readonly lastActivity: number | null
  }

  const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)
  const numberOrNull = (u: unknown): number | null => (typeof u === "number" ? u : null)
  /** The list in a payload: `null` is "no plan in this turn", unlike `[]`. */
  const todosOf = (u: unknown): ReadonlyArray<Item> | null =>
    Array.isArray(u)
      ? u.filter(isRecord).map((item) => ({
        content: String(item.content),
        status: String(item.status),
        evidence: typeof item.evidence === "string" ? item.evidence : undefined
      }))
      : null
  const parse = (event: Event): Record<string, unknown> | undefined => {
    if (!(event instanceof MessageEvent) || typeof event.data !== "string") return undefined
    try {
      const data: unknown = JSON.parse(event.data)
      return isRecord(data) ? data : undefined
    } catch {
      return undefined
    }
  }

  const el = <K extends keyof HTMLElementTagNameMap>(tag: K, className?: string, text?: string) => {
    const node = document.createElement(tag)
    if (className !== undefined) node.className = className
    if (text !== undefined) node.textContent = text
    return node
  }
  const time = (ms: number | null) => (ms === null ? "never" : new Date(ms).toLocaleString())
  const marks: Record<string, string> = { pending: "○", in_progress: "▶", completed: "✓" }

  /** The counts line, a progress bar and the checklist. */
  const checklist = (todos: ReadonlyArray<Item> | null): Array<HTMLElement> => {
    if (todos === null) return [el("p", "empty", "No plan in this turn.")]
    if (todos.length === 0) return [el("p", "empty", "Empty list.")]
    const count = (status: string) => todos.filter((item) => item.status === status).length
    const done = count("completed")
    const bar = el("div", "bar")
    const fill = bar.appendChild(el("span"))
    fill.style.width = `${Math.round((done / todos.length) * 100)}%`
    const list = el("ul", "todos")
    for (const item of todos) {
      const li = list.appendChild(el("li", item.status))
      li.dataset.status = item.status
      li.appendChild(el("span", "mark", marks[item.status] ?? "?"))
      const content = li.appendChild(el("span", "content", item.content))
      if (item.evidence !== undefined) content.appendChild(el("span", "evidence", `evidence: ${item.evidence}`))
    }
    const summary = `${done}/${todos.length} completed · ${count("in_progress")} in progress · ${count("pending")} pending`
    return [el("p", "meta counts", summary), bar, list]
  }

  const liveState = document.getElementById("live")
  const root = document.getElementById("main")
  if (liveState === null || root === null) return
  const listen = (url: string, handlers: Record<string, (data: Record<string, unknown>) => void>) => {
    const source = new EventSource(url)
    const state = (name: string, text: string) => {
      liveState.className = `live ${name}`
      liveState.textContent = text
    }
    source.onopen = () => state("open", "live")
    source.onerror = () =>
      source.readyState === EventSource.CLOSED ? state("closed", "disconnected") : state("connecting", "reconnecting…")
    for (const [name, handle] of Object.entries(handlers)) {
      source.addEventListener(name, (event) => {
        const data = parse(event)
        if (data !== undefined) handle(data)
      })
    }
  }

  /** Every session, most recently active first, each updated in place. */
  const overviewPage = () => {
    document.title = "todo-write: sessions"
    const note = el("p", "empty", "No sessions yet: they appear here as soon as an agent writes its first list.")
    const list = el("div", "sessions")
    root.replaceChildren(el("h1", undefined, "Sessions"), note, list)
    const cards = new Map<string, { readonly card: HTMLElement; activity: number }>()
    const card = (session: string) => {
      const found = cards.get(session)
      if (found !== undefined) return found
      const made = { card: el("section", "card"), activity: -1 }
      made.card.dataset.session = session
      cards.set(session, made)
      return made
    }
    const heading = (session: string) => {
      const h2 = el("h2")
      const link = h2.appendChild(el("a", undefined, session))
      link.href = `/session/${encodeURIComponent(session)}`
      return h2
    }
    const reorder = () => {
      const sorted = [...cards.values()].sort((a, b) => b.activity - a.activity)
      sorted.forEach(({ card }, i) => {
        if (list.children[i] !== card) list.insertBefore(card, list.children[i] ?? null)
      })
      note.hidden = sorted.length > 0
    }
    listen("/events", {
      session: (data) => {
        const session = String(data.session)
        const overview: Overview = {
          todos: todosOf(data.todos),
          events: Number(data.events),
          lastWrite: numberOrNull(data.lastWrite),
          lastActivity: numberOrNull(data.lastActivity)
        }
        const entry = card(session)
        entry.activity = overview.lastActivity ?? 0
        const meta = `${overview.events} ${overview.events === 1 ? "event" : "events"} · last write ${time(overview.lastWrite)}`
        entry.card.replaceChildren(heading(session), el("p", "meta", meta), ...checklist(overview.todos))
        reorder()
      },
      problem: (data) => {
        const message = el("p", "problem", String(data.message))
        if (typeof data.session !== "string") return void root.prepend(message)
        const entry = card(data.session)
        entry.card.replaceChildren(heading(data.session), message)
        reorder()
      }
    })
  }

  /** One session: its current list, and its history newest first. */
  const sessionPage = (session: string) => {
    document.title = `todo-write: ${session}`
    const current = el("section", "card current")
    current.dataset.session = session
    current.appendChild(el("p", "empty", "No events yet."))
    const history = el("div", "history")
    root.replaceChildren(el("h1", undefined, session), current, el("h3", undefined, "History"), history)
    listen(`/events/session/${encodeURIComponent(session)}`, {
      entry: (data) => {
        const todos = todosOf(data.todos)
        const at = time(numberOrNull(data.time))
        current.replaceChildren(el("p", "meta", `updated ${at} (seq ${String(data.seq)})`), ...checklist(todos))
        const label = data.type === "todo/write"
          ? `Write at seq ${String(data.seq)} · ${at}`
          : data.type === "turn/end"
          ? `Turn ended (${String(data.reason ?? "?")}) · ${at}`
          : `Turn started · ${at}`
        const item = el("section", "card")
        item.appendChild(el("p", "meta", label))
        if (data.type !== "turn/start") item.append(...checklist(todos))
        history.prepend(item)
      },
      problem: (data) => void current.replaceChildren(el("p", "problem", String(data.message)))
    })
  }

  const path = /^\/session\/([^/]+)$/.exec(location.pathname)
  if (path?.[1] === undefined) overviewPage()
  else sessionPage(decodeURIComponent(path[1]))
}

/**
 * The script's source, as served.
 *
 * @since 0.2.0
 * @category assets
 */
export const script = `"use strict";\n(${main.toString()})();\n`
