// Carrying out a publish or unpublish entry (publish-plan.ts): `POST P/content/publish|unpublish`
// with the whole item. On the server that request deploys the body it is given and then writes
// it again, schedule dates included, so the body is the item exactly as the run left it: the
// write this run made (with the dates the file holds, which came from a read by id; a listing
// shows them as null and sending that would cancel the schedule), or else the server's copy
// read by id. The server's answer is the new base. A failure is this entry's alone: the content
// write stands, and the state still owes the deployment (ItemState.deploy), so the next run
// tries again.

import { RemoteError } from '../remote/errors.js'
import { type Codec, fileBytes, type JsonObject } from '../workspace/codec.js'
import { sameStat, statLocalFile } from '../workspace/local-file.js'
import { type ApplyContext, commit, type ItemResult } from './apply-item.js'
import type { PlanItem } from './plan.js'

export async function publishItem(
  ctx: ApplyContext,
  item: PlanItem,
  codec: Codec,
  /** The item as this run's write left it on the server, if the run wrote it. */
  written: JsonObject | undefined,
): Promise<ItemResult | undefined> {
  const verb = item.action === 'unpublish' ? 'unpublish' : 'publish'
  let body = written
  if (!body) {
    const current = await ctx.client.get(item.kind, item.id)
    // Gone already: nothing is deployed through a record the server no longer has.
    if (!current) return undefined
    if (codec.revisionOf(current) !== ctx.remote.get(item.path)?.rev)
      return {
        status: 'failed',
        code: 'changed',
        error: `not ${verb}ed: the server copy changed since it was listed; the next run ${verb}es it`,
      }
    body = current
  }
  if (!ctx.client.publish) return { status: 'failed', error: `this server client cannot ${verb}` }
  let answer: JsonObject
  try {
    answer = await ctx.client.publish(verb, body)
  } catch (error) {
    if (!(error instanceof RemoteError) || error.code === 'unauthorized') throw error
    return { status: 'failed', code: error.code, error: failureMessage(item, verb, error) }
  }
  // Before a remote delete: the delete that follows forgets the item.
  if (!ctx.local.has(item.path)) return { status: 'applied' }
  await adoptAnswer(ctx, item, codec, answer, codec.toFile(body))
  return { status: 'applied' }
}

/** Names the item, the connection it went through, and the server's own words. */
function failureMessage(item: PlanItem, verb: string, error: RemoteError): string {
  const route = item.publishing
  const through =
    route?.connection == null
      ? 'no connection named (settings.publishing.connectionId)'
      : `connection "${route.connection}"${route.governedBy ? ` (governed by parent "${route.governedBy}")` : ''}`
  const words = withoutUrlPasswords(error.serverMessage ?? error.message)
  return `${verb} of ${item.path} through ${through} failed: ${words}; the content write stands, and the next run tries the ${verb} again`
}

/**
 * A deployer's error may quote the address it used with its credentials in it (the server's git
 * deployer answers `git clone 'https://user:password@host/repo.git' ... exited with code 128`):
 * the password never reaches the output or the logs.
 */
export function withoutUrlPasswords(text: string): string {
  return text.replace(/\b([a-z][a-z0-9+.-]*:\/\/[^\s/:@'"]*):[^\s/@'"]*@/gi, '$1:***@')
}

/**
 * The answer is the server's copy now: it becomes the base. It equals the file but for what the
 * server normalised; a file untouched since this run's write takes that too, an edited file
 * keeps its edit, which then shows as a local change.
 */
async function adoptAnswer(
  ctx: ApplyContext,
  item: PlanItem,
  codec: Codec,
  answer: JsonObject,
  sent: JsonObject,
): Promise<void> {
  const bytes = fileBytes(codec.fromWriteAnswer(answer, sent))
  const known = ctx.store.get(item.path)
  if (known && bytes.hash === known.baseHash) {
    await commit(ctx, item, bytes, answer, codec, known.stat ? { read: known.stat } : 'none')
    return
  }
  const now = await statLocalFile(ctx.root, item.path)
  if (known?.stat && now && sameStat(known.stat, now)) {
    const written = await ctx.writer.write(item.path, bytes.text, bytes.hash)
    await commit(ctx, item, bytes, answer, codec, { written })
  } else {
    await commit(ctx, item, bytes, answer, codec, 'none')
  }
}
