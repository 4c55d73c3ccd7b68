// An error and the ones behind it (`cause`), as wrappers leave them: a run's safety stop wraps a
// listing's failure, which wraps the client's error. Callers ask what an error in the chain is
// (its class, its code), never what its message says.

/** Wrappers nest two or three deep; the bound keeps a chain that loops back on itself finite. */
const MAX_DEPTH = 5

/** The error and its causes, outermost first, `depth` at most; a cause that is no Error ends it. */
export function causeChain(error: unknown, depth = MAX_DEPTH): Error[] {
  const chain: Error[] = []
  for (let e = error; e instanceof Error && chain.length < depth; e = e.cause) chain.push(e)
  return chain
}

/** The first error of the chain (the error itself, then its causes) that passes `test`. */
export function findCause<T extends Error>(
  error: unknown,
  test: (e: Error) => e is T,
  depth?: number,
): T | undefined
export function findCause(error: unknown, test: (e: Error) => boolean, depth?: number): Error | undefined
export function findCause(error: unknown, test: (e: Error) => boolean, depth = MAX_DEPTH): Error | undefined {
  return causeChain(error, depth).find(test)
}
