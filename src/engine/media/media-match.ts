// Which local file and which server item are the same media item. Pure: no fs, no http.
//
// A media item's identity is its id; its content is its bytes (sha256) and its path (folder +
// name). Locally the id of a path comes from media.yaml (else from the last sync's state, so a
// deleted or half-written media.yaml loses nothing). On the server the path is the tree folder
// plus the server's name, which upstream rewrites on upload: while the server's name and folder
// are what the last sync saw, the item maps to the local path of that sync, so a rewritten name
// never shows as a rename.

import { createHash } from 'node:crypto'
import type { RemoteMedia } from '../../remote/media.js'
import type { StatSnapshot } from '../../state/state-file.js'
import { decodeMediaName, encodeMediaName, isReservedName } from '../../workspace/file-names.js'
import type { LocalMediaFile } from '../../workspace/media-scan.js'

export interface MediaBaseItem {
  id: string
  rel: string
  sha256: string
  name: string
  folder: string
  /** The server's updateDate at the last sync ('' when it has none). */
  rev: string
  /** Taken from cms-sync.lock (another machine's sync): see `unchanged` in matchMedia. */
  fromLock?: true
}

export interface LocalSide {
  /** The id, or `new:<rel>` for a file the server has never seen. */
  key: string
  id: string | undefined
  rel: string
  sha256: string
  size: number
  stat: StatSnapshot
}

export interface RemoteSide {
  id: string
  /** Where the item lives (or would live) in media/. */
  rel: string
  name: string
  folder: string
  rev: string
  /** The bytes' hash when known without a download (unchanged since the base), or verified. */
  sha256: string | undefined
}

export interface MediaMatch {
  local: Map<string, LocalSide>
  remote: Map<string, RemoteSide>
  /** Items the server holds that no file can stand for. */
  problems: { id: string; problem: string }[]
  /** Ids whose server bytes must be downloaded to be compared with the local file. */
  needBytes: string[]
  /** Ids of the reported items: left out of the plan on every side (never deleted, never pulled). */
  held: ReadonlySet<string>
}

export interface MatchInput {
  base: ReadonlyMap<string, MediaBaseItem>
  index: ReadonlyMap<string, string> | undefined
  files: ReadonlyMap<string, LocalMediaFile>
  remote: readonly RemoteMedia[]
  /** spec: updateDate changes with every upload; upstream has none, so bytes count as unchanged unless `checksum`. */
  checksum: boolean
  /** Ids whose server bytes must be compared again whatever the listing says (an open conflict). */
  recheck?: ReadonlySet<string>
}

export function joinRel(folder: string, name: string): string {
  return folder === '' ? name : `${folder}/${name}`
}

export function splitRel(rel: string): { folder: string; name: string } {
  const cut = rel.lastIndexOf('/')
  return cut < 0 ? { folder: '', name: rel } : { folder: rel.slice(0, cut), name: rel.slice(cut + 1) }
}

/** Whether a server's media name (or one folder of its path) cannot be a file name at all. */
function unsafeName(name: string): boolean {
  return (
    name === '' ||
    name === '.' ||
    name === '..' ||
    /[/\\\u0000-\u001f\u007f]/.test(name) ||
    Buffer.byteLength(encodeMediaName(name)) > 255
  )
}

function reservedMedia(item: RemoteMedia): boolean {
  return isReservedName(item.name) || (item.folder !== '' && item.folder.split('/').some(isReservedName))
}

/** Whether a listed item's name or folder is unsafe: it is reported, never turned into a path. */
export function unsafeMedia(item: RemoteMedia): boolean {
  return (
    unsafeName(item.name) ||
    (item.folder !== '' && item.folder.split('/').some((part) => unsafeName(part))) ||
    reservedMedia(item)
  )
}

/** Where a server item's file lives in media/: each part of its folder and its name encoded. */
export function localRelOf(folder: string, name: string): string {
  const parts = folder === '' ? [name] : [...folder.split('/'), name]
  return parts.map(encodeMediaName).join('/')
}

/** The server folder and name a file under media/ stands for (the reverse of localRelOf). */
export function serverPlaceOf(rel: string): { folder: string; name: string } {
  const { folder, name } = splitRel(rel)
  return {
    folder: folder === '' ? '' : folder.split('/').map(decodeMediaName).join('/'),
    name: decodeMediaName(name),
  }
}

/**
 * The key under which two paths are one file on Windows and macOS: case and Unicode spelling
 * folded. Two server items whose paths fold alike each need a file of their own.
 */
