// Ids are chosen by the server or by people and may hold anything: '/', '..', control
// characters, Windows device names. A file name must be safe on every platform and map
// back to exactly one id, so unsafe characters are percent-encoded (%XX, UTF-8 bytes)
// and '%' itself is always encoded. Plain ids (the usual case) stay unchanged.

const MAX_ENCODED_BYTES = 200 // leaves room for '.json' and temp-file suffixes under 255
const WINDOWS_DEVICE = /^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³])(\..*)?$/i
const UNSAFE_CHAR = /[\u0000-\u001f\u007f/\\:*?"<>|%]/u
/** The same class over a whole id: most ids have no unsafe character at all. */
const ANY_UNSAFE_CHAR = /[\u0000-\u001f\u007f/\\:*?"<>|%]/u

/** CON, nul.txt, COM1.png...: names Windows reserves for devices, whatever the extension. */
export function isWindowsDeviceName(name: string): boolean {
  return WINDOWS_DEVICE.test(name)
}

export class UnsafeIdError extends Error {
  constructor(
    readonly id: string,
    reason: string,
  ) {
    super(`id ${JSON.stringify(id)} cannot be stored as a file: ${reason}`)
  }
}

function percent(char: string): string {
  return [...Buffer.from(char, 'utf8')]
    .map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`)
    .join('')
}

export function encodeId(id: string): string {
  if (id.length === 0) throw new UnsafeIdError(id, 'the id is empty')
  let out = id
  if (ANY_UNSAFE_CHAR.test(id)) {
    out = ''
    for (const char of id) out += UNSAFE_CHAR.test(char) ? percent(char) : char
  }
  // A leading dot would make '.', '..' or a hidden file; trailing dots and spaces vanish on Windows.
  if (out.startsWith('.')) out = `%2E${out.slice(1)}`
  if (out.endsWith('.') || out.endsWith(' ')) out = out.slice(0, -1) + percent(out.slice(-1))
  if (WINDOWS_DEVICE.test(out)) out = percent(out[0]!) + out.slice(1)
  if (Buffer.byteLength(out) > MAX_ENCODED_BYTES) {
    throw new UnsafeIdError(id, `it encodes to more than ${MAX_ENCODED_BYTES} bytes`)
  }
  return out
}

/** The id a file name stands for, or undefined when the name is not one encodeId could produce. */
export function decodeId(fileStem: string): string | undefined {
  let id: string
  try {
    id = decodeURIComponent(fileStem)
  } catch {
    return undefined
  }
  if (id.length === 0) return undefined
  try {
    // Only the canonical spelling maps back, so two files can never claim one id.
    return encodeId(id) === fileStem ? id : undefined
  } catch {
    return undefined
  }
}
