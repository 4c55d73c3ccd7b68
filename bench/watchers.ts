// Side by side, in one run: the file watchers cms-sync could use (issue 17 item 5), over one
// folder of N files. For each: time until it reports ready, the process's RSS then, the OS
// watches it holds (inotify), and the paths it reported during a `git checkout` that changes
// 5,000 of the files (modified, deleted and added), against the paths git changed.
//
//   npx tsx bench/watchers.ts [--files 10000,100000] [--changed 5000] [--json out.json]
//
// Each watcher runs in a child process of its own (`--child <name> <root>`), so RSS and
// watches are its alone. Results go to docs/watch.md ("Choosing the watcher").

import { execFileSync, spawn } from 'node:child_process'
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'

/** `cms-sync`: what the daemon runs, @parcel/watcher plus the folder index of src/watch/tree-watcher.ts. */
type WatcherName = 'chokidar' | 'parcel' | 'cms-sync'
const WATCHERS: WatcherName[] = ['chokidar', 'parcel', 'cms-sync']

/** Paths (relative, forward slashes) under content/ reported by a watcher, printed as JSON lines. */
async function child(name: WatcherName, root: string): Promise<void> {
  const seen = new Set<string>()
  let events = 0
  const started = performance.now()
  const note = (absolute: string) => {
    const rel = path.relative(root, absolute).split(path.sep).join('/')
    if (!rel.startsWith('content/')) return
    events++
    seen.add(rel)
  }
  const ignoredGit = (p: string) => p.split(path.sep).includes('.git')
  if (name === 'chokidar') {
    const { watch } = await import('chokidar')
    const watcher = watch(root, { ignoreInitial: true, ignored: ignoredGit })
    watcher.on('all', (_event, p) => note(p))
    await new Promise<void>((resolve) => watcher.once('ready', () => resolve()))
  } else if (name === 'parcel') {
    const parcel = await import('@parcel/watcher')
    await parcel.subscribe(
      root,
      (error, list) => {
        if (!error) for (const event of list) note(event.path)
      },
      { ignore: ['.git'] },
    )
  } else {
    const { watchTree } = await import('../src/watch/tree-watcher.js')
    const watcher = watchTree(root, {
      ignored: (rel) => rel.split('/').includes('.git'),
      onPath: (rel) => note(path.join(root, rel)),
      onError: () => {},
    })
    await watcher.ready
  }
  process.stdout.write(`${JSON.stringify({ ready: performance.now() - started })}\n`)
  // Reports what it saw on each line of stdin ("report"), until stdin ends.
  process.stdin.setEncoding('utf8')
  process.stdin.on('data', () => {
    process.stdout.write(`${JSON.stringify({ events, paths: [...seen] })}\n`)
  })
  process.stdin.on('end', () => process.exit(0))
}

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024
}

/** inotify watches the process holds: one `inotify wd:` line per watch in its fds' fdinfo. */
function osWatches(pid: number): number {
  let count = 0
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      if (readlinkSync(`/proc/${pid}/fd/${fd}`) !== 'anon_inode:inotify') continue
      count += readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'utf8')
        .split('\n')
        .filter((l) => l.startsWith('inotify wd:')).length
    } catch {
      // The fd closed meanwhile.
    }
  }
  return count
}

function git(root: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd: root, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 })
}

/** A repository with N files on `base` and a branch `other` that changes `changed` of them. */
function makeRepo(files: number, changed: number): { root: string; expected: Set<string> } {
  const root = mkdtempSync(path.join(tmpdir(), `cms-sync-watchers-${files}-`))
  mkdirSync(path.join(root, 'content'))
  const name = (i: number) => `content/item-${i}.json`
  for (let i = 0; i < files; i++) writeFileSync(path.join(root, name(i)), `{\n  "id": "item-${i}"\n}\n`)
  git(root, 'init', '-q', '-b', 'base')
  git(root, 'add', '-A')
  git(root, '-c', 'user.email=b@x', '-c', 'user.name=bench', 'commit', '-qm', 'base')
  git(root, 'checkout', '-q', '-b', 'other')
  const expected = new Set<string>()
  // 60 % modified, 20 % deleted, 20 % added.
  const modified = Math.round(changed * 0.6)
  const deleted = Math.round(changed * 0.2)
  for (let i = 0; i < modified; i++) {
    writeFileSync(path.join(root, name(i)), `{\n  "id": "item-${i}",\n  "title": "changed"\n}\n`)
    expected.add(name(i))
  }
  for (let i = modified; i < modified + deleted; i++) {
    rmSync(path.join(root, name(i)))
    expected.add(name(i))
  }
  for (let i = files; i < files + (changed - modified - deleted); i++) {
    writeFileSync(path.join(root, name(i)), `{\n  "id": "item-${i}"\n}\n`)
    expected.add(name(i))
  }
  git(root, 'add', '-A')
  git(root, '-c', 'user.email=b@x', '-c', 'user.name=bench', 'commit', '-qm', 'other')
  git(root, 'checkout', '-q', 'base')
  return { root, expected }
}

