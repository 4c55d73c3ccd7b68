// A JSON array read as it arrives, one item at a time: the bytes are scanned for the array's own
// commas and closing bracket (outside strings, at the array's depth), and each item's bytes are
// parsed alone. So a listing of 100,000 items is never one string nor one parsed array: only the
// item being read is held as text, and the caller decides what of each parsed item to keep.
// JSON.parse checks each item whole, so a body this accepts is a body JSON.parse accepts, and
// nothing else (a brace out of place leaves an item that does not parse).

const QUOTE = 0x22
const BACKSLASH = 0x5c
const OPEN_BRACKET = 0x5b
const CLOSE_BRACKET = 0x5d
const OPEN_BRACE = 0x7b
const CLOSE_BRACE = 0x7d
const COMMA = 0x2c

/** Where `byte` next is in `chunk` from `from` on; chunk.length when it is not. */
function indexOr(chunk: Buffer, byte: number, from: number): number {
  const at = chunk.indexOf(byte, from)
  return at === -1 ? chunk.length : at
}

function isSpace(byte: number): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09
}

/**
 * Feeds a body's chunks in (`push`), then `end`: each item is handed to `onItem` once parsed, in
 * order. `valid` is false once the body is not one JSON array (then no further item is handed
 * on); after `end` it says whether the whole body was one.
 */
export class ArrayItems {
  private where: 'before' | 'items' | 'after' = 'before'
  /** Nesting inside the current item (0: between the array's own items). */
  private depth = 0
  private inString = false
  private escaped = false
  /** The current item's bytes from earlier chunks. */
  private pieces: Buffer[] = []
  private count = 0
  /** A comma was the last separator: an item must follow it. */
  private afterComma = false
  valid = true

  constructor(private readonly onItem: (item: unknown, index: number) => void) {}

  push(chunk: Buffer): void {
    if (!this.valid) return
    let start = 0
    // The next backslash at or after i (chunk.length: none), found once per stretch of strings.
    let backslash = -1
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i]!
      if (this.where === 'items') {
        if (this.inString) {
          if (this.escaped) {
            this.escaped = false
            continue
          }
          // Most of a listing is inside strings: jump to the quote that ends this one.
          if (backslash < i) backslash = indexOr(chunk, BACKSLASH, i)
          const quote = indexOr(chunk, QUOTE, i)
          if (backslash < quote) {
            i = backslash
            this.escaped = true
          } else {
            i = quote
            if (quote < chunk.length) this.inString = false
          }
          continue
        }
        if (byte === QUOTE) this.inString = true
        else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) this.depth++
        else if (byte === CLOSE_BRACE || (byte === CLOSE_BRACKET && this.depth > 0)) {
          if (--this.depth < 0) {
            this.fail()
            return
          }
        } else if (this.depth === 0 && (byte === COMMA || byte === CLOSE_BRACKET)) {
          if (!this.item(chunk.subarray(start, i), byte === CLOSE_BRACKET)) return
          start = i + 1
          if (byte === CLOSE_BRACKET) this.where = 'after'
        }
        continue
      }
      if (isSpace(byte)) continue
      if (this.where === 'after' || byte !== OPEN_BRACKET) {
        this.fail()
        return
      }
      this.where = 'items'
      start = i + 1
    }
    if (this.where === 'items' && start < chunk.length) this.pieces.push(chunk.subarray(start))
  }

  /** Whether the body was one whole JSON array. */
  end(): boolean {
    if (this.where !== 'after') this.fail()
    return this.valid
  }

  /** One item's bytes, up to its separator; false when they are not one JSON value. */
  private item(tail: Buffer, last: boolean): boolean {
    const bytes = this.pieces.length === 0 ? tail : Buffer.concat([...this.pieces, tail])
    this.pieces = []
    const text = bytes.toString('utf8')
    if (text.trim() === '') {
      // `[]` and `[ ]` hold no item; `[,` and `[1,]` are not JSON.
      if (last && this.count === 0 && !this.afterComma) return true
      this.fail()
      return false
    }
    let item: unknown
    try {
      item = JSON.parse(text)
    } catch {
      this.fail()
      return false
    }
    this.afterComma = !last
    this.onItem(item, this.count++)
    return true
  }

  private fail(): void {
    this.valid = false
    this.pieces = []
  }
}
