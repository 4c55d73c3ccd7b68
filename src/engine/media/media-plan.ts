// Media through the one planner: each item (by id) gets a version per side whose hash is its
// bytes' sha256 plus its path, so decide() sees a rename or move like an edit, and a change
// of both bytes and path on two sides as a conflict. Pure: no fs, no http.
//
// What an action means for media (carried out by media-apply.ts):
//   push          new file -> upload (new id) and tree item; other bytes -> upload to the same id;
//                 other name -> rename; other folder -> tree move (never delete + upload)
//   pull          other path -> move the local file; other bytes -> download
//   delete-*      as for every kind

import { decide, type PlanItem, type PlanOptions } from '../plan.js'
import type { MediaBaseItem, MediaMatch } from './media-match.js'

export const MEDIA_FOLDER = 'media'

export function mediaPath(rel: string): string {
  return `${MEDIA_FOLDER}/${rel}`
}

function version(sha256: string | undefined, rel: string, rev: string): string {
  // Unknown bytes (not downloaded) never equal anything, so they count as changed.
  return `${sha256 ?? `unknown:${rev}`}\0${rel}`
}

export function planMedia(
  match: MediaMatch,
  base: ReadonlyMap<string, MediaBaseItem>,
  opts: PlanOptions,
): PlanItem[] {
  const keys = [...new Set([...base.keys(), ...match.local.keys(), ...match.remote.keys()])]
    .filter((key) => !match.held.has(key))
    .sort()
  return keys.map((key): PlanItem => {
    const b = base.get(key)
    const l = match.local.get(key)
    const r = match.remote.get(key)
    const decision = decide(
      b && version(b.sha256, b.rel, b.rev),
      l && version(l.sha256, l.rel, ''),
      r && version(r.sha256, r.rel, r.rev),
      opts,
    )
    // The path the item ends up at: the winner's, else wherever it is now.
    const pullSide = decision.action === 'pull' || decision.action === 'delete-local'
    const rel = (pullSide ? (r ?? l) : (l ?? r))?.rel ?? b!.rel
    const from = b && b.rel !== rel ? { from: mediaPath(b.rel) } : {}
    return { kind: 'media', id: l?.id ?? r?.id ?? b?.id ?? '', path: mediaPath(rel), ...decision, ...from }
  })
}
