// The options pull, push and sync share, declared once as data (design.md "Commands").

import { type Command, Option } from 'commander'
import type { Side } from '../engine/plan.js'

export interface RunOptions {
  dryRun?: boolean
  prefer?: Side
  allowDeletes?: boolean
  rebind?: boolean
  checksum?: boolean
}

export function withRunOptions(cmd: Command): Command {
  return cmd
    .argument('[paths...]', 'only these files or folders (default: the whole workspace)')
    .option('--dry-run', 'print the plan and change nothing')
    .addOption(
      new Option(
        '--prefer <side>',
        'settle conflicts for this side; the loser goes to .cms-sync/trash/',
      ).choices(['local', 'remote']),
    )
    .option(
      '--allow-deletes',
      'lift the delete guard (safety.maxDeletePercent and safety.maxDeletes of a kind)',
    )
    .option('--rebind', 'sync with the target in cms-sync.yaml although the workspace was bound to another')
    .option(
      '--checksum',
      'download media whose change the server cannot tell (upstream has no media dates) and compare the bytes',
    )
}

/** `--publish` / `--no-publish`: cms-sync.yaml's `publishing` (auto / manual) for this run only. */
export function withPublishOptions(cmd: Command): Command {
  return cmd
    .option(
      '--publish',
      'carry out isPublished and publish again every pushed item that is published (publishing: auto, for this run)',
    )
    .option(
      '--no-publish',
      'deploy nothing: isPublished is written as a field (publishing: manual, for this run)',
    )
}
