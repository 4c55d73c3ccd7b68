// Putting one JSON value's keys in the order another holds them. Used once per item, when a
// file written with sorted keys (before state version 2) first meets the server's copy: its
// order says nothing (cms-sync sorted it), so the server's order, which editors see, wins.

import type { JsonObject } from './codec.js'

function isObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

/**
 * `value` with the keys of every object in the order `model` holds them at the same place; keys
 * the model lacks follow in their own order. Values are never changed, only reordered.
 */
export function orderLike<T>(value: T, model: unknown): T {
  if (Array.isArray(value)) {
    const models = Array.isArray(model) ? model : []
    return value.map((element, index) => orderLike(element, models[index])) as T
  }
  if (!isObject(value)) return value
  const shape = isObject(model) ? model : {}
  const out: JsonObject = {}
  for (const key of Object.keys(shape)) if (key in value) out[key] = orderLike(value[key], shape[key])
  for (const key of Object.keys(value)) if (!(key in out)) out[key] = orderLike(value[key], undefined)
  return out as T
}
