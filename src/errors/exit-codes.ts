// Exit codes of design.md, and the error that carries one: the bottom layer, so every layer
// can stop a run with a code without importing the CLI. Only main.ts turns one into process.exit.

export const ExitCode = {
  ok: 0,
  failed: 1,
  usage: 2,
  conflicts: 3,
  safetyStop: 4,
  locked: 5,
  /** Stopped by Ctrl-C (SIGINT), 128 + 2 as shells report it; the run said what it left. */
  interrupted: 130,
} as const
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode]

/** A problem the user must act on: printed as one message, no stack trace. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode = ExitCode.failed,
    /**
     * Set when the message is this lead followed by the cause's message, so the command line
     * can tell the cause in its own words (where a refused token came from) after the same lead.
     */
    readonly lead?: string,
  ) {
    super(message)
  }
}
