// The folder watch started in. Checked before every run and batch: once it is gone, watch stops
// and nothing more is written at its path (a run would recreate it with a pull's files).

import { type Stats, statSync } from 'node:fs'

export interface WorkspaceHome {
  /** False (and said once, through onGone) once the folder is no longer the one watch started in. */
  stillThere(): boolean
  /** Why watch stopped, once the folder is gone. */
  readonly gone: string | undefined
  /** Resolves once the folder is found gone: the daemon stops as on a stop signal. */
  readonly left: Promise<'gone'>
}

/**
 * Whether the workspace folder is still the one watch started in: a folder moved away (or
 * deleted, or replaced by another of the same name) must not be written to, not even its state.
 */
function sameFolder(root: string, home: Stats): boolean {
  try {
    const now = statSync(root, { throwIfNoEntry: false })
    return now?.isDirectory() === true && now.ino === home.ino && now.dev === home.dev
  } catch {
    return false
  }
}

export function watchHome(root: string, onGone: (message: string) => void): WorkspaceHome {
  const home = statSync(root)
  let gone: string | undefined
  let leave: () => void = () => {}
  const left = new Promise<'gone'>((resolve) => {
    leave = () => resolve('gone')
  })
  return {
    stillThere() {
      if (gone === undefined && !sameFolder(root, home)) {
        gone = `the workspace ${root} was moved away or deleted: watch stopped, and writes nothing there (start it again where the workspace is now)`
        onGone(gone)
        leave()
      }
      return gone === undefined
    },
    get gone() {
      return gone
    },
    left,
  }
}
