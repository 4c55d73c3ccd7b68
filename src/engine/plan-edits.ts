// The plan of a run that names its paths: the watcher's batches (docs/watch.md "Each batch")
// and `push`/`pull`/`status <file>...` (planRun's `scope`). A full plan re-lists the whole server
// and stats every file, seconds in a large workspace (docs/benchmarks.md, "Figures behind code
// comments"); a batch or a command names a few paths, so only those are planned: each file is
// read (the stat cache spares one that is unchanged), its base taken from the state (one bucket),
// and its item read from the server by id (one GET each, through the client's queue). Only the
// taking of the sides is its own: they are planned as every run's are (plan-sides.ts), and
// carried out by the same executor and guards (applyRun), whose counts come from the state's
// index (StateStore.countOf), not from the items planned.
//
// What the named paths cannot settle on their own is left to a full plan, scoped to them as before:
//  - media paths and media.yaml: media are matched across paths by their bytes (a move or a
//    rename is one item at two paths), which takes the whole listing and the whole index;
//  - a server deletion (the read by id found nothing for a file left unchanged): a local file
//    is deleted only on a listing's word, under the listing and inheritance guards;
//  - a file name that is not the one its id encodes to (the full plan keeps them apart);
//  - an item others name deleted locally (a schema): whether content still uses it takes the
//    content listing (Codec.uses, guards.ts deletesHeldByUse);
//  - for a command (`strict`), any path that is not one item's file: a folder, an ignored path,
//    a name that is no item (the full plan says what it is, or that it names nothing).
// A remote delete is held while another file still says it holds that id (a file renamed by
// hand): such a file need not be among the paths, so the kind's folder is scanned for claims
// (with the stat cache: only files that differ from their base are read).

import type { ItemState, StateStore } from '../state/state-file.js'
import { type Codec, usersOf } from '../workspace/codec.js'
import { decodeId } from '../workspace/file-names.js'
import { type IgnoreRules, MEDIA_INDEX_FILE } from '../workspace/ignore-rules.js'
import { nestsDeeperThan } from '../workspace/json-depth.js'
import { FOLDER_OF } from '../workspace/kinds.js'
import { itemPath } from '../workspace/layout.js'
import { statLocalFile } from '../workspace/local-file.js'
import { type LocalEntry, type ScanProblem, scanOne, scanWorkspace } from '../workspace/scan.js'
import { MEDIA_FOLDER } from './media/media-plan.js'
import type { PlanItem, Side } from './plan.js'
import type { EngineDeps, PlannedRun } from './plan-apply-types.js'
import { planSides, type Sides } from './plan-sides.js'
import { type RemoteEntry, remoteEntry } from './remote-snapshot.js'

export type EditPlan = { kind: 'planned'; run: PlannedRun } | { kind: 'full'; why: string }

interface Target {
  codec: Codec
  path: string
  id: string
}

const full = (why: string): EditPlan => ({ kind: 'full', why })

/**
 * The paths that stand for items of a synced kind; a reason when they need a full plan. A batch
 * passes over paths that are no item (the watcher saw a stray file); a command (`strict`) names
 * them on purpose, and the full plan answers for them.
 */
function targetsOf(
  deps: EngineDeps,
  rules: IgnoreRules,
  paths: ReadonlySet<string>,
  strict: boolean,
): { targets: Target[]; unnamed: Array<{ codec: Codec; path: string }> } | { why: string } {
  const codecOfFolder = new Map(deps.codecs.map((codec) => [FOLDER_OF[codec.kind], codec]))
  const targets: Target[] = []
  const unnamed: Array<{ codec: Codec; path: string }> = []
  const skip = (path: string, what: string) => (strict ? { why: `${path} is ${what}` } : undefined)
  for (const path of paths) {
    if (rules.ignores(path)) {
      const stop = skip(path, 'ignored')
      if (stop) return stop
      continue
    }
    if (path === MEDIA_INDEX_FILE || path.startsWith(`${MEDIA_FOLDER}/`)) {
      if (deps.media || strict) return { why: `${path} is media, which is matched across paths` }
      continue
    }
    const slash = path.indexOf('/')
    const codec = slash < 0 ? undefined : codecOfFolder.get(path.slice(0, slash))
    const name = path.slice(slash + 1)
    // The scan sees only `<folder>/<name>.json`: anything else is no item either way.
    if (!codec || name.includes('/') || !name.endsWith('.json')) {
      const stop = skip(path, 'not the file of one item')
      if (stop) return stop
      continue
    }
    const id = decodeId(name.slice(0, -'.json'.length))
    if (id === undefined) {
      const stop = skip(path, 'a file name that encodes no id')
      if (stop) return stop
      unnamed.push({ codec, path })
    } else if (itemPath(codec.kind, id) !== path)
      return { why: `${path} is not the file name its id encodes to` }
    else targets.push({ codec, path, id })
  }
  return { targets, unnamed }
}

