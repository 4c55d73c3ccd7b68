// Upcoming scheduled changes for `status`: content nodes whose publishOn / unpublishOn lies
// ahead. Bounded so status never costs one request per content item: only items whose file or
// listed server copy names a date are asked about, and each costs one request (spec: the
// schedule endpoint `P/schedule/:contentId`; upstream, whose endpoint always answers [] (§6.7),
// the node read by id, which carries the dates its list leaves out).

import { readFile } from 'node:fs/promises'
import { inScope } from '../engine/plan-apply-types.js'
import type { RemoteEntry } from '../engine/remote-snapshot.js'
import type { RemoteClient } from '../remote/client.js'
import { projectPath } from '../remote/dialect.js'
import type { JsonObject } from '../workspace/codec.js'
import { contentCodec } from '../workspace/content-codec.js'
import { absolute } from '../workspace/layout.js'
import type { LocalEntry } from '../workspace/scan.js'

export interface ScheduledChange {
  kind: 'content'
  id: string
  path: string
  type: 'publish' | 'unpublish'
  date: string
}

const FIELDS = [
  ['publish', 'publishOn'],
  ['unpublish', 'unpublishOn'],
] as const

function hasDate(object: Record<string, unknown> | undefined): boolean {
  return !!object && contentCodec.schedules!(object)
}

async function fileObject(root: string, path: string): Promise<Record<string, unknown> | undefined> {
  try {
    const value: unknown = JSON.parse(await readFile(absolute(root, path), 'utf8'))
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined
  } catch {
    return undefined
  }
}

/** The server's dates for one node: a list of {type, date}. */
async function serverDates(
  client: RemoteClient,
  id: string,
): Promise<Array<{ type: string; date: unknown }>> {
  if (client.capabilities.schedule.source === 'schedule-route') {
    const { project, environment } = client.target
    const res = await client.request(
      'GET',
      `${projectPath(project, environment)}/schedule/${encodeURIComponent(id)}`,
    )
    if (res.status !== 200 || !Array.isArray(res.body)) return []
    return res.body.filter((t): t is { type: string; date: unknown } => typeof t === 'object' && t !== null)
  }
  const node = await client.get('content', id)
  return FIELDS.map(([type, field]) => ({ type, date: node?.[field] }))
}

/** What the schedule reads of a run: its server and local sides (a plan's, or a run that found nothing changed). */
export interface ScheduleSides {
  remote: ReadonlyMap<
    string,
    Pick<RemoteEntry, 'kind' | 'id' | 'path' | 'hash' | 'complete' | 'schedules'> & { object?: JsonObject }
  >
  local: ReadonlyMap<string, Pick<LocalEntry, 'kind' | 'id' | 'path' | 'hash'>>
}

/** Scheduled changes after `now` for the content in scope, soonest first. */
export async function upcomingSchedule(
  client: RemoteClient,
  root: string,
  run: ScheduleSides,
  scope: readonly string[],
  now: number = Date.now(),
): Promise<ScheduledChange[]> {
  const candidates = new Map<string, string>()
  // A marked kept listing says so without being parsed (RemoteEntry.schedules).
  for (const entry of run.remote.values())
    if (entry.kind === 'content' && inScope(entry.path, scope) && (entry.schedules ?? hasDate(entry.object)))
      candidates.set(entry.path, entry.id)
  for (const entry of run.local.values()) {
    if (entry.kind !== 'content' || candidates.has(entry.path) || !inScope(entry.path, scope)) continue
    // Only a node the server has can be scheduled there.
    const remote = run.remote.get(entry.path)
    // A file equal to a complete server copy holds the dates just checked above: not re-read,
    // so a status over an unchanged workspace still reads no file content.
    if (!remote || (remote.complete && remote.hash === entry.hash)) continue
    if (hasDate(await fileObject(root, entry.path))) candidates.set(entry.path, entry.id)
  }
  const found = await Promise.all(
    [...candidates].map(async ([path, id]) =>
      (await serverDates(client, id)).flatMap((task): ScheduledChange[] => {
        const time = typeof task.date === 'string' ? Date.parse(task.date) : Number.NaN
        if (!(time > now) || (task.type !== 'publish' && task.type !== 'unpublish')) return []
        return [{ kind: 'content', id, path, type: task.type, date: new Date(time).toISOString() }]
      }),
    ),
  )
  return found.flat().sort((a, b) => a.date.localeCompare(b.date) || a.path.localeCompare(b.path))
}
