// One row per measured figure: what cms-sync took, what the baseline took in the same run,
// their ratio and the target it is held to. Printed as a table; written as JSON with --json.

export interface Row {
  scenario: string
  /** cms-sync's figure, in `unit`; undefined when the row could not run. */
  cms?: number
  baseline?: number
  /** cms / baseline, or the row's own figure of merit (see target). */
  ratio?: number
  unit: string
  /** Human form of the target, e.g. "<= 1.3x". */
  target: string
  pass?: boolean
  /** Why a row has no figures, or what it measured exactly. */
  note?: string
}

const fmt = (x: number | undefined, digits = 2) =>
  x === undefined || Number.isNaN(x) ? '-' : x >= 100 ? x.toFixed(0) : x.toFixed(digits)

export function formatTable(rows: readonly Row[]): string {
  const cells = rows.map((r) => [
    r.scenario,
    r.cms === undefined ? (r.note ?? '-') : `${fmt(r.cms)} ${r.unit}`.trim(),
    r.baseline === undefined ? '-' : `${fmt(r.baseline)} ${r.unit}`.trim(),
    r.ratio === undefined || !Number.isFinite(r.ratio) ? '-' : `${fmt(r.ratio)}x`,
    r.target,
    r.pass === undefined ? '-' : r.pass ? 'pass' : 'FAIL',
  ])
  const header = ['scenario', 'cms-sync', 'baseline', 'ratio', 'target', 'result']
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)))
  const line = (c: string[]) =>
    c
      .map((x, i) => x.padEnd(widths[i]!))
      .join('  ')
      .trimEnd()
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n')
}

/**
 * A target issue 25 sets from some size on (e.g. "at 10k and 100k"): below that size the row is
 * reported with its figures and the target it will be held to, not judged.
 */
export function targetFrom(
  content: number,
  from: number,
  target: string,
  pass: boolean,
): Pick<Row, 'target' | 'pass'> {
  if (content >= from) return { target, pass }
  return { target: `${target} from ${from / 1000}k`, pass: undefined }
}
