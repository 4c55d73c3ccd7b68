// How a run is shown: progress on a terminal (stderr), then either one JSON document
// ({applied, conflicts, failed}) or one line per item and a one-line summary. Exit codes come
// from the outcome: 1 when an item failed, else 3 when conflicts remain, else 0. `status` is
// shown the same way from its model (status-model.ts), with the exit codes design.md gives it.

import { describeHeld, describeHeldCommands } from '../engine/held.js'
import type { ConflictLeaf } from '../engine/merge/merge-json.js'
import type { ItemReport, Outcome } from '../engine/outcome.js'
import { describeReverted } from '../engine/own-pushes.js'
import type { PlanItem } from '../engine/plan.js'
import { ExitCode } from '../errors/exit-codes.js'
import { printable } from '../util/printable.js'
import { describePause, PAUSE_LIFT } from '../watch/mass-change.js'
import { pc } from './colors.js'
import { type GlobalOptions, printJson } from './context.js'
import type { CliIo } from './io.js'
import { isClean, type StatusRead, statusDocument } from './status-model.js'

export function exitCodeFor(outcome: Outcome): ExitCode {
  if (outcome.interrupted) return ExitCode.interrupted
  if (outcome.failed.length > 0) return ExitCode.failed
  if (outcome.conflicts.length > 0) return ExitCode.conflicts
  return ExitCode.ok
}

/** A progress line redrawn in place, only on a terminal and never with --json/--quiet/--no-progress. */
export function progressFor(
  io: CliIo,
  globals: GlobalOptions,
): ((done: number, total: number, item: PlanItem) => void) | undefined {
  const tty = (io.stderr as { isTTY?: boolean }).isTTY === true
  if (!tty || globals.json || globals.quiet || globals.progress === false) return undefined
  return (done, total, item) => {
    io.stderr.write(`\r\x1b[2K${pc.dim(`[${done}/${total}]`)} ${item.action} ${printable(item.path)}`)
    if (done === total) io.stderr.write('\r\x1b[2K')
  }
}

const COLOR: Record<string, (s: string) => string> = {
  push: pc.green,
  pull: pc.cyan,
  'delete-remote': pc.red,
  'delete-local': pc.red,
  conflict: pc.yellow,
  merge: pc.magenta,
  publish: pc.green,
  unpublish: pc.red,
}

function shown(value: unknown): string {
  if (value === undefined) return '(none)'
  const text = JSON.stringify(value)
  return text.length > 60 ? `${text.slice(0, 57)}...` : text
}

/** One line per conflicting leaf: where, and what base, local and remote hold there. */
export function leafLines(leaves: readonly ConflictLeaf[] | undefined): string[] {
  return (leaves ?? []).map((leaf) => {
    const where = leaf.path === '' ? '(the document)' : printable(leaf.path)
    const what = leaf.order ? ' key order' : ''
    return `      ${pc.yellow(where)}${what}: base ${shown(leaf.base)}, local ${shown(leaf.local)}, remote ${shown(leaf.remote)}`
  })
}

export function itemLine(
  item: Pick<
    ItemReport,
    | 'path'
    | 'local'
    | 'remote'
    | 'error'
    | 'leaves'
    | 'reason'
    | 'kept'
    | 'connection'
    | 'governedBy'
    | 'reverted'
  > & {
    action: string
  },
): string {
  const color =
    COLOR[item.action.split(' ').find((word) => word in COLOR) ?? item.action] ?? ((s: string) => s)
  const why = item.connection !== undefined ? throughWhat(item) : `local ${item.local}, remote ${item.remote}`
  const leaves = leafLines(item.leaves).map((line) => `\n${line}`)
  const reason = item.reason && !item.leaves?.length ? `\n      ${pc.dim(printable(item.reason))}` : ''
  const kept = item.kept ? `\n      ${pc.dim(`the server's copy is kept in ${printable(item.kept)}`)}` : ''
  const error = item.error ? `\n      ${pc.red(printable(item.error))}` : ''
  const reverted = item.reverted?.length
    ? `\n      ${pc.yellow(printable(`reverted on the server: ${describeReverted(item.reverted)}`))}`
    : ''
  return `  ${color(item.action.padEnd(13))} ${printable(item.path)}  ${pc.dim(`(${why})`)}${error}${reason}${kept}${reverted}${leaves.join('')}`
}

/** How the user sends the reverted leaves of an item again. */
export function pushAgainHint(path: string): string {
  return `\`cms-sync push --again ${printable(path)}\` sends ours again`
}

