#!/usr/bin/env bash
# Builds a native addon (a folder with binding.gyp) for the Node.js the service runs on, offline:
# node-gyp gets the headers of that very runtime (the npm package node-<os>-<arch> carries them in
# include/node) and a dist-url that cannot be reached, so a missing header fails instead of
# downloading another version's. Usage: scripts/build-addon.sh ADDON_DIR  ->  ADDON_DIR/build/Release
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
addon="$(cd "${1:?usage: build-addon.sh ADDON_DIR}" && pwd)"
node_bin="$(bash "$root/scripts/node.sh")"

# The headers' folder: the runtime's own prefix (a distribution or the platform package), or the
# platform package next to the bundled `node` wrapper package.
nodedir=""
prefix="$(cd "$(dirname "$(readlink -f "$node_bin")")/.." && pwd)"
version="$("$node_bin" -p process.version)"
for dir in "$prefix" "$root"/node_modules/node/node_modules/node-*; do
  if [ -f "$dir/include/node/node_api.h" ] && grep -q "NODE_MAJOR_VERSION ${version:1:2}\b" "$dir/include/node/node_version.h"; then nodedir="$dir"; break; fi
done
if [ -z "$nodedir" ]; then
  echo "No Node.js headers for $version next to $node_bin (install the distribution's libnode-dev or use the bundled runtime)" >&2
  exit 1
fi

gyp="$(dirname "$(readlink -f "$(command -v npm)")")/../node_modules/node-gyp/bin/node-gyp.js"
[ -f "$gyp" ] || gyp="$root/node_modules/node-gyp/bin/node-gyp.js"
cd "$addon"
# The machine's npmrc may name another nodedir (e.g. /usr of the system Node 20): the environment wins.
export npm_config_nodedir="$nodedir" npm_config_offline=true
exec "$node_bin" "$gyp" rebuild --nodedir="$nodedir" --dist-url=http://127.0.0.1:9/ >&2
