import type { Command, Option } from 'commander';
import type { DynamicKind } from '../completion-kinds.js';

/** One reachable command line prefix, e.g. "endpoints allowlist" (aliases give more keys). */
interface Node {
  key: string;
  subs: Array<{ name: string; description: string }>;
  options: Array<{ long?: string; short?: string; takesValue: boolean; choices: string[]; file: boolean; description: string }>;
  /** Choices of the first positional argument, e.g. the shells of `completion`. */
  argChoices: string[];
  /** Values of the first positional argument that only the service knows (see DYNAMIC). */
  argKind: DynamicKind | undefined;
}

/**
 * Values completed by asking the CLI itself (`rpcctl __complete KIND`), which asks the API
 * with a short timeout and prints nothing on failure. Which arguments and options take them
 * follows from their names, so a new command gets completion by naming its argument as others do.
 */
const ARG_KINDS: Record<string, DynamicKind> = { id: 'endpoints', endpoint: 'endpoints', watch_id: 'watches', payment_id: 'payments', payout_id: 'payouts' };

/**
 * The audit log's actions (docs/cabinet.md#audit-log), offered for `account audit --action`:
 * a fixed list, so the completion needs no call. The option also takes a prefix (`endpoint.`),
 * which the shell completes from these too.
 */
export const AUDIT_ACTIONS: readonly string[] = [
  'account.create', 'account.plan', 'account.policy',
  'endpoint.allowlist', 'endpoint.create', 'endpoint.pause', 'endpoint.rename', 'endpoint.resume',
  'key.allowlist', 'key.create', 'key.revoke',
  'login.link', 'login.password', 'login.sign_out_others',
  'member.invitation_renew', 'member.invite', 'member.leave', 'member.remove', 'member.reset', 'member.role',
  'payment.cancel', 'payment.create', 'payments.settings',
  'payout.approve', 'payout.cancel', 'payout.create', 'payout.transaction', 'refund.create',
  'two_factor.disable', 'two_factor.enable', 'two_factor.recovery_codes', 'two_factor.reset',
  'watch.add', 'watch.remove',
  'webhook.redeliver', 'webhook.secret_rotate', 'webhook.set', 'webhook.test',
];
/** Values of an option the shell completes from a fixed list that commander does not enforce. */
const OPTION_VALUES: Record<string, readonly string[]> = { '--action': AUDIT_ACTIONS };
const OPTION_KINDS: Record<string, DynamicKind> = { '--endpoint': 'endpoints', '--profile': 'profiles', '--network': 'networks' };

function argKindOf(key: string, name: string | undefined): DynamicKind | undefined {
  if (name === undefined) return undefined;
  // `profile use NAME`, `profile remove NAME`: the saved profiles.
  if (name === 'name' && /^profile (use|remove|rm|set)$/.test(key)) return 'profiles';
  return ARG_KINDS[name];
}

/** The option flags (long and short) that complete from the service, with what. */
function optionKinds(nodes: Node[]): Array<[string[], DynamicKind]> {
  const seen = new Map<string, [string[], DynamicKind]>();
  for (const n of nodes) {
    for (const o of n.options) {
      const kind = o.long ? OPTION_KINDS[o.long] : undefined;
      if (kind && !seen.has(o.long!)) seen.set(o.long!, [[o.long!, ...(o.short ? [o.short] : [])], kind]);
    }
  }
  return [...seen.values()];
}

/** The shell command that prints the values of a kind, silent on any failure. */
const askCli = (kind: DynamicKind) => `rpcctl __complete ${kind} 2>/dev/null`;

const FILE_OPTIONS = new Set(['--input', '--config', '--data-dir']);

function optionsOf(cmd: Command, inherited: readonly Option[]): Node['options'] {
  return [...cmd.options, ...inherited].filter((o) => !o.hidden).map((o) => ({
    long: o.long, short: o.short, takesValue: o.required || o.optional,
    choices: o.argChoices ?? [...(OPTION_VALUES[o.long ?? ''] ?? [])], file: FILE_OPTIONS.has(o.long ?? ''), description: o.description,
  })).concat([{ long: '--help', short: '-h', takesValue: false, choices: [], file: false, description: 'show help' }]);
}

