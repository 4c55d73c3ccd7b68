// Colours for terminal output, decided once: on for a terminal, off for pipes and files,
// NO_COLOR (https://no-color.org) turns them off, FORCE_COLOR on. picocolors' own default also
// turns them on whenever CI is set, which put escape codes into piped output and CI logs.

import picocolors from 'picocolors'

function colorsWanted(env: NodeJS.ProcessEnv, isTerminal: boolean): boolean {
  if ('FORCE_COLOR' in env) return env.FORCE_COLOR !== '0'
  if ('NO_COLOR' in env) return false
  return isTerminal && env.TERM !== 'dumb'
}

export const pc = picocolors.createColors(colorsWanted(process.env, process.stdout.isTTY === true))

/** Colours for another stream (stderr, for -v): on for a terminal, unless NO_COLOR. */
export function colorsFor(
  env: NodeJS.ProcessEnv,
  isTerminal: boolean,
): ReturnType<typeof picocolors.createColors> {
  return picocolors.createColors(colorsWanted(env, isTerminal))
}
