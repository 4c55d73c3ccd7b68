// --help of every command shows the global options and examples; `cms-sync completion` gives
// scripts for bash, zsh and fish that know every command (bash is run for real).

import { execFileSync } from 'node:child_process'
import os from 'node:os'
import { PassThrough } from 'node:stream'
import { expect, test } from 'vitest'
import { buildProgram } from '../../src/cli/program.js'
import { runBuilt } from '../helpers/built-cli.js'
import { cli } from '../helpers/cli.js'

async function commandNames(): Promise<string[]> {
  const sink = new PassThrough()
  const program = await buildProgram(
    { stdout: sink, stderr: sink, env: {}, cwd: os.tmpdir(), stopSignal: new Promise(() => {}) },
    () => {},
  )
  return program.commands.map((c) => c.name())
}

test('every command --help shows the global options and an example', async () => {
  const missing: string[] = []
  for (const name of await commandNames()) {
    const help = await cli([name, '--help'], { cwd: os.tmpdir() })
    const out = help.stdout
    if (!out.includes('Global Options:') || !out.includes('-C, --dir <workspace>'))
      missing.push(`${name}: global options`)
    if (!new RegExp(`Examples:\\n  cms-sync (-C \\S+ )?${name}\\b`).test(out))
      missing.push(`${name}: examples`)
  }
  expect(missing).toEqual([])
})

test('completion bash completes commands and their options in a real bash', async () => {
  const script = (await runBuilt(['completion', 'bash'], { cwd: os.tmpdir() })).stdout
  const complete = (...words: string[]) =>
    execFileSync(
      'bash',
      [
        '-c',
        `${script}\nCOMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _cms_sync; printf '%s\\n' "\${COMPREPLY[@]}"`,
      ],
      { cwd: os.tmpdir() },
    )
      .toString()
      .split('\n')
      .filter(Boolean)
  expect(complete('cms-sync', 're')).toEqual(['resolve', 'restore'])
  expect(complete('cms-sync', '-C', 'site', 'who')).toEqual(['whoami'])
  expect(complete('cms-sync', 'resolve', '--ke')).toEqual(['--keep'])
})

test('completion zsh and fish name every command', async () => {
  const names = await commandNames()
  for (const shell of ['zsh', 'fish']) {
    const result = await cli(['completion', shell], { cwd: os.tmpdir() })
    expect(result.exitCode).toBe(0)
    for (const name of names) expect(result.stdout).toContain(name)
  }
  expect((await cli(['completion', 'zsh'], { cwd: os.tmpdir() })).stdout).toMatch(/^#compdef cms-sync\n/)
  expect((await cli(['completion', 'tcsh'], { cwd: os.tmpdir() })).exitCode).toBe(2)
})
