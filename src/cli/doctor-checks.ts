// The checks `cms-sync doctor` runs, each a line with a verdict and, when it fails, what to do.
// They never print a token: the project's sync token is reduced to "stored or not".

import { readdir } from 'node:fs/promises'
import type { RemoteClient } from '../remote/client.js'
import { checkTarget, describeChoices, parentSettings } from '../remote/server-group.js'
import { type ItemState, loadState, sameTarget } from '../state/state-file.js'
import { isBytes } from '../workspace/kinds.js'
import { syncDirPath } from '../workspace/layout.js'
import type { Workspace } from './context.js'

export interface Check {
  name: string
  ok: boolean
  detail: string
  hint?: string
}

const MAX_SKEW_S = 60

const pass = (name: string, detail: string): Check => ({ name, ok: true, detail })
const fail = (name: string, detail: string, hint?: string): Check => ({
  name,
  ok: false,
  detail,
  ...(hint ? { hint } : {}),
})

export async function tokenCheck(
  client: RemoteClient,
): Promise<{ check: Check; admin: boolean; known: boolean }> {
  try {
    const user = await client.checkToken()
    const admin = user.isAdmin === true
    const who = typeof user.username === 'string' ? user.username : 'an unnamed user'
    return {
      check: pass('token', `valid: logged in as ${who}${admin ? ' (admin)' : ''}`),
      admin,
      known: true,
    }
  } catch (error) {
    return {
      check: fail('token', (error as Error).message, 'run `cms-sync login`, or set CMS_SYNC_TOKEN'),
      admin: false,
      known: false,
    }
  }
}

export async function targetCheck(client: RemoteClient): Promise<Check> {
  const { project, environment } = client.target
  const result = await checkTarget(client)
  if (result.ok === true) return pass('target', `project "${project}", environment "${environment}" exist`)
  if (result.ok === false)
    return fail('target', describeChoices(result), 'fix project:/environment: in cms-sync.yaml')
  return fail('target', result.message, 'log in with a user that can see the project')
}

/** Can this token write? A heartbeat on an id no item has changes nothing anywhere (§6.14). */
export async function permissionCheck(client: RemoteClient, admin: boolean): Promise<Check> {
  const { project, environment } = client.target
  const path = `/api/${encodeURIComponent(project)}/${encodeURIComponent(environment)}/content/heartbeat/cms-sync-doctor`
  const res = await client.request('POST', path, { responseType: 'text' })
  const role = admin ? 'admin' : 'not admin (server-config and --self-test need an admin)'
  if (res.status >= 200 && res.status < 300) return pass('permissions', `can write; ${role}`)
  return fail(
    'permissions',
    `a harmless write was refused (${res.status} ${String(res.body).trim().slice(0, 120)}); ${role}`,
    'ask an admin for write access to this project',
  )
}

export async function syncSettingsCheck(client: RemoteClient, ws: Workspace): Promise<Check[]> {
  const settings = await parentSettings(client)
  if (!settings) return [fail('sync settings', 'the project settings could not be read')]
  if (!settings.enabled) return [pass('sync settings', 'off: the project inherits from no parent')]
  const where = `${settings.url ?? '(no url)'} project "${settings.project ?? '(none)'}"`
  const checks: Check[] = []
  if (!settings.url || !settings.project || !settings.hasToken)
    checks.push(
      fail(
        'sync settings',
        `on, but incomplete: parent ${where}, ${settings.hasToken ? 'a token is stored' : 'no token stored'}`,
        'complete sync: {url, token, project} in the project settings',
      ),
    )
  else {
    const origin = new URL(settings.url).origin
    try {
      // Any HTTP answer means the parent is up; its token is the server's, never sent from here.
      await fetch(`${origin}/api/${encodeURIComponent(settings.project)}/environments`, {
        signal: AbortSignal.timeout(5000),
      })
      checks.push(
        pass(
          'sync settings',
          `on: inherits from ${where}; the parent answers (from here); a token is stored`,
        ),
      )
    } catch (error) {
      checks.push(
        fail(
          'sync settings',
          `on: inherits from ${where}, but the parent does not answer from here (${(error as Error).message})`,
          'an upstream server turns its own sync off after one failed read of the parent',
        ),
      )
    }
  }
  if (client.capabilities.schemas.listingDisablesParentSync && ws.config.resources.includes('schemas'))
    checks.push(
      fail(
        'sync and schemas',
        'this server disables its own sync the first time schemas are listed (its parent rejects customOnly, upstream §9)',
        'leave schemas out of resources: in cms-sync.yaml while the project inherits',
      ),
    )
  return checks
}

