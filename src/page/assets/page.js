// The local page (docs/page.md). It lays out what the cms-sync process sends and sends back
// what the user chose; it computes nothing of its own. Everything from files or the server is
// put in as text (textContent): never as markup.

const $ = (id) => document.getElementById(id)

/** An element with attributes and children; strings become text nodes. */
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag)
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue
    if (key === 'class') node.className = value
    else if (key === 'onclick') node.addEventListener('click', value)
    else node.setAttribute(key, value === true ? '' : String(value))
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue
    node.append(
      typeof child === 'string' || typeof child === 'number' ? document.createTextNode(String(child)) : child,
    )
  }
  return node
}

const clock = (iso) => (iso ? new Date(iso).toTimeString().slice(0, 8) : '')
const SIDE = { local: 'local', remote: 'server' }

let busy = false
/** What the last action did; data-state says whether it is still under way (busy, done, failed). */
function setResult(text, state) {
  const r = $('result')
  r.textContent = text
  r.dataset.state = state
  r.className = state === 'failed' ? 'result bad' : 'result'
}

function summary(outcome) {
  const parts = []
  if (outcome.applied.length)
    parts.push(`${outcome.applied.length} done (${outcome.applied.map((i) => i.path).join(', ')})`)
  if (outcome.conflicts.length) parts.push(`${outcome.conflicts.length} still in conflict`)
  if (outcome.failed.length)
    parts.push(
      `${outcome.failed.length} failed: ${outcome.failed.map((i) => `${i.path}: ${i.error ?? 'failed'}`).join('; ')}`,
    )
  return parts.length ? parts.join(', ') : 'nothing to do'
}

/** One action, sent as JSON to this page's own server (same origin; the address holds the secret). */
async function act(name, body, label) {
  if (busy) return
  busy = true
  for (const b of document.querySelectorAll('button')) b.disabled = true
  setResult(`${label}…`, 'busy')
  try {
    const res = await fetch(`api/${name}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    })
    const data = await res.json()
    if (!res.ok || data.error) setResult(`${label}: ${data.error?.message ?? res.statusText}`, 'failed')
    else setResult(`${label}: ${summary(data.outcome)}`, data.outcome.failed.length > 0 ? 'failed' : 'done')
  } catch (error) {
    setResult(`${label}: ${error.message}`, 'failed')
  } finally {
    busy = false
    for (const b of document.querySelectorAll('button')) b.disabled = false
  }
}

const keepButtons = (paths, what) =>
  el(
    'div',
    { class: 'actions' },
    ['local', 'remote'].map((keep) =>
      el(
        'button',
        {
          type: 'button',
          class: keep,
          'data-keep': keep,
          onclick: () => act('resolve', { keep, paths }, `keep ${SIDE[keep]} for ${what}`),
        },
        `Keep ${SIDE[keep]}`,
      ),
    ),
  )

function valueCell(text, label) {
  return el(
    'td',
    { 'data-label': label },
    el('pre', { class: text === undefined ? 'value absent' : 'value' }, text ?? '(none)'),
  )
}

function leafRow(conflict, leaf) {
  const name = leaf.pointer || '(the document)'
  const changed = [
    leaf.changedLocal ? el('div', { class: 'changed local' }, 'changed locally') : undefined,
    leaf.changedRemote ? el('div', { class: 'changed remote' }, 'changed on the server') : undefined,
    leaf.order ? el('div', { class: 'changed' }, 'the order') : undefined,
  ]
  return el(
    'tr',
    { 'data-leaf': leaf.pointer },
    el('td', { class: 'pointer', 'data-label': 'Leaf' }, name, changed),
    valueCell(leaf.base, 'Base'),
    valueCell(leaf.local, 'Local'),
    valueCell(leaf.remote, 'Server'),
    el(
      'td',
      { 'data-label': 'Keep' },
      keepButtons([`${conflict.path}#${leaf.pointer}`], `${conflict.path} ${name}`),
    ),
  )
}

function mediaFigure(side, ref, conflict) {
  if (!ref) return el('figure', {}, el('figcaption', {}, `${SIDE[side]}: deleted`))
  const caption = el(
    'figcaption',
    {},
    `${SIDE[side]} `,
    el('a', { href: ref.url, download: '' }, 'download'),
    // Only raster images are shown; anything else (an SVG can carry script) is a file to save.
    ref.image ? undefined : ' (not shown: offered as a file)',
  )
  return el(
    'figure',
    {},
    ref.image ? el('img', { src: ref.url, alt: `${conflict.path}, ${SIDE[side]} side` }) : undefined,
    caption,
  )
}

