/**
 * How the text of a todo (its content and its evidence) is judged and shown: which characters it
 * may not hold, when it counts as empty, when two texts count as the same, and how a text is quoted
 * back to the model or printed for a person without spoofing the display. Every function here runs
 * in time linear in its input and never recurses per character, whatever the input's size.
 *
 * @since 0.2.0
 */

// Characters that change the display rather than show: C0 (line breaks, tab, ESC…), DEL and C1;
// the Unicode line and paragraph separators; the bidirectional embeddings, overrides and isolates
// (which reorder what follows them, the "Trojan Source" trick). A todo is one line of plain text.
const unprintable = /[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]/u
const unprintableAll = /[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu
const visible = /[^\s\p{Default_Ignorable_Code_Point}]/u
const ignorable = /\p{Default_Ignorable_Code_Point}/gu
const ignorableOrUnprintable = /[\p{Default_Ignorable_Code_Point}\p{Cc}\u2028\u2029]/gu
const whitespaceRun = /\s+/g

const codeLabel = (c: number): string => `U+${c.toString(16).toUpperCase().padStart(4, "0")}`

/**
 * The first character of `text` that may not appear in a todo, as `U+000A`, or `undefined`.
 *
 * @since 0.2.0
 * @category rules
 */
export const unprintableCharacter = (text: string): string | undefined => {
  const match = unprintable.exec(text)
  return match === null ? undefined : codeLabel(match[0].codePointAt(0)!)
}

const unpaired = /\p{Cs}/u

/**
 * The first unpaired UTF-16 surrogate in `text`, as `U+D800`, or `undefined`: such text is not valid
 * Unicode, JSON encoders write it as an escape and PostgreSQL refuses it, so no log stores it.
 *
 * @since 0.2.0
 * @category rules
 */
export const unpairedSurrogate = (text: string): string | undefined => {
  const match = unpaired.exec(text)
  return match === null ? undefined : codeLabel(match[0].charCodeAt(0))
}

/**
 * `text` shows nothing: it is empty, or only whitespace and default-ignorable characters (zero-width
 * spaces and joiners, soft hyphens, variation selectors…).
 *
 * @since 0.2.0
 * @category rules
 */
export const isBlank = (text: string): boolean => !visible.test(text)

/**
 * The number of characters (code points) of `text`, counting no further than `limit + 1`: enough to
 * tell whether it is over `limit` without walking a huge text to its end.
 *
 * @since 0.2.0
 * @category rules
 */
export const length = (text: string, limit = Infinity): number => {
  let n = 0
  for (let i = 0; i < text.length && n <= limit; i++) {
    const c = text.charCodeAt(i)
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1)
      if (d >= 0xdc00 && d <= 0xdfff) i++
    }
    n++
  }
  return n
}

/** Printable ASCII with single spaces, no leading or trailing space: the common case. */
const isPlainAscii = (text: string): boolean => {
  if (text.charCodeAt(0) === 0x20 || text.charCodeAt(text.length - 1) === 0x20) return false
  let space = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x20) {
      if (space) return false
      space = true
    } else if (c > 0x20 && c < 0x7f) {
      space = false
    } else {
      return false
    }
  }
  return true
}

// Full case folding (CaseFolding.txt, statuses C and F): JavaScript has no `casefold`, but its
// upper- and lower-casing apply the full mappings of SpecialCasing (ß -> SS, ﬁ -> FI, ς -> Σ), so
// lower, upper, lower again lands every member of a folding class on one string. The one place this
// over-merges is the Turkic dotless ı, which uppercases to I although full folding keeps it apart:
// it is left as it is.
const foldPart = (text: string): string => text.toLowerCase().toUpperCase().toLowerCase()
const fold = (text: string): string => text.includes("ı") ? text.split("ı").map(foldPart).join("ı") : foldPart(text)

/**
 * The form in which two texts count as the same: default-ignorable characters removed (so
 * `fi\u00adx` is `fix` and `a\u200b` is `a`), Unicode NFKC, full case folding (`straße` is
 * `strasse`), inner whitespace collapsed to one space (so `Fix X` and `fix  x` collide).
 *
 * @since 0.2.0
 * @category rules
 */
export const comparisonKey = (text: string): string =>
  isPlainAscii(text)
    ? text.toLowerCase()
    : fold(text.replace(ignorable, "").normalize("NFKC")).normalize("NFKC").replace(whitespaceRun, " ").trim()

const escapeCode = (char: string): string => {
  const c = char.codePointAt(0)!
  return c > 0xffff ? `\\u{${c.toString(16)}}` : `\\u${c.toString(16).padStart(4, "0")}`
}

/**
 * `text` as it may be printed on one line: characters that would break the line, move the cursor,
 * recolour the terminal or reorder the display are shown as `\u001b`-style escapes; a text that
 * would show nothing has its invisible characters escaped too. Write-time validation refuses such
 * characters, but a log may hold them from before, or from another writer.
 *
 * @since 0.2.0
 * @category display
 */
export const printable = (text: string): string =>
  isBlank(text) && text.length > 0
    ? text.replace(ignorableOrUnprintable, escapeCode)
    : unprintable.test(text)
    ? text.replace(unprintableAll, escapeCode)
    : text

/**
 * How long a quoted text may be, in characters, before it is shortened.
 *
 * @since 0.2.0
 * @category display
 */
export const quoteLength = 80

const hex4 = (unit: number): string => `\\u${unit.toString(16).padStart(4, "0")}`
const jsonEscape = (char: string): string =>
  char.length === 2 ? hex4(char.charCodeAt(0)) + hex4(char.charCodeAt(1)) : hex4(char.charCodeAt(0))

/**
 * `text` quoted for a message to the model: JSON-quoted, shortened past `max` characters with an
 * ellipsis, every control and invisible character written as a JSON escape, so a reply never
 * echoes a huge or spoofing text and two texts that differ only invisibly look different.
 *
 * @since 0.2.0
 * @category display
 */
export const quote = (text: string, max: number = quoteLength): string => {
  let shown = text
  if (text.length > max && length(text, max) > max) {
    let end = 0
    for (let n = 0; n < max - 1; n++) end += text.codePointAt(end)! > 0xffff ? 2 : 1
    shown = `${text.slice(0, end)}…`
  }
  return JSON.stringify(shown).replace(ignorableOrUnprintable, jsonEscape)
}
