// `cms-sync ui` run in process for the page tests: started, its address read from the line it
// prints, and stopped by the cleanup the caller registers.

import { PassThrough } from 'node:stream'
import { run } from '../../src/cli/program.js'
import type { World } from '../helpers/sync-world.js'

/** `cms-sync ui` in process; its address from the line it prints. `onCleanup` gets its stop. */
export function uiInProcess(w: World, onCleanup: (stop: () => Promise<unknown>) => void): Promise<string> {
  const stdout = new PassThrough()
  let out = ''
  let stop: () => void = () => {}
  const stopSignal = new Promise<void>((resolve) => {
    stop = resolve
  })
  const exit = run(['-C', w.root, 'ui'], {
    stdout,
    stderr: new PassThrough(),
    env: w.env,
    cwd: w.root,
    stopSignal,
  })
  onCleanup(() => {
    stop()
    return exit
  })
  return new Promise((resolve, reject) => {
    stdout.on('data', (c) => {
      out += String(c)
      const m = /the page: (\S+)/.exec(out)
      if (m) resolve(m[1]!)
    })
    void exit.then((code) => reject(new Error(`cms-sync ui exited with ${code}: ${out}`)))
  })
}
