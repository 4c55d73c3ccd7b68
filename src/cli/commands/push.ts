// `cms-sync push [paths...]`: Apply local changes remotely; never overwrites a remote change made since the last sync.

import type { Command } from 'commander'
import type { CliIo } from '../io.js'
import { registerSyncCommand } from '../sync-command.js'

export function register(program: Command, io: CliIo, setExit: (code: number) => void): void {
  registerSyncCommand(program, io, setExit, {
    name: 'push',
    summary: 'Apply local changes remotely; never overwrites a remote change made since the last sync',
  })
}
