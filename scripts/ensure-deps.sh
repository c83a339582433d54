#!/usr/bin/env bash
# Installs what the service needs: npm packages, and ffmpeg through apt-get when root and missing.
set -euo pipefail
cd "$(dirname "$0")/.."
# SLIM=1: the slim install (README "Slim install"): only the root and the SDK, core, test kit and
# example workspaces, so RTMP's node-media-server and SRT's addon build dependencies (their own
# workspaces) stay out
slim_args=()
[ -n "${SLIM:-}" ] && slim_args=(--workspace @media-core/sdk --workspace @media-core/core --workspace @media-core/app --workspace @media-core/testkit
  --workspace http-ts-ingest --include-workspace-root)
if [ -L node_modules ]; then
  # a link to another checkout's install (a git worktree): npm ci would empty the folder it points to
  if [ package.json -nt node_modules/.package-lock.json ]; then echo "node_modules links to a shared install: not reinstalling it from here" >&2; fi
elif [ ! -d node_modules ] || [ package.json -nt node_modules/.package-lock.json ]; then
  if [ -f package-lock.json ]; then npm ci "${slim_args[@]}" --no-audit --no-fund >&2; else npm install "${slim_args[@]}" --no-audit --no-fund >&2; fi
fi
if ! command -v ffmpeg >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "ffmpeg is missing: installing the Debian package ffmpeg" >&2
    apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ffmpeg >&2
  else
    echo "ffmpeg is missing: install the Debian package 'ffmpeg' (sudo apt-get install ffmpeg), then run this again" >&2
    exit 1
  fi
fi

# the children's confinement wrapper (core/process/confine), in the slim install too
bash scripts/ensure-confine.sh
# the runtime's malloc_trim module (core/runtime/trim): memory freed after a load goes back to the system
bash scripts/ensure-trim.sh

# SRT is optional: this installs libsrt-openssl-dev and builds the plugin's addon, never failing.
[ -n "${SLIM:-}" ] || bash scripts/ensure-srt.sh

# the service runs plain JavaScript built from its TypeScript (scripts/build.mjs: only what changed
# since the last build, in about a second for everything; no compiler or stripper in the service)
"$(bash scripts/node.sh)" scripts/build.mjs
