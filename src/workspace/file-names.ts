// Ids are chosen by the server or by people and may hold anything: '/', '..', control
// characters, Windows device names. A file name must be safe on every platform and map
// back to exactly one id, so unsafe characters are percent-encoded (%XX, UTF-8 bytes)
// and '%' itself is always encoded. Plain ids (the usual case) stay unchanged.

const MAX_ENCODED_BYTES = 200 // leaves room for '.json' and temp-file suffixes under 255
const WINDOWS_DEVICE = /^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³])(\..*)?$/i
const UNSAFE_CHAR = /[\u0000-\u001f\u007f/\\:*?"<>|%]/u
/** The same class over a whole id: most ids have no unsafe character at all. */
const ANY_UNSAFE_CHAR = /[\u0000-\u001f\u007f/\\:*?"<>|%]/u

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

/** Trailing dots and spaces vanish on Windows and CON, NUL, COM1... name devices there: encoded. */
function portableOnWindows(name: string): string {
  let out = name
  if (out.endsWith('.') || out.endsWith(' ')) out = out.slice(0, -1) + percent(out.slice(-1))
  return WINDOWS_DEVICE.test(out) ? percent(out[0]!) + out.slice(1) : out
}

export function encodeId(id: string): string {
  if (id.length === 0) throw new UnsafeIdError(id, 'the id is empty')
  let out = id
  if (ANY_UNSAFE_CHAR.test(id)) {
    out = ''
    for (const char of id) out += UNSAFE_CHAR.test(char) ? percent(char) : char
  }
  // A leading dot would make '.', '..' or a hidden file.
  if (out.startsWith('.')) out = `%2E${out.slice(1)}`
  out = portableOnWindows(out)
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

// Media names are encoded with the same %XX scheme, one path part (folder or name) at a time,
// so a workspace committed on Linux checks out on Windows and macOS and every file maps back to
// exactly one server name. Encoded: the characters Windows refuses (`: * ? " < > |`), '%'
// itself, a trailing dot or space (Windows drops them), the first letter of a device name
// (CON, nul.txt), and every non-ASCII character of a name that is not in Unicode NFC (macOS
// and git there treat `café` in NFC and NFD as one name; encoded, the NFD spelling is plain
// ASCII and the two never meet). Unlike ids, a leading dot stays: `.htaccess` is a file on
// every platform, and '.', '..' and names git reads (.gitignore) are refused before encoding.
// Case is not encoded: two names that differ only in case get distinct files by the media
// matcher (the later one takes its id as a suffix), which keeps each name readable.

const MEDIA_NAME_UNSAFE_CHAR = /[:*?"<>|%]/u
const NON_ASCII = /[^\u0000-\u007f]/u

/** A media name (or one folder of its path) as a file name part. Refused names (separators, control characters) are checked by the caller. */
export function encodeMediaName(name: string): string {
  const decomposed = name.normalize('NFC') !== name
  let out = name
  if (decomposed || MEDIA_NAME_UNSAFE_CHAR.test(name)) {
    out = ''
    for (const char of name)
      out += MEDIA_NAME_UNSAFE_CHAR.test(char) || (decomposed && NON_ASCII.test(char)) ? percent(char) : char
  }
  return portableOnWindows(out)
}

/**
 * The media name a file name part stands for. A part that is not the canonical encoding of
 * any name (a file a person named `100%.png`) stands for itself, so nothing is ever lost.
 */
export function decodeMediaName(part: string): string {
  if (!part.includes('%')) return part
  let name: string
  try {
    name = decodeURIComponent(part)
  } catch {
    return part
  }
  return encodeMediaName(name) === part ? name : part
}

/**
 * Names git or cms-sync read as settings, in any folder and any case (macOS and Windows open
 * `.GITIGNORE` for `.gitignore`; `git~1` is the short name Windows gives `.git`). A server media
 * item named so would change what git commits or what cms-sync syncs (a `.gitignore` holding
 * `*` hides every new media file from git), so it is never written: it is reported and left on
 * the server. A local file so named belongs to git or the user, never to media.
 */
const RESERVED_NAMES = new Set([
  '.git',
  '.gitignore',
  '.gitattributes',
  '.gitmodules',
  '.cmsyncignore',
  'git~1',
])

export function isReservedName(name: string): boolean {
  return RESERVED_NAMES.has(name.toLowerCase())
}
