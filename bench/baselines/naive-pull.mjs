// The floor an initial pull is measured against: fetch the same listings and bytes and write
// the same files, with no checks, no state, no canonical form. Plain JavaScript on purpose, so
// the baseline pays no TypeScript loader at start-up; only Node's own modules.
//   node bench/baselines/naive-pull.mjs --server URL --dir DIR --kinds schemas,content[,media]
// The token comes from CMS_SYNC_TOKEN, as for cms-sync.

import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { parseArgs } from 'node:util'

const { values } = parseArgs({
  options: {
    server: { type: 'string' },
    dir: { type: 'string' },
    kinds: { type: 'string', default: 'schemas,content' },
    project: { type: 'string', default: 'demo' },
    environment: { type: 'string', default: 'live' },
    concurrency: { type: 'string', default: '8' },
  },
})
const headers = { authorization: `Bearer ${process.env.CMS_SYNC_TOKEN}` }
const api = `${values.server}/api/${values.project}/${values.environment}`
const kinds = values.kinds.split(',')

async function get(url) {
  const response = await fetch(url, { headers })
  if (!response.ok) throw new Error(`${url}: ${response.status}`)
  return response
}

async function writeJsonFiles(folder, items) {
  await mkdir(path.join(values.dir, folder), { recursive: true })
  for (const item of items)
    await writeFile(path.join(values.dir, folder, `${item.id}.json`), `${JSON.stringify(item, null, 2)}\n`)
}

if (kinds.includes('schemas')) await writeJsonFiles('schemas', await (await get(`${api}/schema`)).json())
if (kinds.includes('content')) await writeJsonFiles('content', await (await get(`${api}/content`)).json())
if (kinds.includes('media')) {
  const media = await (await get(`${api}/media`)).json()
  let next = 0
  const worker = async () => {
    while (next < media.length) {
      const item = media[next++]
      const bytes = Buffer.from(
        await (
          await get(`${values.server}/media/${values.project}/${values.environment}/${item.id}`)
        ).arrayBuffer(),
      )
      const folder = path.join(values.dir, 'media', ...String(item.folder).split('/').filter(Boolean))
      await mkdir(folder, { recursive: true })
      await writeFile(path.join(folder, item.name), bytes)
    }
  }
  await Promise.all(Array.from({ length: Number(values.concurrency) }, worker))
}
