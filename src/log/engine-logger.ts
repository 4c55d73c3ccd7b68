// The logger shape every layer logs through: pino's, so the engine and the layers under it log
// without knowing pino, and tests can hand in any object that has these four methods.

/** Minimal logger shape (pino's). */
export interface EngineLogger {
  info(obj: object, msg?: string): void
  warn(obj: object, msg?: string): void
  error(obj: object, msg?: string): void
  debug(obj: object, msg?: string): void
}