function conflictCard(c) {
  const head = el(
    'div',
    { class: 'card-head' },
    el(
      'div',
      {},
      el('h3', {}, c.path),
      el(
        'div',
        { class: 'meta' },
        `${c.kind} · local ${c.local}, server ${c.remote}`,
        c.reason ? ` · ${c.reason}` : '',
      ),
    ),
    el('div', {}, el('div', { class: 'meta' }, 'the whole item:'), keepButtons([c.path], c.path)),
  )
  const parts = [head]
  if (c.leaves.length > 0)
    parts.push(
      el(
        'table',
        { class: 'leaves' },
        el(
          'thead',
          {},
          el(
            'tr',
            {},
            el('th', {}, 'Leaf'),
            el('th', {}, 'Base'),
            el('th', {}, 'Local'),
            el('th', {}, 'Server'),
            el('th', {}, 'Keep'),
          ),
        ),
        el(
          'tbody',
          {},
          c.leaves.map((leaf) => leafRow(c, leaf)),
        ),
      ),
    )
  if (c.media)
    parts.push(
      el(
        'div',
        { class: 'media' },
        mediaFigure('local', c.media.local, c),
        mediaFigure('remote', c.media.remote, c),
      ),
    )
  return el('article', { class: 'card conflict', 'data-path': c.path }, parts)
}

function groupBars(conflicts) {
  if (conflicts.length < 2) return []
  const bars = []
  const folders = new Map()
  const kinds = new Map()
  for (const c of conflicts) {
    if (c.folder) folders.set(c.folder, (folders.get(c.folder) ?? 0) + 1)
    const top = c.path.split('/')[0]
    kinds.set(top, { kind: c.kind, n: (kinds.get(top)?.n ?? 0) + 1 })
  }
  for (const [top, { kind, n }] of kinds)
    if (n > 1)
      bars.push(
        el(
          'div',
          { class: 'group', 'data-group': top },
          `Every ${kind} conflict (${n}):`,
          keepButtons([top], `every ${kind} conflict`),
        ),
      )
  for (const [folder, n] of folders)
    if (n > 1 && !kinds.has(folder))
      bars.push(
        el(
          'div',
          { class: 'group', 'data-group': `${folder}/*` },
          `Every conflict under ${folder}/ (${n}):`,
          keepButtons([`${folder}/*`], `every conflict under ${folder}/`),
        ),
      )
  return bars
}

/** A held group's choice, through the same action as the command the card names. */
function heldAct(what, paths, verb) {
  const n = `${paths.length} held change(s)`
  if (what.op === 'resolve')
    return act('resolve', { scope: paths, leaves: {}, keep: what.keep }, `${verb}: ${n}`)
  return act(what.op, { paths }, `${verb}: ${n}`)
}

/** A held group's button (`data-held` its role) for the choice `what`; none where the group has no such choice. */
function heldButton(what, role, paths, verb, label) {
  if (!what) return undefined
  return el(
    'button',
    { type: 'button', 'data-held': role, onclick: () => heldAct(what, paths, verb) },
    label(what.op),
  )
}

function heldCard(h) {
  const paths = h.items.map((i) => i.path)
  return el(
    'article',
    { class: 'card held' },
    el(
      'div',
      { class: 'card-head' },
      el('h3', {}, h.message ?? h.reason),
      // The reason beneath the heading only where the heading is another sentence.
      el(
        'div',
        { class: 'meta' },
        [
          h.message && h.message !== h.reason ? h.reason : undefined,
          h.since ? `since ${clock(h.since)}` : undefined,
        ]
          .filter(Boolean)
          .join(' · '),
      ),
    ),
    el(
      'ul',
      { class: 'held-paths' },
      h.items.map((i) =>
        el(
          'li',
          {},
          i.path,
          i.action || i.kind
            ? el('span', { class: 'meta' }, ` (${[i.kind, i.action].filter(Boolean).join(', ')})`)
            : undefined,
        ),
      ),
    ),
    el(
      'div',
      { class: 'actions' },
      heldButton(h.releaseAct, 'release', paths, 'carry out', (op) =>
        op === 'release' ? 'Push them' : 'Carry them out',
      ),
      heldButton(h.dropAct, 'drop', paths, 'drop', (op) =>
        op === 'restore' ? 'Restore them' : 'Bring them back',
      ),
    ),
    el(
      'p',
      { class: 'meta' },
      'The same from a terminal: ',
      el('code', {}, h.release),
      ' or ',
      el('code', {}, h.drop),
    ),
  )
}

