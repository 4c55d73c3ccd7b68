// What every scenario gets: the world and the flags.

import type { World } from './world.js'

export interface BenchOptions {
  repeat: number
  /** Client rate limit of the push scenario, requests per second. */
  rate: number
  pushFiles: number
  /** Edits of the watch latency measurement. */
  edits: number
  idleSeconds: number
}

export interface BenchContext {
  world: World
  options: BenchOptions
  /** Where the scenarios log progress (stderr). */
  log: (line: string) => void
}
