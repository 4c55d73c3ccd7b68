// Media bytes on the page: only raster formats that cannot carry script are shown as images,
// recognised by their first bytes (never by the name or a type the server claimed). Everything
// else, SVG included, is offered as a download, served as bytes with no type the browser would run.

import { open } from 'node:fs/promises'

/** By the name, for the page's layout only: whether to try an <img> at all. */
export function mediaKind(path: string): 'image' | 'file' {
  return /\.(png|jpe?g|gif|webp|avif|bmp|ico)$/i.test(path) ? 'image' : 'file'
}

const SIGNATURES: Array<{ type: string; test: (b: Buffer) => boolean }> = [
  {
    type: 'image/png',
    test: (b) => b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])),
  },
  { type: 'image/jpeg', test: (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff },
  { type: 'image/gif', test: (b) => b.subarray(0, 4).toString('latin1') === 'GIF8' },
  {
    type: 'image/webp',
    test: (b) =>
      b.subarray(0, 4).toString('latin1') === 'RIFF' && b.subarray(8, 12).toString('latin1') === 'WEBP',
  },
  {
    type: 'image/avif',
    test: (b) =>
      b.subarray(4, 8).toString('latin1') === 'ftyp' && /avi[fs]/.test(b.subarray(8, 12).toString('latin1')),
  },
  { type: 'image/bmp', test: (b) => b.subarray(0, 2).toString('latin1') === 'BM' },
]

/** The raster type the bytes start with, or undefined (then they are served as a download). */
export function sniffImage(head: Buffer): string | undefined {
  return SIGNATURES.find((s) => s.test(head))?.type
}

/** The first bytes of a file, for sniffImage. */
export async function headOf(file: string): Promise<Buffer> {
  const handle = await open(file, 'r')
  try {
    const buffer = Buffer.alloc(16)
    const { bytesRead } = await handle.read(buffer, 0, 16, 0)
    return buffer.subarray(0, bytesRead)
  } finally {
    await handle.close()
  }
}
