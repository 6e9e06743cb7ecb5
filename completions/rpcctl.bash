# rpcctl completion for bash. Generated from the command tree by `rpcctl completion bash`; do not edit.

__rpcctl_subs() {
  case "$1" in
    '') echo 'init auth profile account usage networks endpoints ep watch events webhook payments rpc api serve admin completion' ;;
    'init') echo '' ;;
    'auth') echo 'status' ;;
    'auth status') echo '' ;;
    'profile') echo 'add list ls set use remove rm' ;;
    'profile add') echo '' ;;
    'profile list') echo '' ;;
    'profile ls') echo '' ;;
    'profile set') echo '' ;;
    'profile use') echo '' ;;
    'profile remove') echo '' ;;
    'profile rm') echo '' ;;
    'account') echo 'audit' ;;
    'account audit') echo '' ;;
    'usage') echo '' ;;
    'networks') echo '' ;;
    'endpoints') echo 'list ls get create rename pause resume usage logs allowlist' ;;
    'endpoints list') echo '' ;;
    'endpoints ls') echo '' ;;
    'endpoints get') echo '' ;;
    'endpoints create') echo '' ;;
    'endpoints rename') echo '' ;;
    'endpoints pause') echo '' ;;
    'endpoints resume') echo '' ;;
    'endpoints usage') echo '' ;;
    'endpoints logs') echo '' ;;
    'endpoints allowlist') echo 'set add remove rm clear' ;;
    'endpoints allowlist set') echo '' ;;
    'endpoints allowlist add') echo '' ;;
    'endpoints allowlist remove') echo '' ;;
    'endpoints allowlist rm') echo '' ;;
    'endpoints allowlist clear') echo '' ;;
    'ep') echo 'list ls get create rename pause resume usage logs allowlist' ;;
    'ep list') echo '' ;;
    'ep ls') echo '' ;;
    'ep get') echo '' ;;
    'ep create') echo '' ;;
    'ep rename') echo '' ;;
    'ep pause') echo '' ;;
    'ep resume') echo '' ;;
    'ep usage') echo '' ;;
    'ep logs') echo '' ;;
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
    'admin') echo 'accounts login-link members keys webhook-secret plans upstreams networks aml rates' ;;
    'admin accounts') echo 'create list ls get set-plan set-password reset-2fa' ;;
    'admin accounts create') echo '' ;;
    'admin accounts list') echo '' ;;
    'admin accounts ls') echo '' ;;
    'admin accounts get') echo '' ;;
    'admin accounts set-plan') echo '' ;;
    'admin accounts set-password') echo '' ;;
    'admin accounts reset-2fa') echo '' ;;
    'admin login-link') echo '' ;;
    'admin members') echo 'list ls reset' ;;
    'admin members list') echo '' ;;
    'admin members ls') echo '' ;;
    'admin members reset') echo '' ;;
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
    'admin rates') echo 'set list ls' ;;
    'admin rates set') echo '' ;;
    'admin rates list') echo '' ;;
    'admin rates ls') echo '' ;;
    'completion') echo '' ;;
  esac
}
__rpcctl_valopts() {
  case "$1" in
    '') echo '--jq -q --profile -p --base-url --timeout' ;;
    'init') echo '--plan --data-dir --config --jq -q --profile -p --base-url --timeout' ;;
    'auth') echo '--jq -q --profile -p --base-url --timeout' ;;
    'auth status') echo '--jq -q --profile -p --base-url --timeout' ;;
    'profile') echo '--jq -q --profile -p --base-url --timeout' ;;
    'profile add') echo '--api-key --jq -q --profile -p --base-url --timeout' ;;
    'profile list') echo '--jq -q --profile -p --base-url --timeout' ;;
    'profile ls') echo '--jq -q --profile -p --base-url --timeout' ;;
    'profile set') echo '--jq -q --profile -p --base-url --timeout' ;;
    'profile use') echo '--jq -q --profile -p --base-url --timeout' ;;
    'profile remove') echo '--jq -q --profile -p --base-url --timeout' ;;
    'profile rm') echo '--jq -q --profile -p --base-url --timeout' ;;
    'account') echo '--jq -q --profile -p --base-url --timeout' ;;
    'account audit') echo '--limit -n --action --before --jq -q --profile -p --base-url --timeout' ;;
    'usage') echo '--days --endpoint --jq -q --profile -p --base-url --timeout' ;;
    'networks') echo '--jq -q --profile -p --base-url --timeout' ;;
    'endpoints') echo '--jq -q --profile -p --base-url --timeout' ;;
    'endpoints list') echo '--jq -q --profile -p --base-url --timeout' ;;
    'endpoints ls') echo '--jq -q --profile -p --base-url --timeout' ;;
    'endpoints get') echo '--jq -q --profile -p --base-url --timeout' ;;
    'endpoints create') echo '--name --network --env --environment-id --jq -q --profile -p --base-url --timeout' ;;
    'endpoints rename') echo '--jq -q --profile -p --base-url --timeout' ;;
    'endpoints pause') echo '--jq -q --profile -p --base-url --timeout' ;;
    'endpoints resume') echo '--jq -q --profile -p --base-url --timeout' ;;
    'endpoints usage') echo '--days --jq -q --profile -p --base-url --timeout' ;;
    'endpoints logs') echo '--status --method --limit -n --interval --jq -q --profile -p --base-url --timeout' ;;
    'endpoints allowlist') echo '--jq -q --profile -p --base-url --timeout' ;;
    'endpoints allowlist set') echo '--jq -q --profile -p --base-url --timeout' ;;
    'endpoints allowlist add') echo '--jq -q --profile -p --base-url --timeout' ;;
    'endpoints allowlist remove') echo '--jq -q --profile -p --base-url --timeout' ;;
    'endpoints allowlist rm') echo '--jq -q --profile -p --base-url --timeout' ;;
    'endpoints allowlist clear') echo '--jq -q --profile -p --base-url --timeout' ;;
    'ep') echo '--jq -q --profile -p --base-url --timeout' ;;
    'ep list') echo '--jq -q --profile -p --base-url --timeout' ;;
    'ep ls') echo '--jq -q --profile -p --base-url --timeout' ;;
    'ep get') echo '--jq -q --profile -p --base-url --timeout' ;;
    'ep create') echo '--name --network --env --environment-id --jq -q --profile -p --base-url --timeout' ;;
    'ep rename') echo '--jq -q --profile -p --base-url --timeout' ;;
    'ep pause') echo '--jq -q --profile -p --base-url --timeout' ;;
    'ep resume') echo '--jq -q --profile -p --base-url --timeout' ;;
    'ep usage') echo '--days --jq -q --profile -p --base-url --timeout' ;;
    'ep logs') echo '--status --method --limit -n --interval --jq -q --profile -p --base-url --timeout' ;;
    'ep allowlist') echo '--jq -q --profile -p --base-url --timeout' ;;
    'ep allowlist set') echo '--jq -q --profile -p --base-url --timeout' ;;
    'ep allowlist add') echo '--jq -q --profile -p --base-url --timeout' ;;
    'ep allowlist remove') echo '--jq -q --profile -p --base-url --timeout' ;;
    'ep allowlist rm') echo '--jq -q --profile -p --base-url --timeout' ;;
    'ep allowlist clear') echo '--jq -q --profile -p --base-url --timeout' ;;
    'watch') echo '--jq -q --profile -p --base-url --timeout' ;;
    'watch add') echo '--network --jq -q --profile -p --base-url --timeout' ;;
    'watch list') echo '--network --address --jq -q --profile -p --base-url --timeout' ;;
    'watch ls') echo '--network --address --jq -q --profile -p --base-url --timeout' ;;
    'watch remove') echo '--jq -q --profile -p --base-url --timeout' ;;
    'watch rm') echo '--jq -q --profile -p --base-url --timeout' ;;
    'watch status') echo '--jq -q --profile -p --base-url --timeout' ;;
    'events') echo '--type --network --after --limit -n --interval --jq -q --profile -p --base-url --timeout' ;;
    'webhook') echo '--jq -q --profile -p --base-url --timeout' ;;
    'webhook get') echo '--jq -q --profile -p --base-url --timeout' ;;
    'webhook set') echo '--url --payment --payout --block --jq -q --profile -p --base-url --timeout' ;;
    'webhook test') echo '--type --network --jq -q --profile -p --base-url --timeout' ;;
    'webhook deliveries') echo '--limit -n --status --event --before --jq -q --profile -p --base-url --timeout' ;;
    'webhook redeliver') echo '--jq -q --profile -p --base-url --timeout' ;;
    'webhook listen') echo '--port --host --forward-to --jq -q --profile -p --base-url --timeout' ;;
    'payments') echo '--jq -q --profile -p --base-url --timeout' ;;
    'payments create') echo '--order-id --network --amount --price --currency --asset --address --expires-in --webhook-url --metadata --jq -q --profile -p --base-url --timeout' ;;
    'payments get') echo '--jq -q --profile -p --base-url --timeout' ;;
    'payments list') echo '--status --network --order-id --limit -n --jq -q --profile -p --base-url --timeout' ;;
    'payments ls') echo '--status --network --order-id --limit -n --jq -q --profile -p --base-url --timeout' ;;
    'payments cancel') echo '--jq -q --profile -p --base-url --timeout' ;;
    'payments watch') echo '--interval --jq -q --profile -p --base-url --timeout' ;;
    'payments settings') echo '--xpub --xpub-utxo --xpub-tron --aml-fail-at --tolerance-bps --display-name --redirect-url --jq -q --profile -p --base-url --timeout' ;;
    'rpc') echo '--jq -q --profile -p --base-url --timeout' ;;
    'api') echo '--data -d --input --jq -q --profile -p --base-url --timeout' ;;
    'serve') echo '--config --data-dir --host --port --gateway-port --database --redis --log-format --log-level --jq -q --profile -p --base-url --timeout' ;;
    'admin') echo '--config --data-dir --database --redis --jq -q --profile -p --base-url --timeout' ;;
    'admin accounts') echo '--config --data-dir --database --redis --jq -q --profile -p --base-url --timeout' ;;
    'admin accounts create') echo '--plan --name --email --config --data-dir --database --redis --jq -q --profile -p --base-url --timeout' ;;
    'admin accounts list') echo '--config --data-dir --database --redis --jq -q --profile -p --base-url --timeout' ;;
    'admin accounts ls') echo '--config --data-dir --database --redis --jq -q --profile -p --base-url --timeout' ;;
    'admin accounts get') echo '--config --data-dir --database --redis --jq -q --profile -p --base-url --timeout' ;;
    'admin accounts set-plan') echo '--plan --config --data-dir --database --redis --jq -q --profile -p --base-url --timeout' ;;
    'admin accounts set-password') echo '--email --config --data-dir --database --redis --jq -q --profile -p --base-url --timeout' ;;
    'admin accounts reset-2fa') echo '--config --data-dir --database --redis --jq -q --profile -p --base-url --timeout' ;;
    'admin login-link') echo '--email --account --base-url --config --data-dir --database --redis --jq -q --profile -p --base-url --timeout' ;;
    'admin members') echo '--config --data-dir --database --redis --jq -q --profile -p --base-url --timeout' ;;
    'admin members list') echo '--account --config --data-dir --database --redis --jq -q --profile -p --base-url --timeout' ;;
    'admin members ls') echo '--account --config --data-dir --database --redis --jq -q --profile -p --base-url --timeout' ;;
    'admin members reset') echo '--account --email --base-url --config --data-dir --database --redis --jq -q --profile -p --base-url --timeout' ;;
    'admin keys') echo '--config --data-dir --database --redis --jq -q --profile -p --base-url --timeout' ;;
    'admin keys create') echo '--account --allowed-ip --name --config --data-dir --database --redis --jq -q --profile -p --base-url --timeout' ;;
    'admin keys list') echo '--account --config --data-dir --database --redis --jq -q --profile -p --base-url --timeout' ;;
    'admin keys ls') echo '--account --config --data-dir --database --redis --jq -q --profile -p --base-url --timeout' ;;
    'admin keys revoke') echo '--config --data-dir --database --redis --jq -q --profile -p --base-url --timeout' ;;
    'admin webhook-secret') echo '--account --config --data-dir --database --redis --jq -q --profile -p --base-url --timeout' ;;
    'admin plans') echo '--config --data-dir --database --redis --jq -q --profile -p --base-url --timeout' ;;
    'admin plans list') echo '--config --data-dir --database --redis --jq -q --profile -p --base-url --timeout' ;;
    'admin plans ls') echo '--config --data-dir --database --redis --jq -q --profile -p --base-url --timeout' ;;
    'admin upstreams') echo '--config --data-dir --database --redis --jq -q --profile -p --base-url --timeout' ;;
    'admin networks') echo '--config --data-dir --database --redis --jq -q --profile -p --base-url --timeout' ;;
    'admin networks list') echo '--config --data-dir --database --redis --jq -q --profile -p --base-url --timeout' ;;
    'admin networks ls') echo '--config --data-dir --database --redis --jq -q --profile -p --base-url --timeout' ;;
    'admin aml') echo '--config --data-dir --database --redis --jq -q --profile -p --base-url --timeout' ;;
    'admin aml load') echo '--config --data-dir --database --redis --jq -q --profile -p --base-url --timeout' ;;
    'admin rates') echo '--config --data-dir --database --redis --jq -q --profile -p --base-url --timeout' ;;
    'admin rates set') echo '--config --data-dir --database --redis --jq -q --profile -p --base-url --timeout' ;;
    'admin rates list') echo '--config --data-dir --database --redis --jq -q --profile -p --base-url --timeout' ;;
    'admin rates ls') echo '--config --data-dir --database --redis --jq -q --profile -p --base-url --timeout' ;;
    'completion') echo '--jq -q --profile -p --base-url --timeout' ;;
  esac
}
__rpcctl_opts() {
  case "$1" in
    '') echo '--version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'init') echo '--local --plan --data-dir --config --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'auth') echo '--version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'auth status') echo '--version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'profile') echo '--version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'profile add') echo '--api-key --no-verify --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'profile list') echo '--version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'profile ls') echo '--version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'profile set') echo '--version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'profile use') echo '--version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'profile remove') echo '--yes -y --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'profile rm') echo '--yes -y --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'account') echo '--version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'account audit') echo '--limit -n --action --before --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'usage') echo '--days --endpoint --chart --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'networks') echo '--version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'endpoints') echo '--version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'endpoints list') echo '--version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'endpoints ls') echo '--version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'endpoints get') echo '--version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'endpoints create') echo '--name --network --env --environment-id --allow-duplicate --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'endpoints rename') echo '--version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'endpoints pause') echo '--version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'endpoints resume') echo '--version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'endpoints usage') echo '--days --chart --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'endpoints logs') echo '--follow -f --status --method --limit -n --interval --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'endpoints allowlist') echo '--version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'endpoints allowlist set') echo '--version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'endpoints allowlist add') echo '--version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'endpoints allowlist remove') echo '--yes -y --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'endpoints allowlist rm') echo '--yes -y --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'endpoints allowlist clear') echo '--yes -y --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'ep') echo '--version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'ep list') echo '--version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'ep ls') echo '--version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'ep get') echo '--version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'ep create') echo '--name --network --env --environment-id --allow-duplicate --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'ep rename') echo '--version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'ep pause') echo '--version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'ep resume') echo '--version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'ep usage') echo '--days --chart --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'ep logs') echo '--follow -f --status --method --limit -n --interval --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'ep allowlist') echo '--version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'ep allowlist set') echo '--version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'ep allowlist add') echo '--version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'ep allowlist remove') echo '--yes -y --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'ep allowlist rm') echo '--yes -y --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'ep allowlist clear') echo '--yes -y --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'watch') echo '--version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'watch add') echo '--network --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'watch list') echo '--network --address --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'watch ls') echo '--network --address --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'watch remove') echo '--yes -y --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'watch rm') echo '--yes -y --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'watch status') echo '--version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'events') echo '--follow -f --type --network --after --limit -n --interval --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'webhook') echo '--version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'webhook get') echo '--version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'webhook set') echo '--url --enable --disable --payment --no-payment --payout --no-payout --block --no-block --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'webhook test') echo '--type --network --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'webhook deliveries') echo '--limit -n --status --event --before --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'webhook redeliver') echo '--version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'webhook listen') echo '--port --host --forward-to --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'payments') echo '--version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'payments create') echo '--order-id --network --amount --price --currency --asset --address --expires-in --webhook-url --metadata --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'payments get') echo '--version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'payments list') echo '--status --network --order-id --limit -n --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'payments ls') echo '--status --network --order-id --limit -n --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'payments cancel') echo '--yes -y --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'payments watch') echo '--interval --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'payments settings') echo '--xpub --xpub-utxo --xpub-tron --aml-fail-at --tolerance-bps --accept-late --no-accept-late --display-name --redirect-url --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'rpc') echo '--version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'api') echo '--data -d --input --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'serve') echo '--config --data-dir --host --port --gateway-port --dev --database --redis --log-format --log-level --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'admin') echo '--config --data-dir --database --redis --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'admin accounts') echo '--config --data-dir --database --redis --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'admin accounts create') echo '--plan --name --email --no-password --config --data-dir --database --redis --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'admin accounts list') echo '--config --data-dir --database --redis --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'admin accounts ls') echo '--config --data-dir --database --redis --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'admin accounts get') echo '--config --data-dir --database --redis --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'admin accounts set-plan') echo '--plan --config --data-dir --database --redis --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'admin accounts set-password') echo '--email --config --data-dir --database --redis --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'admin accounts reset-2fa') echo '--config --data-dir --database --redis --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'admin login-link') echo '--email --account --base-url --config --data-dir --database --redis --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'admin members') echo '--config --data-dir --database --redis --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'admin members list') echo '--account --config --data-dir --database --redis --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'admin members ls') echo '--account --config --data-dir --database --redis --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'admin members reset') echo '--account --email --password-link --remove-2fa --base-url --config --data-dir --database --redis --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'admin keys') echo '--config --data-dir --database --redis --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'admin keys create') echo '--account --allowed-ip --name --config --data-dir --database --redis --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'admin keys list') echo '--account --config --data-dir --database --redis --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'admin keys ls') echo '--account --config --data-dir --database --redis --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'admin keys revoke') echo '--yes -y --config --data-dir --database --redis --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'admin webhook-secret') echo '--account --rotate --yes -y --config --data-dir --database --redis --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'admin plans') echo '--config --data-dir --database --redis --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'admin plans list') echo '--config --data-dir --database --redis --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'admin plans ls') echo '--config --data-dir --database --redis --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'admin upstreams') echo '--config --data-dir --database --redis --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'admin networks') echo '--config --data-dir --database --redis --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'admin networks list') echo '--config --data-dir --database --redis --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'admin networks ls') echo '--config --data-dir --database --redis --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'admin aml') echo '--config --data-dir --database --redis --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'admin aml load') echo '--config --data-dir --database --redis --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'admin rates') echo '--config --data-dir --database --redis --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'admin rates set') echo '--config --data-dir --database --redis --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'admin rates list') echo '--config --data-dir --database --redis --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'admin rates ls') echo '--config --data-dir --database --redis --version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
    'completion') echo '--version -v --json --jq -q --no-color --profile -p --base-url --timeout --help -h' ;;
  esac
}
__rpcctl_dynamic() {
  case "$1" in
    '|--profile'|'|-p') rpcctl __complete profiles 2>/dev/null ;;
    '|--endpoint') rpcctl __complete endpoints 2>/dev/null ;;
    '|--network') rpcctl __complete networks 2>/dev/null ;;
    'profile use|') rpcctl __complete profiles 2>/dev/null ;;
    'profile remove|') rpcctl __complete profiles 2>/dev/null ;;
    'profile rm|') rpcctl __complete profiles 2>/dev/null ;;
    'endpoints get|') rpcctl __complete endpoints 2>/dev/null ;;
    'endpoints rename|') rpcctl __complete endpoints 2>/dev/null ;;
    'endpoints pause|') rpcctl __complete endpoints 2>/dev/null ;;
    'endpoints resume|') rpcctl __complete endpoints 2>/dev/null ;;
    'endpoints usage|') rpcctl __complete endpoints 2>/dev/null ;;
    'endpoints logs|') rpcctl __complete endpoints 2>/dev/null ;;
    'endpoints allowlist|') rpcctl __complete endpoints 2>/dev/null ;;
    'endpoints allowlist set|') rpcctl __complete endpoints 2>/dev/null ;;
    'endpoints allowlist add|') rpcctl __complete endpoints 2>/dev/null ;;
    'endpoints allowlist remove|') rpcctl __complete endpoints 2>/dev/null ;;
    'endpoints allowlist rm|') rpcctl __complete endpoints 2>/dev/null ;;
    'endpoints allowlist clear|') rpcctl __complete endpoints 2>/dev/null ;;
    'ep get|') rpcctl __complete endpoints 2>/dev/null ;;
    'ep rename|') rpcctl __complete endpoints 2>/dev/null ;;
    'ep pause|') rpcctl __complete endpoints 2>/dev/null ;;
    'ep resume|') rpcctl __complete endpoints 2>/dev/null ;;
    'ep usage|') rpcctl __complete endpoints 2>/dev/null ;;
    'ep logs|') rpcctl __complete endpoints 2>/dev/null ;;
    'ep allowlist|') rpcctl __complete endpoints 2>/dev/null ;;
    'ep allowlist set|') rpcctl __complete endpoints 2>/dev/null ;;
    'ep allowlist add|') rpcctl __complete endpoints 2>/dev/null ;;
    'ep allowlist remove|') rpcctl __complete endpoints 2>/dev/null ;;
    'ep allowlist rm|') rpcctl __complete endpoints 2>/dev/null ;;
    'ep allowlist clear|') rpcctl __complete endpoints 2>/dev/null ;;
    'watch remove|') rpcctl __complete watches 2>/dev/null ;;
    'watch rm|') rpcctl __complete watches 2>/dev/null ;;
    'rpc|') rpcctl __complete endpoints 2>/dev/null ;;
  esac
}
__rpcctl_choices() {
  case "$1" in
    'usage|--days') echo '7 30 90' ;;
    'endpoints usage|--days') echo '7 30 90' ;;
    'endpoints logs|--status') echo 'all error' ;;
    'ep usage|--days') echo '7 30 90' ;;
    'ep logs|--status') echo 'all error' ;;
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
