// The crash tests spawn the real CLI (dist/cli/main.js): build it once before the suite.

import { execFileSync } from 'node:child_process'

export default function setup(): void {
  execFileSync('npm', ['run', 'build', '--silent'], { stdio: 'inherit' })
}
