// Text from files and servers as a terminal or a CI log may show it. A file name is committed
// data, and in a CI run on a pull request someone else wrote it: a newline in it starts a line
// of its own (GitHub Actions reads `::error ...` or `::add-mask::` at the start of any line as a
// command), an escape sequence moves the cursor, recolours or conceals what follows, a
// right-to-left override reorders what a reviewer reads. Every printer of the human output
// (item lines, status, errors, logs on the terminal, watch's lines) shows such text through
// printable(); --json and the log file are JSON, which escapes them already.

/** Control characters (C0, DEL, C1), line and paragraph separators, and bidirectional controls. */
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]/g

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' }

function escaped(char: string): string {
  return NAMED[char] ?? `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`
}

/**
 * `text` with every character that could start a line or steer a terminal written as an escape
 * (`\n`, `\u001b`). `keepLines`: a message of several lines made by cms-sync itself (a config
 * error per line) keeps its line breaks; the paths in it are then printable() where it is made.
 */
export function printable(text: string, opts: { keepLines?: boolean } = {}): string {
  if (opts.keepLines)
    return text
      .split('\n')
      .map((line) => printable(line))
      .join('\n')
  return text.replace(UNPRINTABLE, escaped)
}
