import { execFileSync } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { afterEach, test } from 'vitest'
import { syncedWorld, type World } from './helpers/sync-world.js'

let w: World
afterEach(async () => w?.close())
test.each(['spec'] as const)(
  'probe %s',
  async (d) => {
    w = await syncedWorld(d)
    const git = (...a: string[]) =>
      execFileSync('git', ['-c', 'user.email=a@b', '-c', 'user.name=a', ...a], {
        cwd: w.root,
        encoding: 'utf8',
      })
    await writeFile(w.file('.gitignore'), '.cms-sync/\n')
    git('init', '-q')
    git('add', '-A')
    git('commit', '-qm', 'one')
    await w.editJson('content/home.json', { properties: { title: 'Second' } })
    await w.cli('push')
    await w.setContent('news', { properties: { title: 'news 2' } })
    await w.cli('pull')
    git('commit', '-qam', 'two')
    git('checkout', '-q', 'HEAD~1')
    const s = await w.cli('status')
    console.log(d, s.exitCode, s.stdout, s.stderr)
    console.log(JSON.stringify((await w.cli('--json', 'status')).json.changes))
  },
  60000,
)
