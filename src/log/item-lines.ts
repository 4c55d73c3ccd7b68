// The logger for a run's one line per item (`applied`, `item failed`). Those lines are flat:
// a path, an action and an error message. The full redaction (logger.ts: secret keys up to
// three levels deep, through wildcards) walks every logged object, several times the cost of
// the line itself, and a large pull logs one per item (docs/benchmarks.md, "Figures behind code
// comments"). For a flat line the secret keys at the top level are
// the whole walk; secrets inside an error message are scrubbed where the HTTP layer makes the
// error (`scrub` in remote/http.ts), as no key-based redaction could see them.

import type { EngineLogger } from './engine-logger.js'
import { SECRET_KEYS } from './secret-keys.js'

type ChildOptions = { redact: { paths: string[]; censor: string } }
type WithChild = EngineLogger & { child?(bindings: object, options: ChildOptions): EngineLogger }

const itemLoggers = new WeakMap<EngineLogger, EngineLogger>()

/** A child of a pino logger for flat per-item lines (one per logger: each compiles its redaction). */
export function itemLogger(logger: WithChild): EngineLogger {
  let child = itemLoggers.get(logger)
  if (!child) {
    child = logger.child?.({}, { redact: { paths: [...SECRET_KEYS], censor: '[redacted]' } }) ?? logger
    itemLoggers.set(logger, child)
  }
  return child
}
