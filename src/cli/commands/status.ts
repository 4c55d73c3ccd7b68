// `cms-sync status [paths...]`: drift both ways, from the one plan (status-model.ts), shown and
// mapped to an exit code as the other commands' runs are (run-report.ts). It takes no lock, so
// it runs beside `watch`, and saves nothing: no state, no lock file, no journal, no workspace
// file (test/cli/status-read-only.test.ts). Its listings are asked with the validators the last
// locked run recorded in the state (engine/remote-snapshot.ts): over an unchanged server, one 304
// per kind with nothing downloaded or parsed. It writes only what any read of the server may:
// - the base blob of a push a killed run landed but never recorded, when that blob is missing
//   (.cms-sync/bases/, keyed by its hash), as its plan merges against it; the state that would
//   name it is not saved, so the next locked run adopts it again (engine/landed-pushes.ts);
// - its lines in the workspace log (.cms-sync/logs/), as every command.
// `--checksum` downloads the media bytes it compares into a folder of its own under
// .cms-sync/tmp/, removed before it ends.
// An unchanged workspace costs the listing requests, a read of the state's records and a stat per
// file, and no plan (engine/unchanged-run.ts).

import type { Command } from 'commander'
import { globalOptions } from '../context.js'
import { withEngine } from '../engine-session.js'
import type { CliIo } from '../io.js'
import { PENDING_EXIT, printStatus, statusExitCode } from '../run-report.js'

export function register(program: Command, io: CliIo, setExit: (code: number) => void): void {
  program
    .command('status')
    .description('Show what changed locally and on the server since the last sync')
    .argument('[paths...]', 'only these files or folders')
    .option('--exit-code', `also exit ${PENDING_EXIT} when anything is to sync (for CI gates)`)
    .option(
      '--anonymous',
      "read without any token (a pull request's CI check, on a server that allows anonymous reads); whether a token may push is then not checked",
    )
    .option(
      '--checksum',
      "read the server's media bytes the listing cannot vouch for (upstream has no media dates) and compare them",
    )
    .action(
      async (
        paths: string[],
        opts: { exitCode?: boolean; anonymous?: boolean; checksum?: boolean },
        cmd: Command,
      ) => {
        const model = import('../status-model.js')
        const checksum = opts.checksum === true
        await withEngine(io, cmd, paths, { lock: false, checksum }, async (session) => {
          const read = await (await model).readStatus(session, { anonymous: opts.anonymous === true })
          setExit(statusExitCode(read, { exitCode: opts.exitCode === true }))
          printStatus(io, globalOptions(cmd), session.deps.target, read)
        })
      },
    )
}
