#!/usr/bin/env bash
# The children's confinement (core/process/confine): builds the small exec wrapper over the kernel's
# Landlock, namespaces and seccomp from confine.c and ns.c with the C compiler (installs gcc through apt-get when root and missing).
# Never fails: without the wrapper the service starts, says in its banner that children are NOT
# confined, and `encoder.confinement.require` refuses to run them. Run by ensure-deps.sh.
set -uo pipefail
cd "$(dirname "$0")/.."
dir=core/process/confine
out=$dir/build/media-core-confine
[ -x "$out" ] && [ "$out" -nt "$dir/confine.c" ] && [ "$out" -nt "$dir/ns.c" ] && [ "$out" -nt "$dir/ns.h" ] && exit 0
cc="$(command -v cc || command -v gcc || true)"
if [ -z "$cc" ]; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "no C compiler: installing the Debian package gcc (for the children's confinement wrapper)" >&2
    { apt-get install -y -qq gcc libc6-dev || { apt-get update -qq && apt-get install -y -qq gcc libc6-dev; }; } >/dev/null 2>&1
    cc="$(command -v cc || command -v gcc || true)"
  fi
fi
if [ -z "$cc" ]; then
  echo "children will run NOT confined: install a C compiler (sudo apt-get install gcc) and run this again" >&2
  exit 0
fi
mkdir -p "$(dirname "$out")"
echo "building the confinement wrapper ($out)" >&2
"$cc" -O2 -Wall -Wextra -o "$out.tmp" "$dir/confine.c" "$dir/ns.c" >&2 && mv "$out.tmp" "$out" \
  || echo "the confinement wrapper did not build: children will run NOT confined" >&2
exit 0