export async function planEdits(
  deps: EngineDeps,
  store: StateStore,
  rules: IgnoreRules,
  paths: ReadonlySet<string>,
  opts: {
    /** Every path must be one item's file (a command's arguments); otherwise a full plan. */
    strict?: boolean
    prefer?: Side
  } = {},
): Promise<EditPlan> {
  const found = targetsOf(deps, rules, paths, opts.strict === true)
  if ('why' in found) return full(found.why)
  // Pushes a killed run made and never recorded are adopted from a listing (landed-pushes.ts),
  // which settles the whole journal: a command's first run after it plans in full. (The
  // daemon's journal holds its own pushes until its next save; its start-up plan was full.)
  if (opts.strict && (store.pushes?.open().length ?? 0) > 0)
    return full('an earlier run left pushes to recognise')
  const sides = await sidesOf(deps, store, found)
  if ('why' in sides) return full(sides.why)
  const run = await planSides(deps, store, sides, {
    fresh: true,
    ...(opts.prefer ? { prefer: opts.prefer } : {}),
  })
  const items = run.plan.items
  const deletedThere = items.find((item) => item.action === 'delete-local')
  if (deletedThere) return full(`the server no longer has ${deletedThere.path}; a listing confirms it`)
  for (const item of items) {
    const user = item.action === 'delete-remote' ? usersOf(deps.codecs, item.kind)[0] : undefined
    if (user !== undefined)
      return full(`${item.path} is deleted; the ${user} listing says whether ${user} still uses it`)
  }
  await addClaimants(deps, store, rules, items, run.local)
  return { kind: 'planned', run }
}

/** The three sides of the batch's paths: each file scanned, each item read from the server by id. */
async function sidesOf(
  deps: EngineDeps,
  store: StateStore,
  found: { targets: Target[]; unnamed: Array<{ codec: Codec; path: string }> },
): Promise<Sides | { why: string }> {
  const cached = (path: string) => store.get(path)
  const base: ItemState[] = []
  const local = new Map<string, LocalEntry>()
  const remote = new Map<string, RemoteEntry>()
  const scanProblems: ScanProblem[] = []
  let tooDeep: string | undefined
  // A file whose name encodes no id is reported, as the scan would, while it exists.
  for (const { codec, path } of found.unnamed) {
    if (await statLocalFile(deps.root, path))
      scanProblems.push({
        kind: codec.kind,
        path,
        problems: ['the file name is not the encoded form of any id'],
      })
  }
  await Promise.all(
    found.targets.map(async ({ codec, path, id }) => {
      const known = store.get(path)
      const name = path.slice(path.indexOf('/') + 1)
      const [scanned, object] = await Promise.all([
        scanOne(deps.root, codec, cached, name, path),
        deps.client.get(codec.kind, id),
      ])
      if (scanned.problem) scanProblems.push(scanned.problem)
      // Neither a file nor gone (a FIFO, a folder, unreadable): left alone on both sides.
      if (scanned.problem?.unsynced) return
      if (object && nestsDeeperThan(object)) {
        tooDeep = path
        return
      }
      if (known?.kind === codec.kind) base.push(known)
      if (scanned.entry) local.set(path, scanned.entry)
      if (!object) return
      const rev = codec.revisionOf(object)
      remote.set(path, remoteEntry(codec, object, { id, path, known: store.baseAt(path, rev), rev }))
    }),
  )
  // The full plan reports a server item too deep to compare, by name, and leaves it alone.
  if (tooDeep) return { why: `the server's ${tooDeep} nests too deep to compare` }
  return { base, local, remote, scanProblems, remoteProblems: [] }
}

/**
 * For each kind the plan deletes on the server, every file of its folder, so that
 * deletesHeldByRenamedFiles sees a file outside the batch that still claims a deleted id.
 */
async function addClaimants(
  deps: EngineDeps,
  store: StateStore,
  rules: IgnoreRules,
  items: readonly PlanItem[],
  local: Map<string, LocalEntry>,
): Promise<void> {
  const kinds = new Set(items.filter((item) => item.action === 'delete-remote').map((item) => item.kind))
  if (kinds.size === 0) return
  const scan = await scanWorkspace(
    deps.root,
    deps.codecs.filter((codec) => kinds.has(codec.kind)),
    (path) => store.get(path),
    (path) => rules.ignores(path),
  )
  for (const entry of scan.entries) if (!local.has(entry.path)) local.set(entry.path, entry)
}
