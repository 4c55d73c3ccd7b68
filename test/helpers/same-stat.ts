// A file changed so that its stat (size, mtime to the nanosecond, inode) stays what it was: the
// stat cache then vouches for the old bytes, so what a run says about the file shows whether it
// read it. A run that reads it sees the new bytes; one that trusts the stat does not.

import { execFileSync } from 'node:child_process'
import { readFile, stat, writeFile } from 'node:fs/promises'

/** Replaces `from` with `to` (same length) in place, then puts the mtime back exactly. */
export async function editKeepingStat(file: string, from: string, to: string): Promise<void> {
  if (Buffer.byteLength(from) !== Buffer.byteLength(to)) throw new Error('the edit must keep the size')
  const before = await stat(file, { bigint: true })
  const text = await readFile(file, 'utf8')
  if (!text.includes(from)) throw new Error(`${file} does not hold ${JSON.stringify(from)}`)
  await writeFile(file, text.replace(from, to)) // truncates and rewrites: the same inode
  // utimes takes seconds as a double, which loses the nanoseconds; touch takes them exactly.
  const ns = before.mtimeNs
  const when = `@${ns / 1_000_000_000n}.${String(ns % 1_000_000_000n).padStart(9, '0')}`
  execFileSync('touch', ['-m', '-d', when, file])
  const after = await stat(file, { bigint: true })
  if (after.mtimeNs !== ns || after.ino !== before.ino || after.size !== before.size)
    throw new Error(`${file}: could not keep its stat`)
}
