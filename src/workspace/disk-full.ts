// A full disk (or a full quota) is neither an item's failure nor the server's: every further
// write fails the same way, so the run stops at the first one and says where, as "disk full
// at <path>", never as "could not reach the server", which would send the user to the wrong
// fix. Files are written to a temp file and renamed and the state is saved after them, so a
// stop here leaves no torn file and no base the disk does not hold; the next run, with space
// freed, goes on.

import { CliError, ExitCode } from '../errors/exit-codes.js'
import { findCause } from '../errors/find-cause.js'

const FULL = new Set(['ENOSPC', 'EDQUOT'])

/** A CliError: the command line prints its message, exit 1, with no stack trace. */
export class DiskFullError extends CliError {
  constructor(
    /** The file that could not be written, or undefined when the system did not say. */
    readonly path: string | undefined,
    readonly code: string,
    cause?: unknown,
  ) {
    super(
      `disk full at ${path ?? 'an unnamed file'} (${code}); free some space and run again: ` +
        'every file written so far is whole, and the next run goes on from there',
      ExitCode.failed,
    )
    this.cause = cause
  }
}

/** The error (or one behind it) as a DiskFullError when it says the disk is full, else undefined. */
export function diskFull(error: unknown): DiskFullError | undefined {
  const found = findCause(
    error,
    (e) => e instanceof DiskFullError || FULL.has((e as NodeJS.ErrnoException).code ?? ''),
  )
  if (found === undefined || found instanceof DiskFullError) return found
  const { code, path } = found as NodeJS.ErrnoException
  return new DiskFullError(path, code!, found)
}