export function foldedPath(rel: string): string {
  return rel.normalize('NFC').toLowerCase()
}

/**
 * `photo.png` of id `ab12` becomes `photo~ab12.png`, for a second server item with the same path.
 * The id is the server's: one that is not plain letters, digits, `-` and `_` (a `/`, `..`, a
 * control character, or just long) is put in as a hash of itself, never as it is.
 */
function disambiguated(rel: string, id: string): string {
  const { folder, name } = splitRel(rel)
  const dot = name.lastIndexOf('.')
  const stem = dot > 0 ? name.slice(0, dot) : name
  const ext = dot > 0 ? name.slice(dot) : ''
  const tag = /^[A-Za-z0-9_-]{1,40}$/.test(id)
    ? id
    : createHash('sha256').update(id).digest('hex').slice(0, 16)
  return joinRel(folder, `${stem}~${tag}${ext}`)
}

/** An id media.yaml places at another file than its base's, while the base's file is still there. */
export interface MovedOntoAnotherFile {
  id: string
  /** Where the base has it (its file still there). */
  from: string
  /** Where media.yaml puts it (another file, there too). */
  to: string
}

/**
 * The ids media.yaml moves onto another file while the file the base has for them is still
 * there. A move or rename takes the file along, so the old path is gone; with both files there,
 * following media.yaml would send the other file's bytes and name to that server item (a
 * pull request that edits one line of media.yaml replaces any media item it likes). A path
 * media.yaml names that has no file (a run killed before it rewrote media.yaml after a move)
 * is not such a move: the bytes find the item (localSides, step 2).
 */
export function idsMovedOntoAnotherFile(
  base: ReadonlyMap<string, MediaBaseItem>,
  index: ReadonlyMap<string, string> | undefined,
  files: ReadonlyMap<string, unknown>,
): MovedOntoAnotherFile[] {
  const moved: MovedOntoAnotherFile[] = []
  for (const [rel, id] of index ?? []) {
    const known = base.get(id)
    if (known && known.rel !== rel && files.has(known.rel) && files.has(rel))
      moved.push({ id, from: known.rel, to: rel })
  }
  return moved
}

function localSides(input: MatchInput): Map<string, LocalSide> {
  const local = new Map<string, LocalSide>()
  const claimed = new Set<string>()
  const side = (key: string, id: string | undefined, file: LocalMediaFile): LocalSide => ({
    key,
    id,
    rel: file.rel,
    sha256: file.sha256,
    size: file.size,
    stat: file.stat,
  })
  // 1. media.yaml, then the base for ids it does not name: the file at its path is the item.
  const pathOf = new Map<string, string>()
  for (const [rel, id] of input.index ?? []) pathOf.set(id, rel)
  const named = new Set(pathOf.values())
  for (const [id, item] of input.base)
    if (!pathOf.has(id) && !named.has(item.rel)) {
      pathOf.set(id, item.rel)
      named.add(item.rel)
    }
  const missing: string[] = []
  for (const [id, rel] of pathOf) {
    const file = input.files.get(rel)
    if (file && !claimed.has(rel)) {
      local.set(id, side(id, id, file))
      claimed.add(rel)
    } else missing.push(id)
  }
  const untracked = [...input.files.values()].filter((file) => !claimed.has(file.rel))
  // 2. A synced item whose file vanished, and a new file with the same bytes: moved or renamed.
  //    The same name (a move) wins over another name (a rename), then path order.
  for (const id of missing.sort()) {
    const base = input.base.get(id)
    if (!base) continue
    const sameBytes = untracked.filter((file) => file.sha256 === base.sha256)
    const baseName = splitRel(base.rel).name
    const file = sameBytes.find((f) => splitRel(f.rel).name === baseName) ?? sameBytes[0]
    if (!file) continue
    local.set(id, side(id, id, file))
    untracked.splice(untracked.indexOf(file), 1)
  }
  // 3. Files nobody claims: new, unless a server item no file claims sits at the same path (a
  //    workspace made before media.yaml existed): then it is that item, compared by bytes.
  const remoteAt = new Map<string, string>()
  for (const item of input.remote) {
    if (!pathOf.has(item.id) && !local.has(item.id)) remoteAt.set(localRelOf(item.folder, item.name), item.id)
  }
  for (const file of untracked) {
    const id = remoteAt.get(file.rel)
    if (id !== undefined && !local.has(id)) local.set(id, side(id, id, file))
    else local.set(`new:${file.rel}`, side(`new:${file.rel}`, undefined, file))
  }
  return local
}

