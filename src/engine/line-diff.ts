// A unified line diff (the `diff -u` format git users read every day). Workspace files are
// small canonical JSON, so the plain LCS table is fast enough and easy to trust.

type Op = { type: ' ' | '-' | '+'; line: string }

function splitLines(text: string): string[] {
  if (text === '') return []
  const lines = text.split('\n')
  if (lines[lines.length - 1] === '') lines.pop()
  return lines
}

function diffOps(a: string[], b: string[]): Op[] {
  const n = a.length
  const m = b.length
  // lcs[i][j]: length of the longest common subsequence of a[i..] and b[j..].
  const lcs = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1))
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!)
    }
  }
  const ops: Op[] = []
  let i = 0
  let j = 0
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      ops.push({ type: ' ', line: a[i]! })
      i++
      j++
    } else if (lcs[i + 1]![j]! >= lcs[i]![j + 1]!) ops.push({ type: '-', line: a[i++]! })
    else ops.push({ type: '+', line: b[j++]! })
  }
  while (i < n) ops.push({ type: '-', line: a[i++]! })
  while (j < m) ops.push({ type: '+', line: b[j++]! })
  return ops
}

/** `--- a` / `+++ b` and hunks with `context` lines around each change; '' when equal. */
export function unifiedDiff(
  oldText: string,
  newText: string,
  oldName: string,
  newName: string,
  context = 3,
): string {
  const ops = diffOps(splitLines(oldText), splitLines(newText))
  const changed = ops.map((op, index) => (op.type === ' ' ? -1 : index)).filter((index) => index >= 0)
  if (changed.length === 0) return ''
  const out = [`--- ${oldName}`, `+++ ${newName}`]
  let k = 0
  while (k < changed.length) {
    const start = Math.max(0, changed[k]! - context)
    let end = Math.min(ops.length, changed[k]! + context + 1)
    while (k + 1 < changed.length && changed[k + 1]! - context <= end)
      end = Math.min(ops.length, changed[++k]! + context + 1)
    k++
    const before = ops.slice(0, start)
    const hunk = ops.slice(start, end)
    const oldStart = before.filter((op) => op.type !== '+').length
    const newStart = before.filter((op) => op.type !== '-').length
    const oldCount = hunk.filter((op) => op.type !== '+').length
    const newCount = hunk.filter((op) => op.type !== '-').length
    out.push(
      `@@ -${oldStart + (oldCount ? 1 : 0)},${oldCount} +${newStart + (newCount ? 1 : 0)},${newCount} @@`,
    )
    for (const op of hunk) out.push(`${op.type}${op.line}`)
  }
  return `${out.join('\n')}\n`
}
