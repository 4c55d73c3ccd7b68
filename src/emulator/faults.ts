// Failure injection for testing clients: `--faults error=0.05,drop=0.02,drop-after=0.01,
// slow=0.05:1500,429=0.05` and `--rate-limit N`. A seeded generator makes a run repeatable,
// and every injected fault is counted so tests and reliability reports can print figures.

export type FaultKind = 'error' | 'drop' | 'drop-after' | 'slow' | '429'
export const FAULT_KINDS: FaultKind[] = ['error', 'drop', 'drop-after', 'slow', '429']

export type FaultSpec = Partial<Record<FaultKind, number>> & { slowMs?: number }

export type FaultDecision =
  | { kind: 'none' }
  | { kind: 'error'; status: number }
  | { kind: 'drop' }
  | { kind: 'drop-after' }
  | { kind: 'slow'; ms: number }
  | { kind: '429'; retryAfter: number }
  | { kind: 'rate-limit'; retryAfter: number }

export function parseFaults(spec: string): FaultSpec {
  const out: FaultSpec = {}
  for (const part of spec
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const [name, value] = part.split('=') as [string, string | undefined]
    if (!FAULT_KINDS.includes(name as FaultKind) || value === undefined) {
      throw new Error(
        `unknown fault "${part}"; expected NAME=RATE with NAME one of ${FAULT_KINDS.join(', ')}`,
      )
    }
    const [rateText, msText] = value.split(':') as [string, string | undefined]
    const rate = Number(rateText)
    if (!(rate >= 0 && rate <= 1))
      throw new Error(`fault rate of "${name}" must be between 0 and 1, got "${rateText}"`)
    out[name as FaultKind] = rate
    if (msText !== undefined) {
      if (name !== 'slow') throw new Error(`only "slow" takes a delay (slow=RATE:MS), got "${part}"`)
      const ms = Number(msText)
      if (!(Number.isInteger(ms) && ms >= 0))
        throw new Error(`slow delay must be whole milliseconds, got "${msText}"`)
      out.slowMs = ms
    }
  }
  const total = FAULT_KINDS.reduce((sum, k) => sum + (out[k] ?? 0), 0)
  if (total > 1) throw new Error(`fault rates add up to ${total}, more than 1`)
  return out
}

/** mulberry32: small, fast, and the same sequence for the same seed on every platform. */
function seeded(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

export class Faults {
  readonly counts: Record<FaultKind | 'rate-limit' | 'requests', number> = {
    requests: 0,
    error: 0,
    drop: 0,
    'drop-after': 0,
    slow: 0,
    '429': 0,
    'rate-limit': 0,
  }
  private random: () => number
  private windowStart = 0
  private windowCount = 0

  constructor(
    public spec: FaultSpec = {},
    public rateLimit: number | undefined = undefined,
    seed = 1,
    private readonly now: () => number = Date.now,
  ) {
    this.random = seeded(seed)
  }

  /** Replaces the fault rates (and optionally the seed) of a running emulator. */
  set(spec: FaultSpec | string, seed?: number): void {
    this.spec = typeof spec === 'string' ? parseFaults(spec) : spec
    if (seed !== undefined) this.random = seeded(seed)
  }

  decide(): FaultDecision {
    this.counts.requests++
    if (this.rateLimit !== undefined) {
      const now = this.now()
      if (now - this.windowStart >= 1000) {
        this.windowStart = now
        this.windowCount = 0
      }
      if (++this.windowCount > this.rateLimit) {
        this.counts['rate-limit']++
        return {
          kind: 'rate-limit',
          retryAfter: Math.max(1, Math.ceil((this.windowStart + 1000 - now) / 1000)),
        }
      }
    }
    const roll = this.random()
    let edge = 0
    for (const kind of FAULT_KINDS) {
      edge += this.spec[kind] ?? 0
      if (roll >= edge) continue
      this.counts[kind]++
      switch (kind) {
        case 'error':
          return { kind, status: [500, 502, 503][Math.floor(this.random() * 3)]! }
        case 'slow':
          return { kind, ms: this.spec.slowMs ?? 1000 }
        case '429':
          return { kind, retryAfter: 1 }
        default:
          return { kind }
      }
    }
    return { kind: 'none' }
  }
}
