// `cms-sync doctor [--self-test] [--json]`: checks the server, the token, the permissions, the
// target, the project's sync settings, the clock and the workspace, one line each with a hint
// when it fails. Exit 0 when every check passes, 1 otherwise. --self-test also runs the
// server's own test (`POST /api/test`, admin) and shows its log.

import type { Command } from 'commander'
import type { HeldChange } from '../../engine/held.js'
import { ExitCode } from '../../errors/exit-codes.js'
import { printable } from '../../util/printable.js'
import { pc } from '../colors.js'
import { connect, globalOptions, openWorkspace, printJson } from '../context.js'
import type { Check } from '../doctor-checks.js'
import type { CliIo } from '../io.js'

interface SelfTest {
  ok: boolean
  log: string
}

/**
 * What watch holds (held-now.ts), as a check: the same plan and guards as `status`.
 */
async function heldCheck(io: CliIo, cmd: Command): Promise<{ check: Check; held: HeldChange[] } | undefined> {
  const [{ withEngine }, { planRun }, { heldNow }, { readPause }, { describeHeld, describeHeldCommands }] =
    await Promise.all([
      import('../engine-session.js'),
      import('../../engine/plan-and-apply.js'),
      import('../held-now.js'),
      import('../../watch/mass-change.js'),
      import('../../engine/held.js'),
    ])
  try {
    return await withEngine(io, cmd, [], { lock: false }, async ({ deps, ws }) => {
      const planned = await planRun(deps, {})
      await planned.media?.dispose()
      const held = await heldNow(deps, planned, await readPause(ws.root))
      const check: Check =
        held.length === 0
          ? { name: 'held', ok: true, detail: 'nothing held' }
          : {
              name: 'held',
              ok: false,
              detail: held.map(describeHeld).join('; '),
              hint: held.map(describeHeldCommands).join('; '),
            }
      return { check, held }
    })
  } catch (error) {
    const detail = `could not plan the workspace to see what is held: ${(error as Error).message}`
    return { check: { name: 'held', ok: false, detail, hint: 'see `cms-sync status`' }, held: [] }
  }
}

async function runChecks(
  io: CliIo,
  cmd: Command,
  selfTest: boolean,
): Promise<{ checks: Check[]; selfTest?: SelfTest; held?: HeldChange[] }> {
  const checks = await import('../doctor-checks.js')
  const ws = await openWorkspace(io, cmd)
  const results: Check[] = []
  let client: Awaited<ReturnType<typeof connect>>
  try {
    client = await connect(io, ws)
  } catch (error) {
    results.push({
      name: 'server',
      ok: false,
      detail: `${ws.config.server}: ${(error as Error).message}`,
      hint: 'check server: in cms-sync.yaml and that the server is running; the other server checks were skipped',
    })
    return { checks: [...results, ...(await checks.workspaceChecks(ws))] }
  }
  try {
    results.push({
      name: 'server',
      ok: true,
      detail: `${ws.config.server} answers; it speaks the ${client.dialect} dialect`,
    })
    const token = await checks.tokenCheck(client)
    results.push(token.check)
    results.push(await checks.targetCheck(client))
    if (token.known) results.push(await checks.permissionCheck(client, token.admin))
    results.push(...(await checks.syncSettingsCheck(client, ws)))
    results.push(await checks.clockCheck(client))
    results.push(...(await checks.workspaceChecks(ws)))
    const held = token.known ? await heldCheck(io, cmd) : undefined
    if (held) results.push(held.check)
    const heldList = held?.held.length ? { held: held.held } : {}
    if (!selfTest) return { checks: results, ...heldList }
    const res = await client.request('POST', '/api/test', { responseType: 'text' })
    const log = String(res.body ?? '').trim()
    const ok = res.status === 200 && !/\bFAILED\b|Self-test failed|need to be admin/i.test(log)
    results.push({
      name: 'self-test',
      ok,
      detail: ok ? 'the server passed its own test' : `the server's own test failed (${res.status})`,
      ...(ok ? {} : { hint: token.admin ? 'see the log below' : 'the self-test needs an admin token' }),
    })
    return { checks: results, selfTest: { ok, log }, ...heldList }
  } finally {
    await client.close()
  }
}

export function register(program: Command, io: CliIo, setExit: (code: number) => void): void {
  program
    .command('doctor')
    .description('Check the server, token, permissions, sync settings, clock and workspace')
    .option('--self-test', "also run the server's own self-test (POST /api/test, admin)")
    .action(async (opts: { selfTest?: boolean }, cmd: Command) => {
      const globals = globalOptions(cmd)
      const result = await runChecks(io, cmd, !!opts.selfTest)
      const ok = result.checks.every((c) => c.ok)
      if (!ok) setExit(ExitCode.failed)
      if (globals.json) {
        printJson(io, { ok, ...result })
        return
      }
      if (globals.quiet && ok) return
      for (const check of result.checks) {
        const mark = check.ok ? pc.green('✓') : pc.red('✗')
        io.stdout.write(`${mark} ${check.name.padEnd(16)} ${printable(check.detail)}\n`)
        if (check.hint) io.stdout.write(`  ${' '.repeat(16)} ${pc.dim(`→ ${printable(check.hint)}`)}\n`)
      }
      if (result.selfTest) io.stdout.write(`\nself-test log:\n${result.selfTest.log.replace(/^/gm, '  ')}\n`)
      io.stdout.write(
        ok ? 'all checks passed\n' : `${result.checks.filter((c) => !c.ok).length} check(s) failed\n`,
      )
    })
}
