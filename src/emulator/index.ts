// startEmulator: the built-in CMS server emulator, in-process (tests) or behind
// `cms-sync emulator` (CLI). Cheap to start in memory and closes every socket and timer.

import { randomBytes } from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { type StartUser, Users } from './auth.js'
import type { Core, EmulatorStats, Logger } from './context.js'
import { DIALECTS, type DialectName } from './dialect.js'
import { type FaultSpec, Faults, parseFaults } from './faults.js'
import { badEnvironmentName, Projects } from './projects.js'
import { connectionRoutes } from './routes/connections.js'
import { contentRoutes } from './routes/content.js'
import { formRoutes } from './routes/forms.js'
import { mediaRoutes } from './routes/media.js'
import { runDueTasks } from './routes/publishing.js'
import { schemaRoutes } from './routes/schemas.js'
import { serverRoutes } from './routes/server.js'
import { settingsRoutes } from './routes/settings.js'
import { userRoutes } from './routes/users.js'
import { seedWorkspace } from './seed.js'
import { buildRouter, requestListener } from './server.js'
import { Store } from './store.js'

export type { EmulatorStats } from './context.js'
export type { DialectName } from './dialect.js'
export type { FaultSpec, Faults } from './faults.js'
export { parseFaults } from './faults.js'
export type { Store } from './store.js'

export type EmulatorOptions = {
  port?: number
  host?: string
  dataDir?: string
  seedDir?: string
  users?: StartUser[]
  project?: string
  environment?: string
  dialect?: DialectName
  faults?: FaultSpec | string
  faultSeed?: number
  rateLimit?: number
  maxBodyMb?: number
  /**
   * Upstream only: every project starts with its media cache folder made, as on a server whose
   * projects have served a file before. Without it a new project shows the real server's
   * cache-folder bug (Dialect.media.cacheFolderBug), as the real server does on every new project.
   */
  mediaCacheReady?: boolean
  logger?: Logger
  /**
   * Where the filesystem deployer of a connection writes published content (a connection's
   * rootPath counts from here, and may not leave it). Default: `<dataDir>/deploy`, or a fresh
   * temporary folder for an emulator held in memory.
   */
  deployRoot?: string
  /** The clock, for tests of expiry and dates. */
  now?: () => number
}

export type Emulator = {
  url: string
  port: number
  dialect: DialectName
  project: string
  environment: string
  /** Direct state access, for "someone else changed this" scenarios in tests. */
  store: Store
  users: Users
  projects: Projects
  faults: Faults
  /** Changes the injected faults of the running emulator. */
  setFaults(spec: FaultSpec | string, seed?: number): void
  setRateLimit(perSecond: number | undefined): void
  /** A valid token for a user, without a login round trip. */
  token(username?: string, persist?: boolean): string
  /** What --seed reported (or why it did not seed). */
  seedReport: string | undefined
  /** The folder published content is deployed under (EmulatorOptions.deployRoot). */
  deployRoot: string
  /** What it did so far (live counts, read-only by convention). */
  stats: EmulatorStats
  close(): Promise<void>
}

const SILENT: Logger = { info: () => {}, warn: () => {} }

export async function startEmulator(options: EmulatorOptions = {}): Promise<Emulator> {
  const dialectName = options.dialect ?? 'spec'
  if (!DIALECTS[dialectName]) throw new Error(`unknown dialect "${dialectName}"; expected spec or upstream`)
  const envProblem = badEnvironmentName(options.environment ?? 'live')
  if (envProblem) throw new Error(envProblem)
  const faultSpec = typeof options.faults === 'string' ? parseFaults(options.faults) : (options.faults ?? {})
  const store = options.dataDir ? Store.open(options.dataDir) : Store.inMemory()
  try {
    return await serve(store, { ...options, dialect: dialectName, faults: faultSpec })
  } catch (error) {
    // A failed start (bad seed, port in use) must not leave the data folder locked.
    store.close()
    throw error
  }
}

async function serve(store: Store, options: EmulatorOptions & { dialect: DialectName }): Promise<Emulator> {
  const dialectName = options.dialect
  const plain = DIALECTS[dialectName]
  const dialect = options.mediaCacheReady
    ? { ...plain, media: { ...plain.media, cacheFolderBug: false } }
    : plain
  const log = options.logger ?? SILENT
  const now = options.now ?? Date.now
  const projectId = options.project ?? 'demo'
  const environment = options.environment ?? 'live'
  const wasEmpty = store.isEmpty()
  const users = new Users(store, now)
  const projects = new Projects(store)

  if (users.list().length === 0) {
    const startUsers = options.users ?? [{ username: 'admin', password: 'admin', isAdmin: true }]
    await Promise.all(startUsers.map((user) => users.create({ ...user })))
  }
  if (!projects.exists(projectId)) projects.create(projectId, projectId, [environment])
  else projects.addEnvironment(projectId, environment)

  const faults = new Faults(options.faults as FaultSpec, options.rateLimit, options.faultSeed ?? 1, now)
  let baseUrl = ''
  const core: Core = {
    store,
    users,
    d: dialect,
    now,
    log,
    maxBodyBytes: (options.maxBodyMb ?? 50) * 1024 * 1024,
    url: () => baseUrl,
    selfTestKey: randomBytes(16).toString('hex'),
    stats: { listingsBuilt: 0 },
    deployRoot: path.resolve(
      options.deployRoot ??
        (options.dataDir
          ? path.join(options.dataDir, 'deploy')
          : // Made by the first publish: most emulators never deploy anything.
            path.join(tmpdir(), `cms-sync-emulator-deploy-${randomBytes(6).toString('hex')}`)),
    ),
  }

  core.beforeRequest = () => runDueTasks(core)

  let seedReport: string | undefined
  if (options.seedDir) {
    if (!wasEmpty) seedReport = `not seeding from ${options.seedDir}: the data folder already holds data`
    else seedReport = await seedWorkspace(core, options.seedDir, projectId, environment)
    log.info(seedReport)
  }

  const router = buildRouter(
    [
      userRoutes,
      serverRoutes,
      settingsRoutes,
      schemaRoutes,
      contentRoutes,
      connectionRoutes,
      mediaRoutes,
      formRoutes,
    ],
    core,
  )
  const timers = new Set<NodeJS.Timeout>()
  const server = createServer(requestListener(core, router, faults, timers))
  server.keepAliveTimeout = 5000
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve())
  })
  const port = (server.address() as AddressInfo).port
  baseUrl = `http://${options.host ?? '127.0.0.1'}:${port}`

  let closing: Promise<void> | undefined
  return {
    url: baseUrl,
    port,
    dialect: dialectName,
    project: projectId,
    environment,
    store,
    users,
    projects,
    faults,
    seedReport,
    deployRoot: core.deployRoot,
    stats: core.stats,
    setFaults: (spec, seed) => faults.set(spec, seed),
    setRateLimit: (perSecond) => {
      faults.rateLimit = perSecond
    },
    token(username = 'admin', persist = true) {
      const user = users.byName(username)
      if (!user) throw new Error(`no user "${username}"`)
      return users.issueToken(user, persist)
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer)
        timers.clear()
        server.close(() => {
          store.close()
          resolve()
        })
        server.closeAllConnections()
      })
      return closing
    },
  }
}
