// The least a Node program does for a no-change status: start, fetch the same listings at once
// and parse them. No workspace, no state, no comparison. It shows how much of `status`'s ratio
// to git + curl is Node's start and JSON.parse of the listings, which any Node tool pays.
//   node bench/baselines/listings-floor.mjs URL...   (token from CMS_SYNC_TOKEN)

import http from 'node:http'

const headers = { authorization: `Bearer ${process.env.CMS_SYNC_TOKEN}` }

function getJson(url) {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (response) => {
        const chunks = []
        response.on('data', (chunk) => chunks.push(chunk))
        response.on('end', () => {
          if (response.statusCode !== 200) reject(new Error(`${url}: ${response.statusCode}`))
          else resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')))
        })
      })
      .on('error', reject)
  })
}

await Promise.all(process.argv.slice(2).map(getJson))
