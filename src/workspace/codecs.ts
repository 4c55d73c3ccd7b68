// The kinds this version mirrors. Media, forms and connections get their codecs in a later
// issue; until then their folders are left alone.

import type { Codec } from './codec.js'
import { contentCodec } from './content-codec.js'
import type { Kind } from './kinds.js'
import { schemaCodec } from './schema-codec.js'

/** In write order: schemas before the content that uses them. */
export const CODECS: readonly Codec[] = [schemaCodec, contentCodec]

export function codecFor(kind: Kind): Codec | undefined {
  return CODECS.find((codec) => codec.kind === kind)
}