/**
 * Server folders that differ only in case (`Img/`, `img/`) are one folder on Windows and macOS,
 * where a checkout puts both folders' files into whichever came first; a scan there would then
 * take each file of the other for a move. So a new path takes the spelling of a folder already
 * in use; the item keeps its own server folder (recorded in the base, which a push sends back).
 */
class FolderSpellings {
  private readonly byFold = new Map<string, string>()

  /** Records the folders of a path in use. */
  note(rel: string): void {
    const parts = rel.split('/').slice(0, -1)
    for (let i = 1; i <= parts.length; i++) {
      const folder = parts.slice(0, i).join('/')
      const key = foldedPath(folder)
      if (!this.byFold.has(key)) this.byFold.set(key, folder)
    }
  }

  /** The path with each folder spelled as the folder already in use that folds alike. */
  spell(rel: string): string {
    const parts = rel.split('/')
    for (let i = 1; i < parts.length; i++) {
      const known = this.byFold.get(foldedPath(parts.slice(0, i).join('/')))
      if (known !== undefined) parts[i - 1] = known.slice(known.lastIndexOf('/') + 1)
    }
    return parts.join('/')
  }
}

export function matchMedia(input: MatchInput): MediaMatch {
  const local = localSides(input)
  const remote = new Map<string, RemoteSide>()
  const problems: MediaMatch['problems'] = []
  const needBytes: string[] = []
  const held = new Set<string>()
  // Folded: `Home.png` beside `home.png` is one file on Windows and macOS.
  const used = new Set([...local.values()].map((l) => foldedPath(l.rel)))
  const folders = new FolderSpellings()
  for (const l of local.values()) folders.note(l.rel)
  const ordered = [...input.remote].sort((a, b) => {
    // Items whose place is settled (unchanged since the base, or claimed locally) take their paths first.
    const settled = (m: RemoteMedia) => (input.base.has(m.id) || local.has(m.id) ? 0 : 1)
    return settled(a) - settled(b) || (a.id < b.id ? -1 : 1)
  })
  for (const item of ordered) {
    // Reported and held: no action on any side, so its file and base stay and nothing deletes it.
    const unholdable = () => {
      held.add(item.id)
      problems.push({
        id: item.id,
        problem: reservedMedia(item)
          ? `media "${item.id}" is not mirrored: its name ${JSON.stringify(item.name)} in folder ${JSON.stringify(item.folder)} is one git or cms-sync reads as settings (a file so named would change what git commits); it stays on the server, untouched`
          : `media "${item.id}" has the name ${JSON.stringify(item.name)} in folder ${JSON.stringify(item.folder)}, which no file in media/ can hold on every platform`,
      })
    }
    if (unsafeMedia(item)) {
      unholdable()
      continue
    }
    const base = input.base.get(item.id)
    const mine = local.get(item.id)
    const rev = item.updateDate ?? ''
    const moved = !base || base.name !== item.name || base.folder !== item.folder
    let rel: string
    if (base && !moved) rel = base.rel
    else if (!base && mine)
      rel = mine.rel // a first sync adopts the workspace's path for the id
    else rel = folders.spell(localRelOf(item.folder, item.name))
    if (used.has(foldedPath(rel)) && mine?.rel !== rel && base?.rel !== rel) rel = disambiguated(rel, item.id)
    // A long name plus its ~tag may pass the file-name limit.
    if (Buffer.byteLength(splitRel(rel).name) > 255) {
      unholdable()
      continue
    }
    used.add(foldedPath(rel))
    folders.note(rel)
    // The bytes are known unchanged while the server's revision is: spec's updateDate moves on
    // every upload; upstream has none, so there only a rename or move is seen (or --checksum).
    // A base from cms-sync.lock was another machine's sync: on a server without dates, a file
    // edited here is compared with the server's bytes before it may overwrite them (a conflict
    // at worst), as the lock promises for every kind.
    const unverifiedEdit = base?.fromLock === true && mine !== undefined && mine.sha256 !== base.sha256
    const unchanged =
      base !== undefined &&
      !input.recheck?.has(item.id) &&
      (item.updateDate !== null ? rev === base.rev : !moved && !input.checksum && !unverifiedEdit)
    const sha256 = unchanged ? base.sha256 : undefined
    if (sha256 === undefined && mine) needBytes.push(item.id)
    remote.set(item.id, { id: item.id, rel, name: item.name, folder: item.folder, rev, sha256 })
  }
  return { local, remote, problems, needBytes, held }
}
