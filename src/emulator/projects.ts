// Projects, their environments and their settings documents (§5.7). A project exists when
// its settings collection holds the project-level document; its environments are the other
// documents of that collection, as upstream derives them from `usedBy`.

import type { Obj } from './entities.js'
import { names, type Store } from './store.js'

const PROJECT_DOC = 'project'

/** Why a name cannot be an environment, or undefined when it can (§1.2: "settings" means none). */
export function badEnvironmentName(name: string): string | undefined {
  if (name === '' || name === PROJECT_DOC || name === 'settings')
    return `"${name}" cannot be an environment name`
  if (/[/\\\u0000-\u001f]/.test(name))
    return `environment "${name}" may not hold slashes or control characters`
  return undefined
}

export class Projects {
  constructor(private readonly store: Store) {}

  exists(project: string): boolean {
    return this.store.has(names.settings(project), PROJECT_DOC)
  }

  ids(): string[] {
    return this.store.keys(names.projects)
  }

  environments(project: string): string[] {
    return this.store.keys(names.settings(project)).filter((k) => k !== PROJECT_DOC)
  }

  hasEnvironment(project: string, environment: string): boolean {
    return environment !== PROJECT_DOC && this.store.has(names.settings(project), environment)
  }

  create(project: string, name: string, environments: string[] = ['live']): void {
    this.store.put(names.projects, project, { id: project })
    this.store.put(names.settings(project), PROJECT_DOC, { info: { name }, languages: ['en'], sync: {} })
    for (const env of environments) this.addEnvironment(project, env)
  }

  addEnvironment(project: string, environment: string): void {
    if (!this.hasEnvironment(project, environment)) this.store.put(names.settings(project), environment, {})
  }

  removeEnvironment(project: string, environment: string): void {
    this.store.drop(names.envPrefix(project, environment))
    this.store.del(names.settings(project), environment)
    this.removeTasks((t) => t.project === project && t.environment === environment)
  }

  remove(project: string): void {
    this.store.drop(names.projectPrefix(project))
    this.store.del(names.projects, project)
    this.removeTasks((t) => t.project === project)
  }

  private removeTasks(match: (task: Obj) => boolean): void {
    for (const key of this.store.keys(names.tasks)) {
      const task = this.store.get<Obj>(names.tasks, key)
      if (task && match(task)) this.store.del(names.tasks, key)
    }
  }

  /** A settings document (project-level or one environment's), without `usedBy`. */
  settings(project: string, scope: string = PROJECT_DOC): Obj {
    return this.store.get<Obj>(names.settings(project), scope) ?? {}
  }

  /** With a section, replaces that key; without, sets the body's top-level keys (§6.9). */
  setSettings(project: string, scope: string, section: string | undefined, value: unknown): void {
    const doc = this.settings(project, scope)
    if (section !== undefined) doc[section] = value
    else if (value && typeof value === 'object' && !Array.isArray(value)) Object.assign(doc, value)
    this.store.put(names.settings(project), scope, doc)
  }

  /** The Project object of §5.7 as the server group returns it. */
  describe(project: string, users: Obj[]): Obj {
    return {
      id: project,
      users,
      settings: this.settings(project),
      environments: this.environments(project),
      backups: [],
    }
  }
}
