// The kinds a workspace mirrors as JSON files, one codec each. Media is not a JSON kind: its
// bytes and media.yaml are synced by src/engine/media/ (see docs/media.md).

import type { Codec } from './codec.js'
import { createConnectionCodec } from './connection-codec.js'
import { contentCodec } from './content-codec.js'
import { formCodec } from './form-codec.js'
import { schemaCodec } from './schema-codec.js'

/**
 * In write order: schemas before the content that uses them; connections before content,
 * whose publishing settings name a connection.
 */
export function createCodecs(opts: { root?: string; env: NodeJS.ProcessEnv }): readonly Codec[] {
  return [schemaCodec, createConnectionCodec(opts), formCodec, contentCodec]
}

/** The codecs without a workspace: connections get default reference names, env from process.env. */
export const CODECS: readonly Codec[] = createCodecs({ env: process.env })
