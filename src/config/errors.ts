// Kept apart from config.ts (which loads zod and yaml) so that commands can name the error
// without paying for the validator at start-up.

import { CliError, ExitCode } from '../errors/exit-codes.js'

/** A problem with cms-sync.yaml or another settings file: a usage error (exit 2). */
export class ConfigError extends CliError {
  override readonly name = 'ConfigError'
  constructor(message: string) {
    super(message, ExitCode.usage)
  }
}
