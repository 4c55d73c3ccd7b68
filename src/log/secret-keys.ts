/** Keys whose values are never logged, wherever they appear (logger.ts, item-lines.ts). */
export const SECRET_KEYS = [
  'token',
  'password',
  'authorization',
  'cookie',
  'secret',
  'apiKey',
  'accessToken',
] as const
