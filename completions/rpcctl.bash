# rpcctl completion for bash. Generated from the command tree by `rpcctl completion bash`; do not edit.

__rpcctl_subs() {
  case "$1" in
    '') echo 'init profile account usage networks endpoints ep watch events webhook payments rpc api serve admin completion' ;;
    'init') echo '' ;;
    'profile') echo 'add list ls use remove rm' ;;
    'profile add') echo '' ;;
    'profile list') echo '' ;;
    'profile ls') echo '' ;;
    'profile use') echo '' ;;
    'profile remove') echo '' ;;
    'profile rm') echo '' ;;
    'account') echo '' ;;
    'usage') echo '' ;;
    'networks') echo '' ;;
    'endpoints') echo 'list ls get create pause resume usage allowlist' ;;
    'endpoints list') echo '' ;;
    'endpoints ls') echo '' ;;
    'endpoints get') echo '' ;;
    'endpoints create') echo '' ;;
    'endpoints pause') echo '' ;;
    'endpoints resume') echo '' ;;
    'endpoints usage') echo '' ;;
    'endpoints allowlist') echo 'set add remove rm clear' ;;
    'endpoints allowlist set') echo '' ;;
    'endpoints allowlist add') echo '' ;;
    'endpoints allowlist remove') echo '' ;;
    'endpoints allowlist rm') echo '' ;;
    'endpoints allowlist clear') echo '' ;;
    'ep') echo 'list ls get create pause resume usage allowlist' ;;
    'ep list') echo '' ;;
    'ep ls') echo '' ;;
    'ep get') echo '' ;;
    'ep create') echo '' ;;
    'ep pause') echo '' ;;
    'ep resume') echo '' ;;
    'ep usage') echo '' ;;
    'ep allowlist') echo 'set add remove rm clear' ;;
    'ep allowlist set') echo '' ;;
    'ep allowlist add') echo '' ;;
    'ep allowlist remove') echo '' ;;
    'ep allowlist rm') echo '' ;;
    'ep allowlist clear') echo '' ;;
    'watch') echo 'add list ls remove rm status' ;;
    'watch add') echo '' ;;
    'watch list') echo '' ;;
    'watch ls') echo '' ;;
    'watch remove') echo '' ;;
    'watch rm') echo '' ;;
    'watch status') echo '' ;;
    'events') echo '' ;;
    'webhook') echo 'get set test deliveries redeliver listen' ;;
    'webhook get') echo '' ;;
    'webhook set') echo '' ;;
    'webhook test') echo '' ;;
    'webhook deliveries') echo '' ;;
    'webhook redeliver') echo '' ;;
    'webhook listen') echo '' ;;
    'payments') echo 'create get list ls cancel watch settings' ;;
    'payments create') echo '' ;;
    'payments get') echo '' ;;
    'payments list') echo '' ;;
    'payments ls') echo '' ;;
    'payments cancel') echo '' ;;
    'payments watch') echo '' ;;
    'payments settings') echo '' ;;
    'rpc') echo '' ;;
    'api') echo '' ;;
    'serve') echo '' ;;
    'admin') echo 'accounts login-link keys webhook-secret plans upstreams networks aml' ;;
    'admin accounts') echo 'create list ls get set-plan set-password' ;;
    'admin accounts create') echo '' ;;
    'admin accounts list') echo '' ;;
    'admin accounts ls') echo '' ;;
    'admin accounts get') echo '' ;;
    'admin accounts set-plan') echo '' ;;
    'admin accounts set-password') echo '' ;;
    'admin login-link') echo '' ;;
    'admin keys') echo 'create list ls revoke' ;;
    'admin keys create') echo '' ;;
    'admin keys list') echo '' ;;
    'admin keys ls') echo '' ;;
    'admin keys revoke') echo '' ;;
    'admin webhook-secret') echo '' ;;
    'admin plans') echo 'list ls' ;;
    'admin plans list') echo '' ;;
    'admin plans ls') echo '' ;;
    'admin upstreams') echo '' ;;
    'admin networks') echo 'list ls' ;;
    'admin networks list') echo '' ;;
    'admin networks ls') echo '' ;;
    'admin aml') echo 'load' ;;
    'admin aml load') echo '' ;;
    'completion') echo '' ;;
  esac
}
__rpcctl_valopts() {
  case "$1" in
    '') echo '--profile -p --base-url' ;;
    'init') echo '--profile -p --base-url' ;;
    'profile') echo '--profile -p --base-url' ;;
    'profile add') echo '--api-key --profile -p --base-url' ;;
    'profile list') echo '--profile -p --base-url' ;;
    'profile ls') echo '--profile -p --base-url' ;;
    'profile use') echo '--profile -p --base-url' ;;
    'profile remove') echo '--profile -p --base-url' ;;
    'profile rm') echo '--profile -p --base-url' ;;
    'account') echo '--profile -p --base-url' ;;
    'usage') echo '--days --endpoint --profile -p --base-url' ;;
    'networks') echo '--profile -p --base-url' ;;
    'endpoints') echo '--profile -p --base-url' ;;
    'endpoints list') echo '--profile -p --base-url' ;;
    'endpoints ls') echo '--profile -p --base-url' ;;
    'endpoints get') echo '--profile -p --base-url' ;;
    'endpoints create') echo '--name --network --env --environment-id --profile -p --base-url' ;;
    'endpoints pause') echo '--profile -p --base-url' ;;
    'endpoints resume') echo '--profile -p --base-url' ;;
    'endpoints usage') echo '--days --profile -p --base-url' ;;
    'endpoints allowlist') echo '--profile -p --base-url' ;;
    'endpoints allowlist set') echo '--profile -p --base-url' ;;
    'endpoints allowlist add') echo '--profile -p --base-url' ;;
    'endpoints allowlist remove') echo '--profile -p --base-url' ;;
    'endpoints allowlist rm') echo '--profile -p --base-url' ;;
    'endpoints allowlist clear') echo '--profile -p --base-url' ;;
    'ep') echo '--profile -p --base-url' ;;
    'ep list') echo '--profile -p --base-url' ;;
    'ep ls') echo '--profile -p --base-url' ;;
    'ep get') echo '--profile -p --base-url' ;;
    'ep create') echo '--name --network --env --environment-id --profile -p --base-url' ;;
    'ep pause') echo '--profile -p --base-url' ;;
    'ep resume') echo '--profile -p --base-url' ;;
    'ep usage') echo '--days --profile -p --base-url' ;;
    'ep allowlist') echo '--profile -p --base-url' ;;
    'ep allowlist set') echo '--profile -p --base-url' ;;
    'ep allowlist add') echo '--profile -p --base-url' ;;
    'ep allowlist remove') echo '--profile -p --base-url' ;;
    'ep allowlist rm') echo '--profile -p --base-url' ;;
    'ep allowlist clear') echo '--profile -p --base-url' ;;
    'watch') echo '--profile -p --base-url' ;;
    'watch add') echo '--network --profile -p --base-url' ;;
    'watch list') echo '--network --address --profile -p --base-url' ;;
    'watch ls') echo '--network --address --profile -p --base-url' ;;
    'watch remove') echo '--profile -p --base-url' ;;
    'watch rm') echo '--profile -p --base-url' ;;
    'watch status') echo '--profile -p --base-url' ;;
    'events') echo '--type --network --after --limit -n --interval --profile -p --base-url' ;;
    'webhook') echo '--profile -p --base-url' ;;
    'webhook get') echo '--profile -p --base-url' ;;
    'webhook set') echo '--url --payment --payout --block --profile -p --base-url' ;;
    'webhook test') echo '--type --network --profile -p --base-url' ;;
    'webhook deliveries') echo '--limit -n --status --event --before --profile -p --base-url' ;;
    'webhook redeliver') echo '--profile -p --base-url' ;;
    'webhook listen') echo '--port --host --forward-to --profile -p --base-url' ;;
    'payments') echo '--profile -p --base-url' ;;
    'payments create') echo '--order-id --network --amount --asset --address --expires-in --webhook-url --metadata --profile -p --base-url' ;;
    'payments get') echo '--profile -p --base-url' ;;
    'payments list') echo '--status --network --order-id --limit -n --profile -p --base-url' ;;
    'payments ls') echo '--status --network --order-id --limit -n --profile -p --base-url' ;;
    'payments cancel') echo '--profile -p --base-url' ;;
    'payments watch') echo '--interval --profile -p --base-url' ;;
    'payments settings') echo '--xpub --aml-fail-at --tolerance-bps --profile -p --base-url' ;;
    'rpc') echo '--profile -p --base-url' ;;
    'api') echo '--data -d --input --profile -p --base-url' ;;
    'serve') echo '--config --data-dir --database --redis --log-format --log-level --profile -p --base-url' ;;
    'admin') echo '--config --data-dir --database --profile -p --base-url' ;;
    'admin accounts') echo '--config --data-dir --database --profile -p --base-url' ;;
    'admin accounts create') echo '--plan --name --email --config --data-dir --database --profile -p --base-url' ;;
    'admin accounts list') echo '--config --data-dir --database --profile -p --base-url' ;;
    'admin accounts ls') echo '--config --data-dir --database --profile -p --base-url' ;;
    'admin accounts get') echo '--config --data-dir --database --profile -p --base-url' ;;
    'admin accounts set-plan') echo '--plan --config --data-dir --database --profile -p --base-url' ;;
    'admin accounts set-password') echo '--email --config --data-dir --database --profile -p --base-url' ;;
    'admin login-link') echo '--account --base-url --config --data-dir --database --profile -p --base-url' ;;
    'admin keys') echo '--config --data-dir --database --profile -p --base-url' ;;
    'admin keys create') echo '--account --allowed-ip --name --config --data-dir --database --profile -p --base-url' ;;
    'admin keys list') echo '--account --config --data-dir --database --profile -p --base-url' ;;
    'admin keys ls') echo '--account --config --data-dir --database --profile -p --base-url' ;;
    'admin keys revoke') echo '--config --data-dir --database --profile -p --base-url' ;;
    'admin webhook-secret') echo '--account --config --data-dir --database --profile -p --base-url' ;;
    'admin plans') echo '--config --data-dir --database --profile -p --base-url' ;;
    'admin plans list') echo '--config --data-dir --database --profile -p --base-url' ;;
    'admin plans ls') echo '--config --data-dir --database --profile -p --base-url' ;;
    'admin upstreams') echo '--config --data-dir --database --profile -p --base-url' ;;
    'admin networks') echo '--config --data-dir --database --profile -p --base-url' ;;
    'admin networks list') echo '--config --data-dir --database --profile -p --base-url' ;;
    'admin networks ls') echo '--config --data-dir --database --profile -p --base-url' ;;
    'admin aml') echo '--config --data-dir --database --profile -p --base-url' ;;
    'admin aml load') echo '--config --data-dir --database --profile -p --base-url' ;;
    'completion') echo '--profile -p --base-url' ;;
  esac
}
__rpcctl_opts() {
  case "$1" in
    '') echo '--version -v --json --no-color --profile -p --base-url --help -h' ;;
    'init') echo '--version -v --json --no-color --profile -p --base-url --help -h' ;;
    'profile') echo '--version -v --json --no-color --profile -p --base-url --help -h' ;;
    'profile add') echo '--api-key --no-verify --version -v --json --no-color --profile -p --base-url --help -h' ;;
    'profile list') echo '--version -v --json --no-color --profile -p --base-url --help -h' ;;
    'profile ls') echo '--version -v --json --no-color --profile -p --base-url --help -h' ;;
    'profile use') echo '--version -v --json --no-color --profile -p --base-url --help -h' ;;
    'profile remove') echo '--yes -y --version -v --json --no-color --profile -p --base-url --help -h' ;;
    'profile rm') echo '--yes -y --version -v --json --no-color --profile -p --base-url --help -h' ;;
    'account') echo '--version -v --json --no-color --profile -p --base-url --help -h' ;;
    'usage') echo '--days --endpoint --chart --version -v --json --no-color --profile -p --base-url --help -h' ;;
    'networks') echo '--version -v --json --no-color --profile -p --base-url --help -h' ;;
    'endpoints') echo '--version -v --json --no-color --profile -p --base-url --help -h' ;;
    'endpoints list') echo '--version -v --json --no-color --profile -p --base-url --help -h' ;;
    'endpoints ls') echo '--version -v --json --no-color --profile -p --base-url --help -h' ;;
    'endpoints get') echo '--version -v --json --no-color --profile -p --base-url --help -h' ;;
    'endpoints create') echo '--name --network --env --environment-id --version -v --json --no-color --profile -p --base-url --help -h' ;;
    'endpoints pause') echo '--version -v --json --no-color --profile -p --base-url --help -h' ;;
    'endpoints resume') echo '--version -v --json --no-color --profile -p --base-url --help -h' ;;
    'endpoints usage') echo '--days --chart --version -v --json --no-color --profile -p --base-url --help -h' ;;
    'endpoints allowlist') echo '--version -v --json --no-color --profile -p --base-url --help -h' ;;
    'endpoints allowlist set') echo '--version -v --json --no-color --profile -p --base-url --help -h' ;;
    'endpoints allowlist add') echo '--version -v --json --no-color --profile -p --base-url --help -h' ;;
    'endpoints allowlist remove') echo '--version -v --json --no-color --profile -p --base-url --help -h' ;;
    'endpoints allowlist rm') echo '--version -v --json --no-color --profile -p --base-url --help -h' ;;
    'endpoints allowlist clear') echo '--yes -y --version -v --json --no-color --profile -p --base-url --help -h' ;;
    'ep') echo '--version -v --json --no-color --profile -p --base-url --help -h' ;;
    'ep list') echo '--version -v --json --no-color --profile -p --base-url --help -h' ;;
    'ep ls') echo '--version -v --json --no-color --profile -p --base-url --help -h' ;;
    'ep get') echo '--version -v --json --no-color --profile -p --base-url --help -h' ;;
    'ep create') echo '--name --network --env --environment-id --version -v --json --no-color --profile -p --base-url --help -h' ;;
    'ep pause') echo '--version -v --json --no-color --profile -p --base-url --help -h' ;;
    'ep resume') echo '--version -v --json --no-color --profile -p --base-url --help -h' ;;
    'ep usage') echo '--days --chart --version -v --json --no-color --profile -p --base-url --help -h' ;;
    'ep allowlist') echo '--version -v --json --no-color --profile -p --base-url --help -h' ;;
    'ep allowlist set') echo '--version -v --json --no-color --profile -p --base-url --help -h' ;;
    'ep allowlist add') echo '--version -v --json --no-color --profile -p --base-url --help -h' ;;
    'ep allowlist remove') echo '--version -v --json --no-color --profile -p --base-url --help -h' ;;
    'ep allowlist rm') echo '--version -v --json --no-color --profile -p --base-url --help -h' ;;
    'ep allowlist clear') echo '--yes -y --version -v --json --no-color --profile -p --base-url --help -h' ;;
    'watch') echo '--version -v --json --no-color --profile -p --base-url --help -h' ;;
    'watch add') echo '--network --version -v --json --no-color --profile -p --base-url --help -h' ;;
    'watch list') echo '--network --address --version -v --json --no-color --profile -p --base-url --help -h' ;;
    'watch ls') echo '--network --address --version -v --json --no-color --profile -p --base-url --help -h' ;;
    'watch remove') echo '--yes -y --version -v --json --no-color --profile -p --base-url --help -h' ;;
    'watch rm') echo '--yes -y --version -v --json --no-color --profile -p --base-url --help -h' ;;
    'watch status') echo '--version -v --json --no-color --profile -p --base-url --help -h' ;;
    'events') echo '--follow -f --type --network --after --limit -n --interval --version -v --json --no-color --profile -p --base-url --help -h' ;;
    'webhook') echo '--version -v --json --no-color --profile -p --base-url --help -h' ;;
    'webhook get') echo '--version -v --json --no-color --profile -p --base-url --help -h' ;;
    'webhook set') echo '--url --enable --disable --payment --no-payment --payout --no-payout --block --no-block --version -v --json --no-color --profile -p --base-url --help -h' ;;
    'webhook test') echo '--type --network --version -v --json --no-color --profile -p --base-url --help -h' ;;
    'webhook deliveries') echo '--limit -n --status --event --before --version -v --json --no-color --profile -p --base-url --help -h' ;;
    'webhook redeliver') echo '--version -v --json --no-color --profile -p --base-url --help -h' ;;
    'webhook listen') echo '--port --host --forward-to --version -v --json --no-color --profile -p --base-url --help -h' ;;
    'payments') echo '--version -v --json --no-color --profile -p --base-url --help -h' ;;
    'payments create') echo '--order-id --network --amount --asset --address --expires-in --webhook-url --metadata --version -v --json --no-color --profile -p --base-url --help -h' ;;
    'payments get') echo '--version -v --json --no-color --profile -p --base-url --help -h' ;;
    'payments list') echo '--status --network --order-id --limit -n --version -v --json --no-color --profile -p --base-url --help -h' ;;
    'payments ls') echo '--status --network --order-id --limit -n --version -v --json --no-color --profile -p --base-url --help -h' ;;
    'payments cancel') echo '--yes -y --version -v --json --no-color --profile -p --base-url --help -h' ;;
    'payments watch') echo '--interval --version -v --json --no-color --profile -p --base-url --help -h' ;;
    'payments settings') echo '--xpub --aml-fail-at --tolerance-bps --accept-late --no-accept-late --version -v --json --no-color --profile -p --base-url --help -h' ;;
    'rpc') echo '--version -v --json --no-color --profile -p --base-url --help -h' ;;
    'api') echo '--data -d --input --version -v --json --no-color --profile -p --base-url --help -h' ;;
    'serve') echo '--config --data-dir --database --redis --log-format --log-level --version -v --json --no-color --profile -p --base-url --help -h' ;;
    'admin') echo '--config --data-dir --database --version -v --json --no-color --profile -p --base-url --help -h' ;;
    'admin accounts') echo '--config --data-dir --database --version -v --json --no-color --profile -p --base-url --help -h' ;;
    'admin accounts create') echo '--plan --name --email --no-password --config --data-dir --database --version -v --json --no-color --profile -p --base-url --help -h' ;;
    'admin accounts list') echo '--config --data-dir --database --version -v --json --no-color --profile -p --base-url --help -h' ;;
    'admin accounts ls') echo '--config --data-dir --database --version -v --json --no-color --profile -p --base-url --help -h' ;;
    'admin accounts get') echo '--config --data-dir --database --version -v --json --no-color --profile -p --base-url --help -h' ;;
    'admin accounts set-plan') echo '--plan --config --data-dir --database --version -v --json --no-color --profile -p --base-url --help -h' ;;
    'admin accounts set-password') echo '--email --config --data-dir --database --version -v --json --no-color --profile -p --base-url --help -h' ;;
    'admin login-link') echo '--account --base-url --config --data-dir --database --version -v --json --no-color --profile -p --base-url --help -h' ;;
    'admin keys') echo '--config --data-dir --database --version -v --json --no-color --profile -p --base-url --help -h' ;;
    'admin keys create') echo '--account --allowed-ip --name --config --data-dir --database --version -v --json --no-color --profile -p --base-url --help -h' ;;
    'admin keys list') echo '--account --config --data-dir --database --version -v --json --no-color --profile -p --base-url --help -h' ;;
    'admin keys ls') echo '--account --config --data-dir --database --version -v --json --no-color --profile -p --base-url --help -h' ;;
    'admin keys revoke') echo '--config --data-dir --database --version -v --json --no-color --profile -p --base-url --help -h' ;;
    'admin webhook-secret') echo '--account --rotate --config --data-dir --database --version -v --json --no-color --profile -p --base-url --help -h' ;;
    'admin plans') echo '--config --data-dir --database --version -v --json --no-color --profile -p --base-url --help -h' ;;
    'admin plans list') echo '--config --data-dir --database --version -v --json --no-color --profile -p --base-url --help -h' ;;
    'admin plans ls') echo '--config --data-dir --database --version -v --json --no-color --profile -p --base-url --help -h' ;;
    'admin upstreams') echo '--config --data-dir --database --version -v --json --no-color --profile -p --base-url --help -h' ;;
    'admin networks') echo '--config --data-dir --database --version -v --json --no-color --profile -p --base-url --help -h' ;;
    'admin networks list') echo '--config --data-dir --database --version -v --json --no-color --profile -p --base-url --help -h' ;;
    'admin networks ls') echo '--config --data-dir --database --version -v --json --no-color --profile -p --base-url --help -h' ;;
    'admin aml') echo '--config --data-dir --database --version -v --json --no-color --profile -p --base-url --help -h' ;;
    'admin aml load') echo '--config --data-dir --database --version -v --json --no-color --profile -p --base-url --help -h' ;;
    'completion') echo '--version -v --json --no-color --profile -p --base-url --help -h' ;;
  esac
}
__rpcctl_choices() {
  case "$1" in
    'usage|--days') echo '7 30 90' ;;
    'endpoints usage|--days') echo '7 30 90' ;;
    'ep usage|--days') echo '7 30 90' ;;
    'events|--type') echo 'payment payout other block' ;;
    'webhook test|--type') echo 'payment payout other block' ;;
    'webhook deliveries|--status') echo 'pending delivered failed cancelled' ;;
    'payments list|--status') echo 'pending seen aml_check paid failed underpaid expired' ;;
    'payments ls|--status') echo 'pending seen aml_check paid failed underpaid expired' ;;
    'payments settings|--aml-fail-at') echo 'medium high severe' ;;
    'completion|') echo 'bash zsh fish' ;;
  esac
}
_rpcctl() {
  local cur="${COMP_WORDS[COMP_CWORD]}" prev="" cmdpath="" w i skip=0
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="${COMP_WORDS[i]}"
    if ((skip)); then skip=0; prev=""; continue; fi
    case "$w" in
      -*=*) continue ;;
      -*) if [[ " $(__rpcctl_valopts "$cmdpath") " == *" $w "* ]]; then skip=1; prev="$w"; fi; continue ;;
    esac
    if [[ " $(__rpcctl_subs "$cmdpath") " == *" $w "* ]]; then cmdpath="${cmdpath:+$cmdpath }$w"; fi
  done
  if ((skip)); then
    case "$prev" in --input|--config|--data-dir) COMPREPLY=($(compgen -f -- "$cur")); return ;; esac
    COMPREPLY=($(compgen -W "$(__rpcctl_choices "$cmdpath|$prev")" -- "$cur"))
    return
  fi
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$(__rpcctl_opts "$cmdpath")" -- "$cur"))
  else
    COMPREPLY=($(compgen -W "$(__rpcctl_subs "$cmdpath") $(__rpcctl_choices "$cmdpath|")" -- "$cur"))
  fi
}
complete -F _rpcctl rpcctl