interface Row {
  watcher: WatcherName
  files: number
  readyMs: number
  rssMb: number
  osWatches: number
  checkoutChanged: number
  reportedOfThose: number
  missed: number
  events: number
}

async function measure(name: WatcherName, root: string, expected: Set<string>, files: number): Promise<Row> {
  const proc = spawn(process.execPath, ['--import', 'tsx', import.meta.filename, '--child', name, root], {
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  const lines: string[] = []
  let wake: () => void = () => {}
  let buffer = ''
  proc.stdout.setEncoding('utf8')
  proc.stdout.on('data', (chunk: string) => {
    buffer += chunk
    for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
      lines.push(buffer.slice(0, nl))
      buffer = buffer.slice(nl + 1)
      wake()
    }
  })
  const nextLine = async (): Promise<Record<string, unknown>> => {
    while (lines.length === 0) await new Promise<void>((resolve) => (wake = resolve))
    return JSON.parse(lines.shift()!) as Record<string, unknown>
  }
  const ready = Number((await nextLine()).ready)
  const rss = rssMb(proc.pid!)
  const watches = osWatches(proc.pid!)
  git(root, 'checkout', '-q', 'other')
  // Asks until the count holds still for 3 s (at most 60 s): late events count too.
  let last = -1
  let report: { events: number; paths: string[] } = { events: 0, paths: [] }
  for (let waited = 0; waited < 60_000; waited += 1000) {
    await new Promise((resolve) => setTimeout(resolve, 1000))
    proc.stdin.write('report\n')
    report = (await nextLine()) as typeof report
    if (report.events === last && waited >= 3000) break
    last = report.events
  }
  proc.stdin.end()
  await new Promise((resolve) => proc.once('exit', resolve))
  git(root, 'checkout', '-q', 'base')
  const reported = report.paths.filter((p) => expected.has(p)).length
  return {
    watcher: name,
    files,
    readyMs: Math.round(ready),
    rssMb: Math.round(rss),
    osWatches: watches,
    checkoutChanged: expected.size,
    reportedOfThose: reported,
    missed: expected.size - reported,
    events: report.events,
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      files: { type: 'string', default: '10000,100000' },
      changed: { type: 'string', default: '5000' },
      json: { type: 'string' },
      only: { type: 'string' },
    },
  })
  const rows: Row[] = []
  const which = values.only ? (values.only.split(',') as WatcherName[]) : WATCHERS
  for (const files of values.files.split(',').map(Number)) {
    const { root, expected } = makeRepo(files, Number(values.changed))
    try {
      for (const name of which) {
        const row = await measure(name, root, expected, files)
        rows.push(row)
        console.log(JSON.stringify(row))
      }
    } finally {
      rmSync(root, { recursive: true, force: true })
    }
  }
  console.log(
    '\n| watcher | files | ready | RSS | OS watches | checkout: changed / reported / missed | events |',
  )
  console.log('|---|---|---|---|---|---|---|')
  for (const r of rows)
    console.log(
      `| ${r.watcher} | ${r.files} | ${r.readyMs} ms | ${r.rssMb} MB | ${r.osWatches} | ${r.checkoutChanged} / ${r.reportedOfThose} / ${r.missed} | ${r.events} |`,
    )
  if (values.json) writeFileSync(values.json, JSON.stringify(rows, null, 2))
}

if (process.argv[2] === '--child') await child(process.argv[3] as WatcherName, process.argv[4]!)
else await main()