/** Compares the server's Date header with the local clock, read halfway through the request. */
export async function clockCheck(client: RemoteClient): Promise<Check> {
  const before = Date.now()
  const res = await client.request('GET', `/api/${encodeURIComponent(client.target.project)}/environments`)
  const local = (before + Date.now()) / 2
  const header = res.headers.date
  const server = typeof header === 'string' ? Date.parse(header) : Number.NaN
  if (Number.isNaN(server)) return fail('clock', 'the server sent no Date header to compare with')
  const skew = Math.round((local - server) / 1000)
  const detail = `${Math.abs(skew)} s ${skew >= 0 ? 'ahead of' : 'behind'} the server`
  if (Math.abs(skew) > MAX_SKEW_S)
    return fail(
      'clock',
      `this machine is ${detail}`,
      'sync the clock (NTP); scheduled dates and logs will be off',
    )
  return pass('clock', `this machine is ${detail}`)
}

export async function workspaceChecks(ws: Workspace): Promise<Check[]> {
  const checks: Check[] = []
  const state = await loadState(ws.root).catch((error: Error) => error)
  const configured = {
    server: ws.config.server,
    project: ws.config.project,
    environment: ws.config.environment,
  }
  if (state instanceof Error) checks.push(fail('state', state.message))
  else if (!state) checks.push(pass('state', 'not synced yet (no .cms-sync/state/)'))
  else if (!sameTarget(state.target, configured))
    checks.push(
      fail(
        'state',
        `bound to ${state.target.server} ${state.target.project}/${state.target.environment}, not to cms-sync.yaml's target`,
        'run `cms-sync sync --rebind` to start over against the configured target',
      ),
    )
  else checks.push(pass('state', `bound to this target; ${Object.keys(state.items).length} items synced`))
  const { describeHolder, lockHolder } = await import('../state/lock.js')
  const holder = await lockHolder(ws.root)
  checks.push(pass('lock', holder === undefined ? 'free' : `held by ${describeHolder(holder)}`))
  const { describePause, PAUSE_LIFT, readPause } = await import('../watch/mass-change.js')
  const pause = await readPause(ws.root)
  checks.push(
    pause === undefined ? pass('watch', 'not paused') : fail('watch', describePause(pause), PAUSE_LIFT),
  )
  if (state && !(state instanceof Error)) checks.push(...(await truthChecks(ws.root, state.items)))
  const conflicts = await countFiles(syncDirPath(ws.root, 'conflicts'))
  checks.push(
    conflicts === 0
      ? pass('conflicts', 'none pending')
      : fail(
          'conflicts',
          `${conflicts} pending`,
          'see `cms-sync status`, then `cms-sync resolve <paths> --keep local|remote`',
        ),
  )
  return checks
}

/**
 * What status would name beside its changes, from the local records alone: media bytes the
 * server cannot vouch for and since when they were last compared, and our pushes an editor's
 * stale save reverted.
 */
async function truthChecks(root: string, items: Record<string, ItemState>): Promise<Check[]> {
  const checks: Check[] = []
  const undated = Object.values(items).filter((item) => isBytes(item.kind) && item.remoteRev === '')
  if (undated.length > 0) {
    const times = undated.flatMap((item) => (item.verifiedAt ? [item.verifiedAt] : [])).sort()
    const never = undated.length - times.length
    const since = [
      ...(times[0] ? [`the oldest last compared ${times[0]}`] : []),
      ...(never > 0 ? [`${never} never compared here`] : []),
    ].join(', ')
    checks.push(
      pass(
        'media bytes',
        `${undated.length} media items the server lists without dates: their bytes are compared only when read (${since}); \`cms-sync status --checksum\` compares them all, \`cms-sync watch\` re-reads them within watch.verifyMedia`,
      ),
    )
  }
  const { RecentPushes } = await import('../state/recent-pushes.js')
  const reverted = (await RecentPushes.load(root)).reverted()
  if (reverted.length > 0)
    checks.push(
      fail(
        'reverted',
        `${reverted.length} of our pushes reverted on the server by an editor's save: ${reverted.map(([path]) => path).join(', ')}`,
        'see `cms-sync status`; `cms-sync push --again <paths>` sends ours again',
      ),
    )
  return checks
}

async function countFiles(dir: string): Promise<number> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => [])
  return entries.filter((e) => e.isFile()).length
}
