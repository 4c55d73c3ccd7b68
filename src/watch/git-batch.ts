// The git side of the batch local-changes.ts gathers: whether git is at work on it (its index
// lock held, or let go only just now), whether HEAD moved, and what the batch came with when it
// goes (a checkout, a switch). HEAD moved with no file changing (a commit, a new branch) is
// where the next batch starts, not blamed on it.

import { branchName, type GitActivity, type GitHead, switched } from './git-activity.js'

/**
 * Git's index lock comes and goes between the steps of one operation (a stash is several), and
 * HEAD is written just after the lock is let go: git is done once the lock has been gone this
 * long.
 */
const GIT_QUIET_MS = 200
/** A lock left by a git that crashed is not waited on for ever: the batch goes after this long. */
const GIT_MAX_WAIT_MS = 120_000
/** HEAD moved with no file changing (a commit, `git checkout -b`): taken as the new start after this. */
const HEAD_IDLE_MS = 1_000

export interface GitBatch {
  /** HEAD points elsewhere than before the batch. */
  headMoved: boolean
  /** HEAD names another branch (or another detached commit): a branch switch. */
  switched: boolean
  /** The branch before and after (the short commit when detached). */
  from?: string
  to?: string
}

export interface GitTracker {
  /** Whether git holds its index lock now. */
  busy(): boolean
  /** A path of the batch changed: git holding its lock then makes the batch git's. */
  noteEvent(now: number): void
  /** Git is not at work and HEAD has not moved: no git operation is under way or just done. */
  quiet(now: number): boolean
  /** Whether git is still at work on the batch begun at firstEventAt. */
  atWork(now: number, firstEventAt: number): boolean
  /** The batch goes: what git did in it (none: nothing), and the next batch starts from here. */
  take(): GitBatch | undefined
  close(): void
}

/** Without a repository, git is never at work. */
const NO_GIT: GitTracker = {
  busy: () => false,
  noteEvent: () => {},
  quiet: () => true,
  atWork: () => false,
  take: () => undefined,
  close: () => {},
}

export function trackGit(
  git: GitActivity | undefined,
  t: {
    closed: () => boolean
    /** Whether a batch is gathering. */
    gathering: () => boolean
    onHeadSettled: ((head: GitHead) => void) | undefined
  },
): GitTracker {
  if (!git) return NO_GIT
  /** Where HEAD pointed before the batch now gathering. */
  let headBefore: GitHead = git.head()
  /** When git's index lock was last seen during this batch (0: not seen). */
  let lockSeenAt = 0
  /** When anything last changed in the git folder (its index, its lock, HEAD). */
  let gitActivityAt = Number.NEGATIVE_INFINITY
  let headIdleTimer: NodeJS.Timeout | undefined
  const gitWatch = git.watch((name) => {
    if (t.closed()) return
    gitActivityAt = performance.now()
    if (name === 'index.lock' && t.gathering()) lockSeenAt = gitActivityAt
    if (name !== 'HEAD' && name !== '') return
    // HEAD moved while no file changed (a commit, a new branch): that is where the next batch starts.
    clearTimeout(headIdleTimer)
    headIdleTimer = setTimeout(() => {
      if (t.closed() || t.gathering() || git.busy()) return
      headBefore = git.head()
      t.onHeadSettled?.(headBefore)
    }, HEAD_IDLE_MS)
    headIdleTimer.unref?.()
  })

  return {
    busy: () => git.busy(),
    noteEvent(now) {
      if (git.busy()) lockSeenAt = now
    },
    quiet(now) {
      if (lockSeenAt !== 0 || now - gitActivityAt < GIT_QUIET_MS || git.busy()) return false
      const head = git.head()
      return head.ref === headBefore.ref && head.commit === headBefore.commit
    },
    atWork(now, firstEventAt) {
      if (git.busy()) lockSeenAt = now
      if (lockSeenAt === 0) return false
      if (now - firstEventAt >= GIT_MAX_WAIT_MS) return false
      return now - lockSeenAt < GIT_QUIET_MS
    },
    take() {
      const head = git.head()
      const before = headBefore
      headBefore = head
      const headMoved = head.ref !== before.ref || head.commit !== before.commit
      const moved = headMoved || lockSeenAt !== 0
      lockSeenAt = 0
      if (!moved) return undefined
      const from = branchName(before)
      const to = branchName(head)
      return {
        headMoved,
        switched: headMoved && switched(before, head),
        ...(from ? { from } : {}),
        ...(to ? { to } : {}),
      }
    },
    close() {
      clearTimeout(headIdleTimer)
      gitWatch?.close()
    },
  }
}
