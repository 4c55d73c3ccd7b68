// A command line that names a command loads that command's module alone; help and anything
// commander must judge (unknown words, no command) see every command, as before.

import os from 'node:os'
import { expect, test } from 'vitest'
import { commandNamed } from '../../src/cli/program.js'
import { cli } from '../helpers/cli.js'

test.each([
  [['status'], 'status'],
  [['-C', 'ws', 'status', 'content'], 'status'],
  [['--dir', 'pull', 'push'], 'push'], // the value of --dir is not the command
  [['--dir=ws', '-q', 'server-config', 'get'], 'server-config'],
  [['-qC', 'status', 'diff'], 'diff'],
  [['-Cws', '--json', 'sync'], 'sync'],
  [['--json', '-v', 'watch'], 'watch'],
  [[], undefined],
  [['--help'], undefined],
  [['help', 'status'], undefined],
  [['stauts'], undefined],
  [['--', 'status'], undefined],
])('%j names %s', (argv, name) => {
  expect(commandNamed(argv)).toBe(name)
})

test('help lists every command; a misspelt command still gets a suggestion', async () => {
  const help = await cli(['--help'], { cwd: os.tmpdir() })
  expect(help.exitCode).toBe(0)
  for (const name of ['init', 'status', 'pull', 'push', 'sync', 'watch', 'doctor', 'server-config'])
    expect(help.stdout).toContain(name)
  const typo = await cli(['stauts'], { cwd: os.tmpdir() })
  expect(typo.exitCode).toBe(2)
  expect(typo.stderr).toContain('(Did you mean status?)')
  const commandHelp = await cli(['status', '--help'], { cwd: os.tmpdir() })
  expect(commandHelp.stdout).toContain('Usage: cms-sync status [options] [paths...]')
})
