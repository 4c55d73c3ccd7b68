// --faults and --rate-limit: injected errors, drops, delays and 429s at the configured rates,
// reproducible with a seed, counted, and applied to /api and /media routes.

import { describe, expect, it } from 'vitest'
import { parseFaults } from '../../src/emulator/index.js'
import { call, client, start } from './helpers.js'

async function statuses(url: string, n: number): Promise<number[]> {
  const out: number[] = []
  for (let i = 0; i < n; i++) out.push((await fetch(url)).status)
  return out
}

describe('faults', () => {
  it('parses the fault spec and refuses a bad one with a reason', () => {
    expect(parseFaults('error=0.05,drop=0.02,drop-after=0.01,slow=0.05:1500,429=0.05')).toEqual({
      error: 0.05,
      drop: 0.02,
      'drop-after': 0.01,
      slow: 0.05,
      slowMs: 1500,
      '429': 0.05,
    })
    expect(() => parseFaults('boom=0.1')).toThrow(/unknown fault/)
    expect(() => parseFaults('error=2')).toThrow(/between 0 and 1/)
    expect(() => parseFaults('error=0.7,drop=0.7')).toThrow(/more than 1/)
  })

  it('injects errors and 429s at about the configured rates, the same way for the same seed', async () => {
    const runs: number[][] = []
    for (let i = 0; i < 2; i++) {
      const emu = await start({ faults: 'error=0.2,429=0.1', faultSeed: 42 })
      runs.push(await statuses(`${emu.url}/api/demo/live/content?token=${emu.token()}`, 200))
      expect(emu.faults.counts.requests).toBe(200)
      expect(emu.faults.counts.error).toBeGreaterThan(20)
      expect(emu.faults.counts.error).toBeLessThan(65)
      expect(emu.faults.counts['429']).toBeGreaterThan(5)
      expect(emu.faults.counts['429']).toBeLessThan(40)
      const fives = runs[i]!.filter((s) => s >= 500).length
      expect(fives).toBe(emu.faults.counts.error)
      expect(runs[i]!.filter((s) => s === 429).length).toBe(emu.faults.counts['429'])
    }
    expect(runs[0]).toEqual(runs[1])
  })

  it('sends Retry-After with an injected 429 and applies faults to /media routes', async () => {
    const emu = await start({ faults: '429=1' })
    const res = await fetch(`${emu.url}/media/demo/live/x`)
    expect(res.status).toBe(429)
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
  })

  it('drops the connection before handling: the write never happens', async () => {
    const emu = await start()
    const token = emu.token()
    emu.setFaults('drop=1')
    await expect(
      call(emu, 'POST', '/api/demo/live/forms/f?create=true', { token, body: { id: 'f' } }),
    ).rejects.toThrow()
    emu.setFaults({})
    expect((await client(emu, token).get('P/forms')).json()).toEqual([])
    expect(emu.faults.counts.drop).toBe(1)
  })

  it('drop-after applies the write, then drops the connection without an answer', async () => {
    const emu = await start()
    const token = emu.token()
    emu.setFaults('drop-after=1')
    await expect(
      call(emu, 'POST', '/api/demo/live/forms/f?create=true', { token, body: { id: 'f' } }),
    ).rejects.toThrow()
    emu.setFaults({})
    expect((await client(emu, token).get('P/forms')).json().map((f: { id: string }) => f.id)).toEqual(['f'])
    expect(emu.faults.counts['drop-after']).toBe(1)
  })

  it('slow delays the answer by the configured time', async () => {
    const emu = await start({ faults: 'slow=1:300' })
    const started = Date.now()
    const res = await call(emu, 'GET', '/api/demo/live/content', { token: emu.token() })
    expect(res.status).toBe(200)
    expect(Date.now() - started).toBeGreaterThanOrEqual(290)
  })

  it('leaves routes outside /api and /media alone', async () => {
    const emu = await start({ faults: 'error=1' })
    expect((await fetch(`${emu.url}/`)).status).toBe(404)
  })
})

describe('rate limit', () => {
  it('answers 429 with Retry-After past N requests a second', async () => {
    let clock = Date.now()
    const emu = await start({ rateLimit: 5, now: () => clock })
    const url = `${emu.url}/api/demo/live/content?token=${emu.token()}`
    const responses = await Promise.all(Array.from({ length: 12 }, () => fetch(url)))
    const limited = responses.filter((r) => r.status === 429)
    expect(limited.length).toBeGreaterThanOrEqual(6)
    expect(responses.filter((r) => r.status === 200).length).toBeGreaterThanOrEqual(5)
    expect(Number(limited[0]!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    expect(emu.faults.counts['rate-limit']).toBe(limited.length)
    clock += 1000 // the second it asked to wait
    expect((await fetch(url)).status).toBe(200)
  })

  it("leaves the self-test's own requests alone", async () => {
    const emu = await start({ rateLimit: 2 })
    const res = await call(emu, 'POST', '/api/test', { token: emu.token() })
    expect(res.text).toContain('All tests passed')
  })
})