/** Where a publish or unpublish goes: its connection, and the parent that decides it. */
function throughWhat(item: Pick<ItemReport, 'connection' | 'governedBy'>): string {
  if (item.connection === null || item.connection === undefined) return 'no connection named'
  const governed = item.governedBy ? `, as parent ${JSON.stringify(item.governedBy)} decides` : ''
  return `through connection ${JSON.stringify(item.connection)}${governed}`
}

/** " (1 publish, 2 unpublishes)": the deployments among the applied entries, when there are any. */
function deployments(applied: readonly ItemReport[]): string {
  const counted = (['publish', 'unpublish'] as const)
    .map((action) => [action, applied.filter((item) => item.action === action).length] as const)
    .filter(([, n]) => n > 0)
    .map(([action, n]) => `${n} ${action}${n === 1 ? '' : 'es'}`)
  return counted.length > 0 ? ` (${counted.join(', ')})` : ''
}

function count(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`
}

/**
 * The account of a run Ctrl-C stopped, on stderr whatever the output mode (a pipe, --json, -q
 * alike): what it applied, what it left, and that running the command again finishes it.
 */
export function printInterrupted(io: CliIo, command: string, outcome: Outcome): void {
  const what = `${outcome.applied.length} applied, ${outcome.interrupted?.left ?? 0} left`
  io.stderr.write(`cms-sync: interrupted: ${what}; run \`cms-sync ${command}\` again\n`)
}

export function printOutcome(
  io: CliIo,
  globals: GlobalOptions,
  command: string,
  outcome: Outcome,
  dryRun: boolean,
): void {
  if (outcome.interrupted) printInterrupted(io, command, outcome)
  if (globals.json) {
    io.stdout.write(`${JSON.stringify(dryRun ? { dryRun: true, ...outcome } : outcome, null, 2)}\n`)
    return
  }
  if (globals.quiet) return
  const lines = [
    ...outcome.applied.map(itemLine),
    ...outcome.conflicts.map((item) => itemLine({ ...item, action: 'conflict' })),
    ...outcome.failed.map((item) => itemLine({ ...item, action: `failed ${item.action}` })),
  ]
  for (const line of lines) io.stdout.write(`${line}\n`)
  for (const item of outcome.applied.filter((applied) => applied.reverted?.length))
    io.stdout.write(
      `  ${pc.yellow('!')} ${item.path}: an editor's save put back what we pushed; ours is kept in .cms-sync/trash/, ${pushAgainHint(item.path)}\n`,
    )
  const verb = dryRun ? 'would apply' : 'applied'
  const summary = `${command}${dryRun ? ' (dry run)' : ''}: ${verb} ${outcome.applied.length}${deployments(outcome.applied)}, ${count(outcome.conflicts.length, 'conflict')}, ${outcome.failed.length} failed`
  io.stdout.write(
    `${summary}${outcome.conflicts.length > 0 ? pc.dim('  (see `cms-sync diff`, then `cms-sync resolve <paths> --keep local|remote`)') : ''}\n`,
  )
}

/** status --exit-code: the workspace and the server differ (for CI gates). */
export const PENDING_EXIT = 6

/**
 * status tells CI the truth (design.md): a refused token first (2: nothing could be pushed),
 * then 1 when an item would fail (a file the run would refuse, a server item no file can hold),
 * 3 when conflicts remain, and with --exit-code 6 when anything is to sync.
 */
export function statusExitCode(read: StatusRead, opts: { exitCode: boolean }): number {
  if (read.tokenRefused !== undefined) return ExitCode.usage
  if (failingOf(read) > 0) return ExitCode.failed
  if (read.changes.some((c) => c.action === 'conflict')) return ExitCode.conflicts
  return opts.exitCode && !isClean(read) ? PENDING_EXIT : ExitCode.ok
}

function failingOf(read: StatusRead): number {
  return read.changes.filter((c) => c.error !== undefined).length + read.problems.length
}

/**
 * The media whose bytes were not compared with the server's, and since when (the oldest): the
 * upstream server lists media without dates or sizes, so only reading them shows a replacement.
 */
