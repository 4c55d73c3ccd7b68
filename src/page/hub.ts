// The page's live state in the process: the last status read, the activity feed, and the
// browsers listening (server-sent events). A watch event goes to the feed at once and asks for a
// fresh status read; reads never overlap, and events that come during one ask for one more read
// after it, not one each. Every change is pushed to every open page: nothing is polled by it.
// With no page open nothing is read (a status read costs the listings): the state is marked
// stale, and the next page to open gets it read first.

import type { ServerResponse } from 'node:http'
import { describeHeld } from '../engine/held.js'
import { describeReverted } from '../engine/own-pushes.js'
import type { DaemonState } from '../watch/daemon.js'
import type { WatchEvent } from '../watch/watch-events.js'
import type { FeedEntry, PageState, StatusInput } from './model.js'
import { pageState } from './view.js'

/** Feed entries kept for a page opened later. */
const FEED_SIZE = 200
/** The SSE comment that keeps a quiet connection open through proxies and sleep. */
const KEEPALIVE_MS = 25_000

export interface HubSource {
  mode: 'watch' | 'ui'
  target: PageState['target']
  tokenSource: string
  rateLimit(): PageState['rateLimit']
  readStatus(): Promise<StatusInput>
  daemon(): DaemonState | undefined
}

/** Events that cannot change what status says; any other one (a new kind too) asks for a read. */
const LEAVES_STATUS = new Set(['ready', 'page', 'warning', 'polled'])

function feedEntry(e: WatchEvent, time: string): FeedEntry | undefined {
  switch (e.event) {
    case 'pushed':
    case 'pulled':
      return { time, event: e.event, path: e.path, action: e.action }
    case 'merged':
      return { time, event: e.event, path: e.path }
    case 'conflict':
      return { time, event: e.event, path: e.path, ...(e.reason ? { message: e.reason } : {}) }
    case 'failed':
      return { time, event: e.event, path: e.path, action: e.action, message: e.error }
    case 'paused':
      return {
        time,
        event: e.event,
        message: `${e.count} files ${e.reason === 'mass-delete' ? 'deleted' : 'changed'} at once`,
      }
    case 'reverted':
      return {
        time,
        event: e.event,
        path: e.path,
        message: `${describeReverted(e.leaves)}; ours is kept in ${e.trash ?? '.cms-sync/trash/'}, \`cms-sync push --again ${e.path}\` sends it again`,
      }
    case 'verified':
      // Bytes found as they were are the quiet case, as on the terminal: a line a minute would
      // drown the feed (the status read the event asks for still updates the counts).
      return e.same
        ? undefined
        : {
            time,
            event: e.event,
            path: e.path,
            message:
              'the server holds other bytes than at the last sync (replaced in the CMS?): reading them',
          }
    case 'held':
      // What is held, with its paths, as the terminal line says it; an empty list: nothing is.
      return {
        time,
        event: e.event,
        message: e.held.length
          ? e.held.map((h) => describeHeld(h).replace(/^held: /, '')).join('; ')
          : 'nothing is held any more',
      }
    case 'offline':
      return { time, event: e.event, message: e.error }
    case 'error':
    case 'warning':
      return { time, event: e.event, message: e.message }
    case 'online':
    case 'token-renewed':
    case 'reconciled':
    case 'stopped':
      return { time, event: e.event }
    default: {
      // An event the page has no words for yet (e.g. "reverted on the server"): shown by its
      // name with its path and message, rather than dropped.
      const other = e as { event: string; path?: unknown; message?: unknown }
      if (other.event === 'ready' || other.event === 'page' || other.event === 'polled') return undefined
      return {
        time,
        event: other.event,
        ...(typeof other.path === 'string' ? { path: other.path } : {}),
        ...(typeof other.message === 'string' ? { message: other.message } : {}),
      }
    }
  }
}

export function createHub(source: HubSource, now: () => Date = () => new Date()) {
  const clients = new Set<ServerResponse>()
  const feed: FeedEntry[] = []
  let status: StatusInput | undefined
  let checkedAt: string | undefined
  let error: string | undefined
  let stopped = false
  let reading: Promise<void> | undefined
  let again = false
  let closed = false
  let stale = true

  const state = (): PageState =>
    pageState({
      mode: source.mode,
      target: source.target,
      token: { source: source.tokenSource },
      rateLimit: source.rateLimit(),
      status,
      checkedAt,
      error,
      daemon: source.daemon(),
      stopped,
    })

  function send(res: ServerResponse, event: string, data: unknown): void {
    res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)
  }
  function broadcast(event: string, data: unknown): void {
    for (const res of clients) send(res, event, data)
  }
  let lastSent = ''
  function pushState(): void {
    // Nobody to tell: the state is built when a page opens (`listen`), not on every poll.
    if (clients.size === 0) return
    const text = JSON.stringify(state())
    if (text === lastSent) return
    lastSent = text
    for (const res of clients) res.write(`event: state\ndata: ${text}\n\n`)
  }

  /** Reads the status again (after the one under way, if any) and pushes the result. */
  function refresh(): Promise<void> {
    if (closed) return Promise.resolve()
    if (clients.size === 0) {
      stale = true
      return Promise.resolve()
    }
    stale = false
    if (reading) {
      again = true
      return reading
    }
    reading = (async () => {
      do {
        again = false
        try {
          status = await source.readStatus()
          checkedAt = now().toISOString()
          error = undefined
        } catch (e) {
          error = e instanceof Error ? e.message : String(e)
        }
        pushState()
      } while (again && !closed)
    })().finally(() => {
      reading = undefined
    })
    return reading
  }

  const keepalive = setInterval(() => {
    for (const res of clients) res.write(': keepalive\n\n')
    // The daemon's own numbers (queue, next poll) move without an event.
    pushState()
  }, KEEPALIVE_MS)
  keepalive.unref()

  return {
    state,
    refresh,
    /** A daemon event: to the feed, and a fresh status read when it changes what status says. */
    publish(e: WatchEvent): void {
      if (e.event === 'stopped') stopped = true
      const entry = feedEntry(e, now().toISOString())
      if (entry) {
        feed.push(entry)
        if (feed.length > FEED_SIZE) feed.shift()
        broadcast('feed', entry)
      }
      if (!LEAVES_STATUS.has(e.event)) void refresh()
      else pushState()
    },
    /** An open page: the state and the feed so far, then every change as it comes. */
    listen(res: ServerResponse): void {
      clients.add(res)
      res.on('close', () => clients.delete(res))
      const text = JSON.stringify(state())
      // Pages already open were told lastSent: when the state moved since (no page was told of a
      // change while none listened, and the daemon's numbers move without an event), they get it too.
      if (text !== lastSent) {
        lastSent = text
        for (const page of clients) page.write(`event: state\ndata: ${text}\n\n`)
      } else res.write(`event: state\ndata: ${text}\n\n`)
      for (const entry of feed) send(res, 'feed', entry)
      if (stale) void refresh()
    },
    close(): void {
      closed = true
      clearInterval(keepalive)
      for (const res of clients) res.end()
      clients.clear()
    },
  }
}

export type Hub = ReturnType<typeof createHub>