/** Every command path a user can type, with what may follow it. */
export function completionModel(root: Command): Node[] {
  const nodes: Node[] = [];
  // Commander accepts an ancestor's options after a subcommand too (`admin keys list --data-dir`).
  const visit = (cmd: Command, key: string, inherited: readonly Option[]) => {
    const subs = cmd.commands.filter((c) => !(c as unknown as { _hidden?: boolean })._hidden);
    const args = (cmd as unknown as { registeredArguments: Array<{ argChoices?: string[]; name(): string }> }).registeredArguments ?? [];
    nodes.push({
      key,
      subs: subs.flatMap((c) => [c.name(), ...c.aliases()].map((name) => ({ name, description: c.description() }))),
      options: optionsOf(cmd, inherited),
      argChoices: args[0]?.argChoices ?? [],
      argKind: argKindOf(key, args[0]?.name()),
    });
    for (const c of subs) for (const name of [c.name(), ...c.aliases()]) visit(c, key ? `${key} ${name}` : name, [...cmd.options, ...inherited]);
  };
  visit(root, '', []);
  return nodes;
}

const sq = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
const flagsOf = (o: Node['options'][number]) => [o.long, o.short].filter((f): f is string => !!f);
const valueFlags = (n: Node) => n.options.filter((o) => o.takesValue).flatMap(flagsOf);

function caseTable(nodes: Node[], fn: (n: Node) => string, indent: string, style: 'sh' | 'fish'): string {
  return nodes.map((n) => style === 'sh'
    ? `${indent}${sq(n.key)}) echo ${sq(fn(n))} ;;`
    : `${indent}case ${sq(n.key)}\n${indent}  echo ${sq(fn(n))}`).join('\n');
}

/** bash and zsh: which words are subcommands, and which options take a value, per command path. */
function shTables(nodes: Node[]): string {
  return `__rpcctl_subs() {
  case "$1" in
${caseTable(nodes, (n) => n.subs.map((s) => s.name).join(' '), '    ', 'sh')}
  esac
}
__rpcctl_valopts() {
  case "$1" in
${caseTable(nodes, (n) => valueFlags(n).join(' '), '    ', 'sh')}
  esac
}`;
}

/**
 * bash and zsh: the command path typed so far into $cmdpath, skipping options and their
 * values; $skip/$prev tell whether the word being completed is an option's value.
 */
function walk(first: number, count: string, words: string): string {
  return `  for ((i = ${first}; i < ${count}; i++)); do
    w="\${${words}[i]}"
    if ((skip)); then skip=0; prev=""; continue; fi
    case "$w" in
      -*=*) continue ;;
      -*) if [[ " $(__rpcctl_valopts "$cmdpath") " == *" $w "* ]]; then skip=1; prev="$w"; fi; continue ;;
    esac
    if [[ " $(__rpcctl_subs "$cmdpath") " == *" $w "* ]]; then cmdpath="\${cmdpath:+$cmdpath }$w"; fi
  done`;
}

const HEADER = (shell: string) => `# rpcctl completion for ${shell}. Generated from the command tree by \`rpcctl completion ${shell}\`; do not edit.\n`;

function bash(nodes: Node[]): string {
  return `${HEADER('bash')}
${shTables(nodes)}
__rpcctl_opts() {
  case "$1" in
${caseTable(nodes, (n) => n.options.flatMap(flagsOf).join(' '), '    ', 'sh')}
  esac
}
__rpcctl_dynamic() {
  case "$1" in
${[...optionKinds(nodes).map(([flags, kind]) => `    ${flags.map((f) => sq(`|${f}`)).join('|')}) ${askCli(kind)} ;;`),
    ...nodes.filter((n) => n.argKind).map((n) => `    ${sq(`${n.key}|`)}) ${askCli(n.argKind!)} ;;`)].join('\n')}
  esac
}
__rpcctl_choices() {
  case "$1" in
${nodes.flatMap((n) => [
    ...n.options.filter((o) => o.choices.length).flatMap((o) => flagsOf(o).map((f) => `    ${sq(`${n.key}|${f}`)}) echo ${sq(o.choices.join(' '))} ;;`)),
    ...(n.argChoices.length ? [`    ${sq(`${n.key}|`)}) echo ${sq(n.argChoices.join(' '))} ;;`] : []),
  ]).join('\n')}
  esac
}
_rpcctl() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="" cmdpath="" w i skip=0
${walk(1, 'COMP_CWORD', 'COMP_WORDS')}
  if ((skip)); then
    case "$prev" in --input|--config|--data-dir) COMPREPLY=($(compgen -f -- "$cur")); return ;; esac
    COMPREPLY=($(compgen -W "$(__rpcctl_choices "$cmdpath|$prev") $(__rpcctl_dynamic "|$prev")" -- "$cur"))
    return
  fi
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$(__rpcctl_opts "$cmdpath")" -- "$cur"))
  else
    COMPREPLY=($(compgen -W "$(__rpcctl_subs "$cmdpath") $(__rpcctl_choices "$cmdpath|") $(__rpcctl_dynamic "$cmdpath|")" -- "$cur"))
  fi
}
complete -F _rpcctl rpcctl
`;
}

