// The floor of an idle `watch`: a process that asks the same listings conditionally every
// interval and does nothing else. It takes each listing's ETag with a HEAD (no body kept), says
// `ready` on stdout, then polls with If-None-Match until it is stopped; a poll that is not
// a 304 is reported on stderr (the listing changed under an idle measurement).
//   node bench/baselines/poller.mjs --seconds 10 URL...   (token from CMS_SYNC_TOKEN)

import http from 'node:http'
import { parseArgs } from 'node:util'

const { values, positionals } = parseArgs({
  options: { seconds: { type: 'string', default: '10' } },
  allowPositionals: true,
})
const auth = { authorization: `Bearer ${process.env.CMS_SYNC_TOKEN}` }
const agent = new http.Agent({ keepAlive: true })

function request(method, url, headers) {
  return new Promise((resolve, reject) => {
    http
      .request(url, { method, headers: { ...auth, ...headers }, agent }, (response) => {
        // The body is never kept: a changed listing is read and dropped.
        response.resume()
        response.on('end', () => resolve(response))
      })
      .on('error', reject)
      .end()
  })
}

const etags = new Map()
for (const url of positionals) {
  const response = await request('HEAD', url, {})
  if (response.statusCode !== 200) throw new Error(`HEAD ${url}: ${response.statusCode}`)
  etags.set(url, response.headers.etag)
}
process.stdout.write('ready\n')

async function poll() {
  for (const url of positionals) {
    const response = await request('GET', url, { 'if-none-match': etags.get(url) })
    if (response.statusCode !== 304) {
      process.stderr.write(`${url}: ${response.statusCode}, not 304\n`)
      etags.set(url, response.headers.etag)
    }
  }
}
setInterval(() => void poll(), Number(values.seconds) * 1000)
process.on('SIGTERM', () => process.exit(0))
process.on('SIGINT', () => process.exit(0))
