// What every scenario gets: the world, the flags, and which features this build has.

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

export interface Features {
  /** A media codec is registered: pull and push mirror media/. */
  media: boolean
  /** `cms-sync watch` exists. */
  watch: boolean
}

export interface BenchContext {
  world: World
  options: BenchOptions
  features: Features
  /** Where the scenarios log progress (stderr). */
  log: (line: string) => void
}
