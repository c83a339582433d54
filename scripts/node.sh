#!/usr/bin/env bash
# Prints the Node.js binary the service runs on (sourced or run): CORE_NODE when set, else the
# Node 24 that package.json pins from the npm registry (package "node", which pulls the binary
# for this platform), else a system node that is already 24 or newer. Anything older is refused:
# Node 20 gets no security fixes and cannot strip TypeScript types.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
min_major=24

major_of() { "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

pick_node() {
  if [ -n "${CORE_NODE:-}" ]; then
    if [ "$(major_of "$CORE_NODE")" -lt "$min_major" ]; then
      echo "CORE_NODE=$CORE_NODE is not Node.js $min_major or newer" >&2; return 1
    fi
    echo "$CORE_NODE"; return 0
  fi
  local bundled="$root/node_modules/node/bin/node"
  if [ -x "$bundled" ] && [ "$(major_of "$bundled")" -ge "$min_major" ]; then echo "$bundled"; return 0; fi
  local system; system="$(command -v node || true)"
  if [ -n "$system" ] && [ "$(major_of "$system")" -ge "$min_major" ]; then echo "$system"; return 0; fi
  echo "No Node.js $min_major binary: the npm package 'node' has none for $(uname -s)/$(uname -m), or it is not installed." >&2
  echo "Install Node.js $min_major or newer (e.g. a distribution package) and run with CORE_NODE=/path/to/node." >&2
  return 1
}

pick_node
