// Writing one workspace file atomically (temp file in the same folder, fsync, rename), as
// write-file-atomic does, for the hot path of a large pull. write-file-atomic resolves links
// with the JavaScript fs.realpath (one lstat per path segment on the main thread) and always
// unlinks its temp file after the rename: 3.6 s of main-thread lstat in a 10,000-file pull.
// Here the native realpath does it in one call, and the temp name keeps write-file-atomic's
// `<name>.<number>` form, which the ignore rules already skip (ignore-rules.ts).

import { chmod, type FileHandle, open, realpath, rename, rm, stat } from 'node:fs/promises'

let counter = 0

/** A ten-digit number no other write of this process uses. */
function tempSuffix(): number {
  counter = (counter + 1) % 1_000_000_000
  return 1_000_000_000 + ((process.pid * 7919 + counter) % 1_000_000_000)
}

export async function writeFileAtomically(file: string, text: string): Promise<void> {
  // Through a link, the file it points at is replaced and the link kept, as editors do.
  const target = await realpath(file).catch(() => file)
  // A replaced file keeps its permissions.
  const mode = (await stat(target).catch(() => undefined))?.mode
  let temp = ''
  let handle: FileHandle | undefined
  try {
    for (;;) {
      temp = `${target}.${tempSuffix()}`
      try {
        handle = await open(temp, 'wx', mode ?? 0o666)
        break
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      }
    }
    await handle.writeFile(text)
    await handle.sync()
    await handle.close()
    handle = undefined
    // open() applies the umask; an existing file's mode is copied as it was.
    if (mode !== undefined) await chmod(temp, mode)
    await rename(temp, target)
  } catch (error) {
    await handle?.close().catch(() => {})
    if (temp) await rm(temp, { force: true })
    throw error
  }
}