const EVENT_LABEL = {
  pushed: 'pushed',
  pulled: 'pulled',
  merged: 'merged',
  reverted: 'reverted on the server',
  // Only bytes that differ reach the feed (hub.ts).
  verified: 'replaced on the server',
  conflict: 'conflict',
  failed: 'failed',
  paused: 'paused',
  offline: 'offline',
  online: 'back online',
  'token-renewed': 'new token',
  error: 'error',
  warning: 'warning',
  reconciled: 'reconciled',
  stopped: 'stopped',
}

function feedLabel(e) {
  if (e.event === 'pushed' && e.action === 'delete-remote') return 'deleted on server'
  if (e.event === 'pulled' && e.action === 'delete-local') return 'deleted locally'
  if (e.event === 'failed' && e.action) return `${e.action} failed`
  return EVENT_LABEL[e.event] ?? e.event
}

function addFeed(e) {
  const item = el(
    'li',
    { class: `ev-${e.event}`, 'data-event': e.event, 'data-path': e.path },
    el('time', { datetime: e.time }, clock(e.time)),
    el('span', { class: 'what' }, feedLabel(e)),
    el('span', { class: 'path' }, [e.path, e.message].filter(Boolean).join(': ')),
  )
  const feed = $('feed')
  feed.prepend(item)
  while (feed.children.length > 200) feed.lastElementChild.remove()
}

function render(s) {
  document.body.dataset.ready = 'true'
  $('target').textContent =
    `${s.target.server} · project ${s.target.project} · environment ${s.target.environment}`
  const d = $('daemon')
  d.className = `state-${s.daemon.state}`
  d.textContent = [
    s.daemon.state,
    s.daemon.why,
    s.daemon.queued !== undefined ? `${s.daemon.queued} queued` : undefined,
    s.daemon.nextPollAt ? `next poll about ${clock(s.daemon.nextPollAt)}` : undefined,
  ]
    .filter(Boolean)
    .join(' · ')
  $('token').textContent =
    `from ${s.token.source}${s.token.accepted === undefined ? ' · not checked yet' : s.token.accepted ? ' · accepted' : ` · refused: ${s.token.message ?? ''}`}`
  const byAction = Object.entries(s.counts.byAction).map(([action, n]) => `${n} ${action}`)
  // "agree" only where everything was compared, as `status` says it; what was not is named.
  const unchecked = s.counts.unchecked.length ? `, but ${s.counts.unchecked.join('; ')}` : ''
  $('counts').textContent =
    s.checkedAt === undefined
      ? 'reading…'
      : s.counts.clean
        ? unchecked
          ? `nothing to sync in what was compared${unchecked}`
          : 'nothing: the workspace and the server agree'
        : [`${s.counts.toSync}`, ...byAction, s.counts.problems ? `${s.counts.problems} unusable` : undefined]
            .filter(Boolean)
            .join(' · ') + unchecked
  $('rate').textContent =
    `at most ${s.rateLimit.requestsPerSecond}/s, ${s.rateLimit.concurrency} at once${s.rateLimit.rateLimited ? ` · the server answered 429 ${s.rateLimit.rateLimited} time(s)` : ''}`
  $('checked').textContent = s.checkedAt ? clock(s.checkedAt) : '…'
  const notice = $('connection')
  notice.hidden = !s.error
  notice.textContent = s.error ? `The last status read failed: ${s.error}` : ''

  $('held').replaceChildren(
    ...(s.held.length ? s.held.map(heldCard) : [el('p', { class: 'empty' }, 'Nothing is held back.')]),
  )
  $('groups').replaceChildren(...groupBars(s.conflicts))
  $('conflicts').replaceChildren(
    ...(s.conflicts.length ? s.conflicts.map(conflictCard) : [el('p', { class: 'empty' }, 'No conflicts.')]),
  )
  $('conflicts-title').textContent = s.conflicts.length ? `Conflicts (${s.conflicts.length})` : 'Conflicts'
}

const events = new EventSource('events')
// Each connection starts with the feed so far: a reconnect replaces what is shown.
events.addEventListener('open', () => $('feed').replaceChildren())
events.addEventListener('state', (m) => {
  $('connection').hidden = true
  render(JSON.parse(m.data))
})
events.addEventListener('feed', (m) => addFeed(JSON.parse(m.data)))
events.addEventListener('error', () => {
  const notice = $('connection')
  notice.hidden = false
  notice.textContent = 'Not connected to cms-sync (it may have stopped); reconnecting…'
})
