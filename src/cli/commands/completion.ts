// `cms-sync completion bash|zsh|fish`: a shell completion script, written from the program's
// own command table (every command and its options), so it never lags behind the commands.

import { Argument, type Command } from 'commander'
import type { CliIo } from '../io.js'

interface Entry {
  name: string
  summary: string
  options: string[]
}

/**
 * The commands and their long options (and the global ones), as the program declares them:
 * `program` is the one this command is registered on, which holds every command (program.ts
 * registers them all for `completion`).
 */
function entries(program: Command): { commands: Entry[]; globals: string[] } {
  const longs = (cmd: Command) => cmd.options.map((o) => o.long).filter((l): l is string => !!l)
  const commands = program.commands.map((cmd) => ({
    name: cmd.name(),
    summary: cmd.description().split('\n')[0] ?? '',
    options: [...longs(cmd), ...cmd.commands.map((c) => c.name())],
  }))
  return { commands, globals: [...longs(program), '--help'] }
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`

function bash(commands: Entry[], globals: string[]): string {
  const cases = commands.map((c) => `    ${c.name}) opts=${quote(c.options.join(' '))} ;;`).join('\n')
  return `# cms-sync completion for bash: source it, e.g. cms-sync completion bash >> ~/.bashrc
_cms_sync() {
  local cur=\${COMP_WORDS[COMP_CWORD]} cmd="" i opts=""
  for ((i = 1; i < COMP_CWORD; i++)); do
    case \${COMP_WORDS[i]} in
      -C|--dir) ((i++)) ;;
      -*) ;;
      *) cmd=\${COMP_WORDS[i]}; break ;;
    esac
  done
  if [[ -z $cmd ]]; then
    COMPREPLY=($(compgen -W ${quote(`${commands.map((c) => c.name).join(' ')} ${globals.join(' ')}`)} -- "$cur"))
    return
  fi
  case $cmd in
${cases}
  esac
  COMPREPLY=($(compgen -W "$opts ${globals.join(' ')}" -- "$cur") $(compgen -f -- "$cur"))
}
complete -o filenames -F _cms_sync cms-sync
`
}

function zsh(commands: Entry[], globals: string[]): string {
  return `#compdef cms-sync
# cms-sync completion for zsh: cms-sync completion zsh > "\${fpath[1]}/_cms-sync"
# (or source it from ~/.zshrc). zsh runs the bash completion through bashcompinit.
autoload -U +X bashcompinit && bashcompinit
${bash(commands, globals).replace(/^# .*\n/, '')}`
}

function fish(commands: Entry[], globals: string[]): string {
  const lines = [
    '# cms-sync completion for fish: cms-sync completion fish > ~/.config/fish/completions/cms-sync.fish',
  ]
  lines.push('complete -c cms-sync -f')
  for (const g of globals) lines.push(`complete -c cms-sync -l ${g.replace(/^--/, '')}`)
  for (const c of commands) {
    lines.push(`complete -c cms-sync -n __fish_use_subcommand -a ${c.name} -d ${quote(c.summary)}`)
    for (const o of c.options) {
      if (o.startsWith('--'))
        lines.push(
          `complete -c cms-sync -n ${quote(`__fish_seen_subcommand_from ${c.name}`)} -l ${o.slice(2)}`,
        )
      else lines.push(`complete -c cms-sync -n ${quote(`__fish_seen_subcommand_from ${c.name}`)} -a ${o}`)
    }
    lines.push(`complete -c cms-sync -n ${quote(`__fish_seen_subcommand_from ${c.name}`)} -F`)
  }
  return `${lines.join('\n')}\n`
}

export function register(program: Command, io: CliIo, _setExit: (code: number) => void): void {
  program
    .command('completion')
    .description('Print a shell completion script (bash, zsh or fish)')
    .addArgument(new Argument('<shell>', 'the shell').choices(['bash', 'zsh', 'fish']))
    .action((shell: 'bash' | 'zsh' | 'fish') => {
      const { commands, globals } = entries(program)
      const script = { bash, zsh, fish }[shell](commands, globals)
      io.stdout.write(script)
    })
}
