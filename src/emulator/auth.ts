// Users, password hashes and tokens. Passwords are hashed with scrypt and a per-user salt;
// tokens are kept only as their SHA-256, so neither a data folder nor a log holds a secret
// that opens the server.

import { createHash, randomBytes, scrypt, timingSafeEqual } from 'node:crypto'
import { newId, type Obj } from './entities.js'
import { names, type Store } from './store.js'

export type PasswordHash = { algo: 'scrypt'; N: number; salt: string; hash: string }
export type User = {
  id: string
  username: string
  fullName: string
  email: string
  isAdmin: boolean
  scopes: Record<string, string[]>
  viewedBy: string
  viewedOn: string | null
  password: PasswordHash
}
export type StartUser = { username: string; password: string; isAdmin: boolean }

const N = 16384
const EIGHT_HOURS = 8 * 3600 * 1000

function derive(password: string, salt: string, cost: number): Promise<string> {
  return new Promise((resolve, reject) =>
    scrypt(password, salt, 64, { N: cost, maxmem: 64 * 1024 * 1024 }, (err, key) =>
      err ? reject(err) : resolve(key.toString('hex')),
    ),
  )
}

export async function hashPassword(password: string): Promise<PasswordHash> {
  const salt = randomBytes(16).toString('hex')
  return { algo: 'scrypt', N, salt, hash: await derive(password, salt, N) }
}

// In-memory emulators started by tests all begin with the same few users; hashing those
// once per process keeps start-up cheap. Persistent users always get a fresh salt.
const startupHashes = new Map<string, Promise<PasswordHash>>()
function startupHash(password: string): Promise<PasswordHash> {
  const cached = startupHashes.get(password)
  if (cached) return cached
  const hash = hashPassword(password)
  startupHashes.set(password, hash)
  return hash
}

export async function verifyPassword(password: string, stored: PasswordHash): Promise<boolean> {
  const actual = Buffer.from(await derive(password, stored.salt, stored.N), 'hex')
  const expected = Buffer.from(stored.hash, 'hex')
  return actual.length === expected.length && timingSafeEqual(actual, expected)
}

const tokenKey = (token: string) => createHash('sha256').update(token).digest('hex')

export function publicUser(user: User, currentId?: string): Obj {
  const { password: _password, ...rest } = user
  return currentId === undefined ? rest : { ...rest, isCurrent: user.id === currentId }
}

export class Users {
  constructor(
    private readonly store: Store,
    private readonly now: () => number,
  ) {}

  list(): User[] {
    return this.store.list<User>(names.users)
  }

  byId(id: string): User | undefined {
    return this.store.get<User>(names.users, id)
  }

  byName(username: string): User | undefined {
    return this.list().find((u) => u.username === username)
  }

  async create(fields: Obj & { username: string; password: string }, fastHash = false): Promise<User> {
    const user: User = {
      id: newId(),
      username: fields.username,
      fullName: typeof fields.fullName === 'string' ? fields.fullName : '',
      email: typeof fields.email === 'string' ? fields.email : '',
      isAdmin: fields.isAdmin === true,
      scopes: (fields.scopes as Record<string, string[]> | undefined) ?? {},
      viewedBy: '',
      viewedOn: null,
      password: await (fastHash ? startupHash(fields.password) : hashPassword(fields.password)),
    }
    this.store.put(names.users, user.id, user)
    return user
  }

  save(user: User): void {
    this.store.put(names.users, user.id, user)
  }

  remove(id: string): void {
    this.store.del(names.users, id)
    for (const key of this.store.keys(names.tokens)) {
      if (this.store.get<{ userId: string }>(names.tokens, key)?.userId === id)
        this.store.del(names.tokens, key)
    }
  }

  /** A new 40-hex token (20 random bytes, §2.1); non-persistent ones last 8 hours. */
  issueToken(user: User, persist: boolean): string {
    const now = this.now()
    // Expired tokens of this user are pruned when they log in again, as upstream does.
    for (const key of this.store.keys(names.tokens)) {
      const t = this.store.get<{ userId: string; expires: number | null }>(names.tokens, key)
      if (t?.userId === user.id && t.expires !== null && t.expires < now) this.store.del(names.tokens, key)
    }
    const token = randomBytes(20).toString('hex')
    this.store.put(names.tokens, tokenKey(token), {
      userId: user.id,
      expires: persist ? null : now + EIGHT_HOURS,
    })
    return token
  }

  userForToken(token: string | undefined): User | undefined {
    if (!token) return undefined
    const t = this.store.get<{ userId: string; expires: number | null }>(names.tokens, tokenKey(token))
    if (!t || (t.expires !== null && t.expires < this.now())) return undefined
    return this.byId(t.userId)
  }

  revokeToken(token: string): void {
    this.store.del(names.tokens, tokenKey(token))
  }
}
