// The Server and Settings groups as a client needs them: which projects and environments exist
// (for init and doctor, which list the choices when a name is wrong), and a project's own sync
// settings (the parent it inherits from). Every call goes through the client's queue.

import { TARGET_NOT_FOUND } from './capabilities.js'
import type { RemoteClient, RemoteObject } from './client.js'
import { cleanServerMessage } from './errors.js'

export type TargetCheck =
  | { ok: true }
  | { ok: false; missing: 'project' | 'environment'; message: string; choices: string[] | undefined }
  /** The server would not say (no token, no access): neither confirmed nor refuted. */
  | { ok: 'unknown'; message: string; status: number }

function stringList(body: unknown): string[] | undefined {
  return Array.isArray(body) && body.every((x) => typeof x === 'string') ? body : undefined
}

function textOf(body: unknown): string {
  return typeof body === 'string' ? cleanServerMessage(body) : ''
}

/** The project ids this token may see (`GET /api/server/projects?ids=true`); undefined when refused. */
export async function projectChoices(client: RemoteClient): Promise<string[] | undefined> {
  const res = await client.request('GET', '/api/server/projects?ids=true')
  return res.status === 200 ? stringList(res.body) : undefined
}

/** Whether the client's project and environment exist, with the choices when one does not. */
export async function checkTarget(client: RemoteClient): Promise<TargetCheck> {
  const { project, environment } = client.target
  const res = await client.request('GET', `/api/${encodeURIComponent(project)}/environments`)
  const environments = res.status === 200 ? stringList(res.body) : undefined
  if (environments) {
    if (environments.includes(environment)) return { ok: true }
    return {
      ok: false,
      missing: 'environment',
      message: `project "${project}" has no environment "${environment}"`,
      choices: environments,
    }
  }
  const text = textOf(res.body)
  if (TARGET_NOT_FOUND.test(text) || res.status === 404 || res.status === 400) {
    return {
      ok: false,
      missing: 'project',
      message: `the server has no project "${project}"`,
      choices: await projectChoices(client),
    }
  }
  return {
    ok: 'unknown',
    status: res.status,
    message: `the server would not list the environments of "${project}" (${res.status}${text ? `: ${text.slice(0, 120)}` : ''})`,
  }
}

/** "choose one of: a, b" or a hint for when the list could not be read. */
export function describeChoices(check: Extract<TargetCheck, { ok: false }>): string {
  const flag = check.missing === 'project' ? '--project' : '--environment'
  if (check.choices === undefined)
    return `${check.message}; the list of ${check.missing}s is not visible to this token`
  if (check.choices.length === 0) return `${check.message}; there are none the token can see`
  return `${check.message}; pass ${flag} one of: ${check.choices.join(', ')}`
}

export interface ParentSettings {
  enabled: boolean
  url?: string
  project?: string
  /** Whether a token is stored (never the token itself). */
  hasToken: boolean
}

/** The project's sync settings (`GET /api/:p/settings/sync`), the token reduced to a yes/no. */
export async function parentSettings(client: RemoteClient): Promise<ParentSettings | undefined> {
  const res = await client.request('GET', `/api/${encodeURIComponent(client.target.project)}/settings/sync`)
  if (res.status !== 200 || typeof res.body !== 'object' || res.body === null) return undefined
  const sync = res.body as RemoteObject
  return {
    enabled: sync.enabled === true,
    ...(typeof sync.url === 'string' && sync.url !== '' ? { url: sync.url } : {}),
    ...(typeof sync.project === 'string' && sync.project !== '' ? { project: sync.project } : {}),
    hasToken: typeof sync.token === 'string' && sync.token !== '',
  }
}
