// The command line as the log records it: every word, but no secret. No option of ours takes a
// secret as its value (a token comes from CMS_SYNC_TOKEN or the credentials file, a password
// from a prompt or stdin), except the emulator's `--user NAME:PASSWORD`; a secret can still be
// typed where none belongs: a URL with a password, an option someone names --token.

import { SECRET_KEYS } from './secret-keys.js'

const REDACTED = '[redacted]'
/** An option whose name says its value is a secret (not the --password-stdin flag). */
const SECRET_OPTION = new RegExp(`^--?[\\w-]*(${SECRET_KEYS.join('|')}|api-key|credential)[\\w-]*$`, 'i')
const PASSWORD_PAIR = new Set(['--user'])

/** `https://ann:secret@host` -> `https://ann:[redacted]@host`, anywhere in a word. */
function withoutUrlPassword(word: string): string {
  return word.replace(/(\b[a-z][a-z0-9+.-]*:\/\/[^/\s:@]*:)[^/\s@]*@/gi, `$1${REDACTED}@`)
}

/** An option whose value is a secret (`--token`, `--api-key`), not one that says where to read it. */
const isSecretOption = (option: string) => SECRET_OPTION.test(option) && !/-stdin$/i.test(option)

function loggedValue(option: string, value: string): string {
  if (isSecretOption(option)) return REDACTED
  if (PASSWORD_PAIR.has(option)) return value.replace(/:.*$/s, `:${REDACTED}`)
  return withoutUrlPassword(value)
}

export function commandLineForLog(argv: readonly string[]): string[] {
  const out: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i]!
    const joined = /^(--?[^=\s]+)=(.*)$/s.exec(word)
    if (joined) {
      out.push(`${joined[1]}=${loggedValue(joined[1]!, joined[2]!)}`)
      continue
    }
    out.push(withoutUrlPassword(word))
    const takesSecret = isSecretOption(word) || PASSWORD_PAIR.has(word)
    if (takesSecret && i + 1 < argv.length) out.push(loggedValue(word, argv[++i]!))
  }
  return out
}

/** The words as one line a shell would read back (words with spaces or quotes quoted). */
export function shellLine(words: readonly string[]): string {
  return words.map((w) => (/^[\w@%+=:,./#^-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`)).join(' ')
}
