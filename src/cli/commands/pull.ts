// `cms-sync pull [paths...]`: Apply remote changes locally; never overwrites an unsynced local edit.

import type { Command } from 'commander'
import type { CliIo } from '../io.js'
import { registerSyncCommand } from '../sync-command.js'

export function register(program: Command, io: CliIo, setExit: (code: number) => void): void {
  registerSyncCommand(program, io, setExit, {
    name: 'pull',
    summary: 'Apply remote changes locally; never overwrites an unsynced local edit',
  })
}
