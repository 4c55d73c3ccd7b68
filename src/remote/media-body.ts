// Upload bodies streamed from the file, never held whole in memory: the spec dialect's JSON
// `{filename, base64}` (the base64 text made chunk by chunk, each chunk a multiple of 3 bytes
// so the pieces join into one valid encoding) and upstream's multipart field `media`. Each is
// a factory, so a retry reads the file again from the start.

import { randomBytes } from 'node:crypto'
import { createReadStream } from 'node:fs'

/** Reads a file in chunks whose length is a multiple of 3 (the last one excepted). */
async function* threeAligned(file: string): AsyncIterable<Buffer> {
  let carry: Buffer = Buffer.alloc(0)
  for await (const chunk of createReadStream(file, { highWaterMark: 3 * 64 * 1024 })) {
    const all = carry.length > 0 ? Buffer.concat([carry, chunk as Buffer]) : (chunk as Buffer)
    const cut = all.length - (all.length % 3)
    if (cut > 0) yield all.subarray(0, cut)
    carry = all.subarray(cut)
  }
  if (carry.length > 0) yield carry
}

export interface StreamedBody {
  stream: () => AsyncIterable<Uint8Array>
  contentType: string
  contentLength: number
}

/** Length of the base64 text of `size` bytes. */
export function base64Length(size: number): number {
  return 4 * Math.ceil(size / 3)
}

export function jsonBase64Body(file: string, size: number, filename: string): StreamedBody {
  const head = Buffer.from(`{"filename":${JSON.stringify(filename)},"base64":"`)
  const tail = Buffer.from('"}')
  return {
    contentType: 'application/json',
    contentLength: head.length + base64Length(size) + tail.length,
    async *stream() {
      yield head
      for await (const chunk of threeAligned(file)) yield Buffer.from(chunk.toString('base64'))
      yield tail
    },
  }
}

/** A quoted multipart parameter: quotes and line breaks percent-encoded (as browsers do). */
function quoted(value: string): string {
  return `"${value.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A')}"`
}

export function multipartBody(file: string, size: number, filename: string): StreamedBody {
  const boundary = `----cms-sync-${randomBytes(12).toString('hex')}`
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="media"; filename=${quoted(filename)}\r\n` +
      'Content-Type: application/octet-stream\r\n\r\n',
  )
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`)
  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    contentLength: head.length + size + tail.length,
    async *stream() {
      yield head
      for await (const chunk of createReadStream(file)) yield chunk as Buffer
      yield tail
    },
  }
}
