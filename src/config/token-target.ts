// Where CMS_SYNC_TOKEN may go. In CI every committed file may be written by a hostile pull
// request, cms-sync.yaml and cms-sync.lock included: what the workspace says about its server
// cannot bind a token that came from the environment. The environment that holds the token names
// the target beside it (CMS_SYNC_SERVER, CMS_SYNC_PROJECT, CMS_SYNC_ENVIRONMENT, set by the CI
// job from the repository's settings, which a pull request cannot change); cms-sync.yaml must
// agree with each one set, or nothing is sent. In CI a token from the environment without a named
// server is refused: a run cannot tell the server the job meant from the one a commit wrote.

import { CliError, ExitCode } from '../errors/exit-codes.js'
import { ConfigError } from './errors.js'

/** The variables that name the target, beside CMS_SYNC_TOKEN. */
export const TARGET_VARIABLES = {
  server: 'CMS_SYNC_SERVER',
  project: 'CMS_SYNC_PROJECT',
  environment: 'CMS_SYNC_ENVIRONMENT',
} as const

type TargetField = keyof typeof TARGET_VARIABLES

/**
 * Variables by which CI services that do not set `CI` are known (Jenkins, Azure Pipelines, AWS
 * CodeBuild, TeamCity, Bamboo, Google Cloud Build's builder images): a job there with the token
 * is a CI job all the same.
 */
const CI_MARKERS = [
  'JENKINS_URL',
  'TF_BUILD',
  'CODEBUILD_BUILD_ID',
  'TEAMCITY_VERSION',
  'bamboo_buildKey',
  'BUILDER_OUTPUT',
  'GITHUB_ACTIONS',
  'GITLAB_CI',
  'BUILDKITE',
  'CIRCLECI',
  'BITBUCKET_BUILD_NUMBER',
  'DRONE',
  'WOODPECKER_CI',
] as const

/**
 * Whether this runs in CI. `CI`, when set, says so: anything but empty, `0` or `false` (most
 * services set it). Unset, a variable one of the others sets says so.
 */
export function inCi(env: NodeJS.ProcessEnv): boolean {
  const value = env.CI?.trim().toLowerCase()
  if (value !== undefined) return value !== '' && value !== '0' && value !== 'false'
  return CI_MARKERS.some((name) => (env[name]?.trim() ?? '') !== '')
}

function named(env: NodeJS.ProcessEnv, field: TargetField): string | undefined {
  return env[TARGET_VARIABLES[field]]?.trim() || undefined
}

/** One spelling per server: no trailing slash, scheme and host lower-cased (also the credentials file's key). */
export function serverKey(server: string): string {
  try {
    const url = new URL(server)
    return `${url.origin}${url.pathname.replace(/\/+$/, '')}`
  } catch {
    return server.replace(/\/+$/, '')
  }
}

/**
 * Stops (exit 4) before any request when a target variable that is set names another server,
 * project or environment than `target` (what cms-sync.yaml or --server says). Fields of the target
 * left out are not checked (whoami knows only a server).
 */
export function refuseUnnamedTarget(
  env: NodeJS.ProcessEnv,
  target: { server: string; project?: string; environment?: string },
): void {
  const server = named(env, 'server')
  if (server !== undefined && serverKey(server) !== serverKey(target.server))
    throw new CliError(
      `safety stop: CMS_SYNC_SERVER names ${server}, but cms-sync.yaml names ${target.server}; nothing was sent to ${target.server}: the token goes only to the server the environment names. If the workspace really moved, change CMS_SYNC_SERVER where it is set (in CI, the repository variable)`,
      ExitCode.safetyStop,
    )
  for (const field of ['project', 'environment'] as const) {
    const want = named(env, field)
    const have = target[field]
    if (want !== undefined && have !== undefined && want !== have)
      throw new CliError(
        `safety stop: ${TARGET_VARIABLES[field]} names ${JSON.stringify(want)}, but cms-sync.yaml names ${field}: ${JSON.stringify(have)}; nothing was sent: a run goes only to the ${field} the environment names`,
        ExitCode.safetyStop,
      )
  }
}

/**
 * A token from CMS_SYNC_TOKEN in CI needs the target named beside it: the server for any command,
 * and the project and environment where the command works on one (`fields`). Outside CI the
 * workspace's own binding (its state and lock) stands in, as a person's shell is not a pull
 * request's job.
 */
export function requireNamedTarget(env: NodeJS.ProcessEnv, fields: readonly TargetField[]): void {
  if (!env.CMS_SYNC_TOKEN?.trim() || !inCi(env)) return
  const missing = fields.filter((field) => named(env, field) === undefined).map((f) => TARGET_VARIABLES[f])
  if (missing.length === 0) return
  throw new ConfigError(
    `CMS_SYNC_TOKEN is set in CI, but ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not: in CI the token goes only to the target the environment names, never to one a commit wrote in cms-sync.yaml; set ${missing.join(', ')} beside CMS_SYNC_TOKEN (from repository variables, see docs/ci/github-actions.yml). Nothing was sent`,
  )
}

/**
 * A password goes only where a token may. `login` takes its server from cms-sync.yaml unless
 * --server (the job's own command line) names it; in CI that file is a commit's word, so the
 * server must be named by the environment or the command line.
 */
export function refuseLoginTarget(env: NodeJS.ProcessEnv, server: string, fromCommandLine: boolean): void {
  refuseUnnamedTarget(env, { server })
  if (fromCommandLine || !inCi(env) || named(env, 'server') !== undefined) return
  throw new ConfigError(
    `login in CI would send the password to ${server}, which only cms-sync.yaml names (a commit can change it): set CMS_SYNC_SERVER beside the password (from a repository variable), or pass --server. Nothing was sent`,
  )
}

/**
 * `tls: { insecure: true }` in cms-sync.yaml turns certificate checks off, and a commit can set
 * it: anyone on the network path could then take the token or the password. In CI it holds only
 * when the environment says so too (CMS_SYNC_TLS_INSECURE=true, beside the token).
 */
export function refuseCommittedInsecureTls(env: NodeJS.ProcessEnv, insecure: boolean): void {
  if (!insecure || !inCi(env) || env.CMS_SYNC_TLS_INSECURE?.trim().toLowerCase() === 'true') return
  throw new ConfigError(
    'cms-sync.yaml sets tls: { insecure: true }, which turns certificate checks off, and in CI a commit may have set it: set CMS_SYNC_TLS_INSECURE=true beside CMS_SYNC_TOKEN if the server really has a self-signed certificate. Nothing was sent',
  )
}
