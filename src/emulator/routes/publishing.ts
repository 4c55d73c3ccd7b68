// Publishing (§6.2 `POST P/content/publish|unpublish`, ConnectionService.publishContent): the
// item in the body is deployed through the connection its `settings.publishing` names (or the
// nearest parent's whose settings have `applyToChildren`), and then written as a second full
// write with `isPublished` set, schedule dates included. The spec says nothing of publishing, so
// both dialects follow the upstream server; only the status of its errors differs (Dialect).
//
// Deployment is modelled with the filesystem deployer and the JSON processor: one file per
// project language, `<rootPath>/<paths.content>/<language>/<id>.json`, holding the item's
// localised properties and its meta fields. Unpublish removes those files. Unlike the server,
// the emulator writes only inside its deploy folder (EmulatorOptions.deployRoot): a relative
// rootPath counts from there, and a rootPath outside it is refused. A git deployer writes the
// same files where the repository's working tree would hold them (gitFolder): the emulator
// reaches no remote. The api deployer, which would send content to another server, is refused.

import { mkdir, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { Core, Ctx, Route } from '../context.js'
import { isObj, type Obj } from '../entities.js'
import { HttpError, json } from '../http.js'
import { Projects } from '../projects.js'
import { names } from '../store.js'
import { buildContent, inheritedParent, persistContent, withSchedule } from './content-model.js'
import { col, envItem } from './resource.js'

const P = '/api/:project/:environment'

type Verb = 'publish' | 'unpublish'

export function publishingRoutes(route: Route): void {
  for (const verb of ['publish', 'unpublish'] as const) {
    route('POST', `${P}/content/${verb}`, { auth: 'user' }, async (ctx) => {
      const value = await ctx.body()
      const body = isObj(value) ? value : {}
      const userId = ctx.userId()
      const id = typeof body.id === 'string' ? body.id : ''
      const existing = envItem(ctx, 'content', id)
      if (!existing && !ctx.d.writes.silentNoopWithoutCreate)
        throw ctx.d.errors.notFound(`Content by id "${id}" was not found`)
      const connection = connectionFor(ctx, verb, body, id)
      await deploy(ctx, verb, connection, body, id)
      // The second write: the body as sent, with the flag the deployment earned. Like the
      // server's set without create, an id it does not hold is written nowhere.
      const parent = await inheritedParent(ctx, body.parentId)
      const content = buildContent(
        ctx,
        { ...body, isPublished: verb === 'publish' },
        id,
        existing,
        userId,
        parent,
      )
      if (existing) ctx.core.store.put(col(ctx, 'content'), id, persistContent(ctx, content, userId))
      return json(content)
    })
  }
}

/**
 * The schedule (§5.6, ScheduleService): a task whose date has come publishes or unpublishes its
 * content through the same path as the request, read by id (so with its dates), and is then
 * removed; a task that fails is removed too, and a task whose content is gone as well. The
 * server checks every minute; the emulator checks before it answers each request, so a test
 * that moves its clock (EmulatorOptions.now) sees the task run at its next request.
 */
export async function runDueTasks(core: Core): Promise<void> {
  const due = core.store
    .keys(names.tasks)
    .map((key) => ({ key, task: core.store.get<Obj>(names.tasks, key) }))
    .filter(({ task }) => task && typeof task.date === 'string' && Date.parse(task.date) <= core.now())
  for (const { key, task } of due) {
    core.store.del(names.tasks, key)
    const ctx = {
      core,
      d: core.d,
      project: String(task!.project),
      environment: String(task!.environment),
    } as Ctx
    const id = String(task!.content)
    const stored = envItem(ctx, 'content', id)
    if (!stored) continue
    const verb: Verb = task!.type === 'unpublish' ? 'unpublish' : 'publish'
    const userId = String(task!.user ?? '')
    try {
      const content = withSchedule(ctx, stored)
      await deploy(ctx, verb, connectionFor(ctx, verb, content, id), content, id)
      const written = {
        ...content,
        isPublished: verb === 'publish',
        updateDate: new Date(core.now()).toISOString(),
        updatedBy: userId,
      }
      // The task just run is gone; the other one (if any) stays as it was.
      core.store.put(col(ctx, 'content'), id, { ...written, publishOn: null, unpublishOn: null })
    } catch (error) {
      core.log.warn(`scheduled ${verb} of content "${id}" failed: ${(error as Error).message}`)
    }
  }
}

/**
 * The connection that deploys the item: the nearest stored ancestor whose publishing settings
 * apply to children governs; else the item's own settings. The server's two messages differ by
 * one letter, and are kept.
 */
function connectionFor(ctx: Ctx, verb: Verb, body: Obj, id: string): Obj {
  const settings = governingSettings(ctx, body)
  const connectionId =
    isObj(settings) && typeof settings.connectionId === 'string' ? settings.connectionId : ''
  if (!connectionId) {
    const noun = verb === 'publish' ? 'connections' : 'connection'
    throw ctx.d.errors.bad(`No ${noun} defined for content "${id}"`)
  }
  const connection = envItem(ctx, 'connections', connectionId)
  if (!connection) throw ctx.d.errors.notFound(`Connection by id "${connectionId}" was not found`)
  return connection
}

function governingSettings(ctx: Ctx, body: Obj): unknown {
  const seen = new Set<string>()
  let parentId = body.parentId
  while (typeof parentId === 'string' && parentId !== '' && !seen.has(parentId)) {
    seen.add(parentId)
    const parent = envItem(ctx, 'content', parentId)
    if (!parent) break
    const publishing = isObj(parent.settings) ? parent.settings.publishing : undefined
    if (isObj(publishing) && publishing.applyToChildren) return publishing
    parentId = parent.parentId
  }
  return isObj(body.settings) ? body.settings.publishing : undefined
}

async function deploy(ctx: Ctx, verb: Verb, connection: Obj, body: Obj, id: string): Promise<void> {
  const processor = isObj(connection.processor) ? connection.processor : {}
  const deployer = isObj(connection.deployer) ? connection.deployer : {}
  if (verb === 'publish' && processor.alias !== 'json' && processor.alias !== 'uischema')
    throw deployError(ctx, 'This Connection has no processor defined')
  if (deployer.alias !== 'filesystem' && deployer.alias !== 'git') {
    const method = verb === 'publish' ? 'setFile' : 'removeFile'
    throw deployError(
      ctx,
      deployer.alias === 'api'
        ? 'The emulator does not deploy through the "api" deployer (it would send the content to another server)'
        : `The "${method}" method should be overridden.`,
    )
  }
  const folder = deployer.alias === 'git' ? gitFolder(ctx, deployer) : contentFolder(ctx, deployer)
  const languages = new Projects(ctx.core.store).settings(ctx.project).languages
  for (const language of Array.isArray(languages) && languages.length > 0 ? languages : ['en']) {
    const file = path.join(folder, String(language), `${id}${processor.fileExtension ?? '.json'}`)
    if (!inside(ctx.core.deployRoot, file))
      throw deployError(ctx, `Path "${file}" is outside the deploy folder`)
    try {
      if (verb === 'unpublish') await rm(file, { force: true })
      else {
        await mkdir(path.dirname(file), { recursive: true })
        await writeFile(file, JSON.stringify(processed(ctx, body, String(language))))
      }
    } catch (error) {
      throw deployError(ctx, (error as Error).message)
    }
  }
}

function contentFolder(ctx: Ctx, deployer: Obj): string {
  const root = typeof deployer.rootPath === 'string' ? deployer.rootPath : ''
  const paths = isObj(deployer.paths) ? deployer.paths : {}
  const absoluteRoot = path.resolve(ctx.core.deployRoot, root)
  if (!inside(ctx.core.deployRoot, absoluteRoot))
    throw deployError(
      ctx,
      `rootPath "${root}" is outside the emulator's deploy folder ${ctx.core.deployRoot}`,
    )
  return path.join(absoluteRoot, typeof paths.content === 'string' ? paths.content : '')
}

/**
 * The emulator reaches no git remote: a git deployer's content lands where the repository's
 * working tree would hold it after the push, `<deployRoot>/git/<repo>/<branch>/<paths.content>`,
 * the repository address made into one safe folder name.
 */
function gitFolder(ctx: Ctx, deployer: Obj): string {
  const safe = (value: unknown, fallback: string) =>
    (typeof value === 'string' ? value.replace(/^[a-z]+:\/\//i, '') : '')
      .replace(/[^A-Za-z0-9._-]+/g, '_')
      .replace(/^\.+/, '') || fallback
  const paths = isObj(deployer.paths) ? deployer.paths : {}
  return path.join(
    ctx.core.deployRoot,
    'git',
    safe(deployer.repo, 'repository'),
    safe(deployer.branch, 'main'),
    typeof paths.content === 'string' ? paths.content : '',
  )
}

function inside(root: string, target: string): boolean {
  const rel = path.relative(path.resolve(root), path.resolve(target))
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel))
}

/** A deployer's failure: the server sends its message as the answer (404 upstream, 502 spec). */
function deployError(ctx: Ctx, message: string): HttpError {
  return ctx.d.name === 'upstream' ? ctx.d.errors.notFound(message) : new HttpError(502, message)
}

/** The JSON processor's document: the properties in one language, then the meta fields. */
function processed(ctx: Ctx, body: Obj, language: string): Obj {
  const nameOf = (userId: unknown) => {
    const user = typeof userId === 'string' ? ctx.core.users.byId(userId) : undefined
    return user ? user.fullName || user.username : 'Unknown'
  }
  return {
    ...localised(isObj(body.properties) ? body.properties : {}, language),
    id: body.id,
    parentId: body.parentId ?? '',
    schemaId: body.schemaId ?? '',
    createDate: body.createDate ?? null,
    updateDate: body.updateDate ?? null,
    createdBy: nameOf(body.createdBy),
    updatedBy: nameOf(body.updatedBy),
    sort: body.sort ?? -1,
    language,
  }
}

/** Content.getLocalizedProperties: a multilingual value becomes its value in that language. */
function localised(value: Obj, language: string): Obj {
  const out: Obj = {}
  for (const [key, item] of Object.entries(value)) out[key] = localisedValue(item, language)
  return out
}

function localisedValue(value: unknown, language: string): unknown {
  if (Array.isArray(value)) return value.map((v) => localisedValue(v, language))
  if (!isObj(value)) return value
  if (value._multilingual) return value[language] ?? null
  return localised(value, language)
}
