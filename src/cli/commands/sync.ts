// `cms-sync sync [paths...]`: Pull and push in one reconciled plan.

import type { Command } from 'commander'
import type { CliIo } from '../io.js'
import { registerSyncCommand } from '../sync-command.js'

export function register(program: Command, io: CliIo, setExit: (code: number) => void): void {
  registerSyncCommand(program, io, setExit, {
    name: 'sync',
    summary: 'Pull and push in one reconciled plan',
  })
}