function zsh(nodes: Node[]): string {
  const describe = (items: Array<{ name: string; description: string }>) =>
    items.map((i) => sq(`${i.name.replace(/:/g, '\\:')}:${i.description}`)).join(' ');
  return `#compdef rpcctl
${HEADER('zsh')}
${shTables(nodes)}
__rpcctl_describe() {
  local -a subs opts choices
  case "$1" in
${nodes.map((n) => `    ${sq(n.key)})
      subs=(${describe(n.subs)})
      opts=(${describe(n.options.flatMap((o) => flagsOf(o).map((f) => ({ name: f, description: o.description }))))})
      choices=(${n.argChoices.map(sq).join(' ')}${n.argKind ? ` \${(f)"$(${askCli(n.argKind)})"}` : ''}) ;;`).join('\n')}
  esac
  if [[ "$PREFIX" == -* ]]; then
    _describe -t options 'option' opts
  else
    _describe -t commands 'command' subs
    (( \${#choices} )) && compadd -a choices
  fi
}
_rpcctl() {
  local cmdpath="" w i skip=0 prev=""
${walk(2, 'CURRENT', 'words')}
  if ((skip)); then
    case "$prev" in
      --input|--config|--data-dir) _files ;;
${optionKinds(nodes).map(([flags, kind]) => `      ${flags.join('|')}) compadd -- \${(f)"$(${askCli(kind)})"} ;;`).join('\n')}
${nodes.flatMap((n) => n.options.filter((o) => o.choices.length)).filter((o, i, all) => all.findIndex((x) => x.long === o.long) === i)
    .map((o) => `      ${flagsOf(o).join('|')}) compadd ${o.choices.map(sq).join(' ')} ;;`).join('\n')}
    esac
    return
  fi
  __rpcctl_describe "$cmdpath"
}
if [ "$funcstack[1]" = "_rpcctl" ]; then
  _rpcctl "$@"
else
  compdef _rpcctl rpcctl
fi
`;
}

function fish(nodes: Node[]): string {
  const lines: string[] = [];
  for (const n of nodes) {
    const at = `-n ${sq(`__rpcctl_at ${sq(n.key)}`)}`;
    for (const s of n.subs) lines.push(`complete -c rpcctl ${at} -a ${sq(s.name)} -d ${sq(s.description)}`);
    for (const c of n.argChoices) lines.push(`complete -c rpcctl ${at} -a ${sq(c)}`);
    if (n.argKind) lines.push(`complete -c rpcctl ${at} -a ${sq(`(${askCli(n.argKind)})`)}`);
    for (const o of n.options) {
      const flags = [o.long ? `-l ${o.long.slice(2)}` : '', o.short ? `-s ${o.short.slice(1)}` : ''].filter(Boolean).join(' ');
      const kind = o.long ? OPTION_KINDS[o.long] : undefined;
      const values = o.choices.length ? ` -a ${sq(o.choices.join(' '))}` : kind ? ` -a ${sq(`(${askCli(kind)})`)}` : '';
      const value = o.file ? ' -r -F' : o.takesValue ? ` -x${values}` : '';
      lines.push(`complete -c rpcctl ${at} ${flags}${value} -d ${sq(o.description)}`);
    }
  }
  return `${HEADER('fish')}
function __rpcctl_subs
  switch "$argv[1]"
${caseTable(nodes, (n) => n.subs.map((s) => s.name).join(' '), '    ', 'fish')}
  end
end

function __rpcctl_valopts
  switch "$argv[1]"
${caseTable(nodes, (n) => valueFlags(n).join(' '), '    ', 'fish')}
  end
end

# The command path typed so far ("endpoints allowlist"), skipping options and their values.
function __rpcctl_path
  set -l words (commandline -opc)
  set -e words[1]
  set -l cmdpath ''
  set -l skip 0
  for w in $words
    if test $skip = 1
      set skip 0
      continue
    end
    switch $w
      case '-*=*'
        continue
      case '-*'
        if contains -- $w (string split ' ' -- (__rpcctl_valopts "$cmdpath"))
          set skip 1
        end
        continue
    end
    if contains -- $w (string split ' ' -- (__rpcctl_subs "$cmdpath"))
      set cmdpath (string trim -- "$cmdpath $w")
    end
  end
  echo $cmdpath
end

function __rpcctl_at
  set -l p (__rpcctl_path)
  test "$p" = "$argv[1]"
end

complete -c rpcctl -f
${lines.join('\n')}
`;
}

export function completionScript(root: Command, shell: 'bash' | 'zsh' | 'fish'): string {
  const nodes = completionModel(root);
  return shell === 'bash' ? bash(nodes) : shell === 'zsh' ? zsh(nodes) : fish(nodes);
}