function unverifiedLine(unverified: readonly { verifiedAt: string | null }[]): string {
  const never = unverified.filter((u) => u.verifiedAt === null).length
  const oldest = unverified.find((u) => u.verifiedAt !== null)?.verifiedAt
  const since = [
    ...(oldest ? [`last compared ${oldest} at the oldest`] : []),
    ...(never > 0 ? [`${never} never compared here`] : []),
  ].join(', ')
  const n = unverified.length
  return `  unverified    ${count(n, 'media item')}: the server's bytes were not compared (${since}); the server gives no dates to tell a replacement by; \`cms-sync status --checksum\` compares them, \`cms-sync watch\` re-reads them within watch.verifyMedia`
}

/** status's account: the `--json` document, or the lines and the one-line summary. */
export function printStatus(
  io: CliIo,
  globals: GlobalOptions,
  target: { server: string; project: string; environment: string },
  read: StatusRead,
): void {
  const { changes, problems, inherited, scheduled, watchPaused, held, tokenRefused } = read
  const { notSynced, reverted, unverified } = read
  if (globals.json) {
    printJson(io, statusDocument(target, read))
    return
  }
  if (tokenRefused !== undefined) io.stderr.write(`cms-sync: ${tokenRefused}\n`)
  if (read.anonymous)
    io.stderr.write(
      'cms-sync: read without a token (--anonymous): whether a push would be allowed was not checked\n',
    )
  if (globals.quiet) return
  const out = (line: string) => io.stdout.write(`${line}\n`)
  if (watchPaused) out(`${describePause(watchPaused)}\n  ${PAUSE_LIFT}`)
  // The pause was told above, with its own words.
  for (const h of held.filter((h) => h.action !== 'push'))
    out(`${printable(describeHeld(h))}\n  ${printable(describeHeldCommands(h))}`)
  for (const change of changes) {
    const line = itemLine({ ...change, ...(change.error ? { action: `${change.action} (fails)` } : {}) })
    out(`${line}${change.inherited ? '  [inherited from the parent project]' : ''}`)
  }
  for (const p of problems)
    out(
      `  unusable      ${p.path ? printable(p.path) : `${p.kind} ${JSON.stringify(p.id)} on the server`}: ${printable(p.problems.join('; '))}`,
    )
  for (const stray of notSynced) out(`  not synced    ${printable(stray.path)}: ${printable(stray.reason)}`)
  if (unverified.length > 0) out(unverifiedLine(unverified))
  for (const r of reverted)
    out(
      printable(
        `  reverted      ${r.path}: the server put back ${describeReverted(r.leaves)} (pulled ${r.at}); ours is in ${r.trash ?? '.cms-sync/trash/'}; \`cms-sync push --again ${r.path}\` sends it again`,
      ),
    )
  if (inherited.length > 0)
    out(
      `${count(inherited.length, 'item')} inherited from the parent project (locked on the server; an edit makes a local copy): ${printable(inherited.slice(0, 10).join(', '))}${inherited.length > 10 ? `, and ${inherited.length - 10} more` : ''}`,
    )
  if (scheduled.length > 0) {
    out('scheduled:')
    for (const s of scheduled) out(`  ${s.date}  ${s.type.padEnd(9)} ${printable(s.path)}`)
  }
  out(statusSummary(read))
}

/** The last line: how many are to sync, or what was not compared, or "clean" where all was. */
function statusSummary(read: StatusRead): string {
  const { changes, problems, tokenRefused, notSynced, reverted, unverified } = read
  const failing = failingOf(read)
  const conflicts = changes.filter((c) => c.action === 'conflict').length
  const why = [
    ...(failing > 0 ? [`${failing} would fail`] : []),
    ...(conflicts > 0 ? [`${conflicts} in conflict`] : []),
  ]
  if (changes.length + problems.length > 0)
    return `${changes.length + problems.length} to sync${why.length ? ` (${why.join(', ')})` : ''}`
  // "clean" only where everything was compared: what was not is said instead.
  const unchecked = [
    ...(tokenRefused !== undefined ? ['the token is refused (above): nothing can be pushed'] : []),
    ...(notSynced.length > 0
      ? [`${notSynced.length} file${notSynced.length === 1 ? ' is' : 's are'} not synced (above)`]
      : []),
    ...(reverted.length > 0
      ? [
          `${reverted.length} of our pushes ${reverted.length === 1 ? 'was' : 'were'} reverted on the server (above)`,
        ]
      : []),
    ...(unverified.length > 0
      ? [`the bytes of ${count(unverified.length, 'media item')} were not compared (above)`]
      : []),
  ]
  return unchecked.length > 0
    ? `nothing to sync in what was compared, but ${unchecked.join('; ')}`
    : 'clean: the workspace and the server agree'
}
