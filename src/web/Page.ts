/**
 * The web view's static page and its style sheet. The page carries no data: its script (`Client`)
 * fetches everything as JSON over Server-Sent Events and writes it into the page as text, so no
 * todo, session id or message is ever parsed as HTML.
 *
 * @since 0.2.0
 */

/**
 * The one HTML page, for the overview and for a session alike (the script tells them apart by path).
 *
 * @since 0.2.0
 * @category assets
 */
export const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>todo-write</title>
<link rel="icon" href="/favicon.svg">
<link rel="stylesheet" href="/app.css">
<script src="/app.js" defer></script>
</head>
<body>
<header>
<a id="home" href="/">todo-write</a>
<span id="live" class="live connecting">connecting…</span>
</header>
<main id="main"><noscript>This page shows the todo lists live with a small script; enable JavaScript for it.</noscript></main>
</body>
</html>
`

/**
 * The page's icon: a check mark.
 *
 * @since 0.2.0
 * @category assets
 */
export const icon = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16">` +
  `<rect width="16" height="16" rx="3" fill="#16a34a"/>` +
  `<path d="M4 8.5l2.5 2.5L12 5.5" fill="none" stroke="#fff" stroke-width="2" stroke-linecap="round"/></svg>`

/**
 * The style sheet: one column, readable on a phone, light and dark.
 *
 * @since 0.2.0
 * @category assets
 */
export const css = `:root {
  --bg: #f6f7f9; --card: #fff; --fg: #1d2330; --muted: #667085; --line: #e4e7ec;
  --pending: #98a2b3; --progress: #2563eb; --done: #16a34a; --bad: #dc2626;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  color: var(--fg); background: var(--bg);
}
@media (prefers-color-scheme: dark) {
  :root { --bg: #12151c; --card: #1b2029; --fg: #e6e9ef; --muted: #98a2b3; --line: #2b3240; }
}
* { box-sizing: border-box; }
body { margin: 0; }
header {
  display: flex; align-items: center; justify-content: space-between; gap: 1rem;
  padding: .75rem 1rem; border-bottom: 1px solid var(--line); background: var(--card);
  position: sticky; top: 0;
}
header a { color: inherit; font-weight: 700; text-decoration: none; }
.live { font-size: .8rem; color: var(--muted); }
.live::before { content: "●"; margin-right: .35rem; }
.live.open::before { color: var(--done); }
.live.connecting::before, .live.closed::before { color: var(--bad); }
main { max-width: 46rem; margin: 0 auto; padding: 1rem; }
h1 { font-size: 1.2rem; margin: .25rem 0 1rem; word-break: break-all; }
h2 { font-size: 1rem; margin: 0; word-break: break-all; }
h2 a { color: inherit; }
.empty { color: var(--muted); }
.card {
  background: var(--card); border: 1px solid var(--line); border-radius: .6rem;
  padding: .8rem 1rem; margin: 0 0 .9rem;
}
.meta { color: var(--muted); font-size: .8rem; margin: .25rem 0 .5rem; }
.problem { color: var(--bad); font-size: .85rem; white-space: pre-wrap; }
.bar { height: .3rem; background: var(--line); border-radius: .15rem; overflow: hidden; margin: .4rem 0 .6rem; }
.bar > span { display: block; height: 100%; background: var(--done); }
ul.todos { list-style: none; margin: 0; padding: 0; }
ul.todos li { display: flex; gap: .55rem; padding: .2rem 0; line-height: 1.35; }
.mark { flex: none; width: 1.1rem; text-align: center; font-weight: 700; }
.content { white-space: pre-wrap; overflow-wrap: anywhere; }
.evidence { display: block; color: var(--muted); font-size: .8rem; overflow-wrap: anywhere; }
li.pending .mark { color: var(--pending); }
li.in_progress .mark { color: var(--progress); }
li.in_progress .content { font-weight: 600; }
li.completed .mark { color: var(--done); }
li.completed .content { color: var(--muted); text-decoration: line-through; }
h3 { font-size: .9rem; margin: 1.4rem 0 .6rem; color: var(--muted); text-transform: uppercase; letter-spacing: .04em; }
.history .card { padding: .6rem .9rem; }
`
