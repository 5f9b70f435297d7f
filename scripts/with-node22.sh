#!/bin/sh
# Runs a command with a Node.js new enough for this project first on PATH; every npm script goes
# through it (`sh scripts/with-node22.sh vitest run`), so `npm start`/`test`/`demo`/`bench` work
# on a machine whose own Node is older (the distributions' Node 20, say).
# Why 22.18: wrangler refuses Node older than 22, and the scripts are TypeScript run by Node
# directly, which needs type stripping on by default (Node 22.18 / 23.6:
# https://nodejs.org/api/typescript.html#type-stripping).
# When the `node` on PATH is older, the `node` package of the npm registry (official Node.js
# binaries) is installed once into .tools/node22 inside this checkout, and put first on PATH.
# POSIX sh (no bashisms); writes nowhere outside the checkout but npm's own cache.
# Usage: sh scripts/with-node22.sh COMMAND [ARGS...]   (runs COMMAND with PATH set)
#        sh scripts/with-node22.sh --bin-dir           (prints the directory to put first on PATH,
#                                                       or nothing when the machine's Node will do)
set -eu

NODE_VERSION=22.23.3
root=$(CDPATH='' cd -- "$(dirname -- "$0")/.." && pwd -P)
tools="$root/.tools/node22"
bin="$tools/node_modules/.bin"

# True when `$1` (a node binary) is 22.18+, 23.6+ or 24+.
node_ok() {
  "$1" -e 'const [a,b]=process.versions.node.split(".").map(Number);process.exit(a>23||(a===23&&b>=6)||(a===22&&b>=18)?0:1)' >/dev/null 2>&1
}

dir=""
if ! node_ok node; then
  if ! node_ok "$bin/node"; then
    found=$(node --version 2>/dev/null || echo "no node")
    echo "Deltagate needs Node.js >= 22.18 (this machine has $found): installing node@$NODE_VERSION from the npm registry into .tools/node22 (once)..." >&2
    # Install beside the target, then move it into place, so an interrupted or concurrent first
    # run never leaves a half-installed .tools/node22 behind.
    mkdir -p "$root/.tools"
    tmp="$root/.tools/node22.partial.$$"
    rm -rf "$tmp"
    if ! npm install --prefix "$tmp" --no-save --no-package-lock --no-audit --no-fund \
      --loglevel=error "node@$NODE_VERSION" >/dev/null; then
      rm -rf "$tmp"
      echo "Could not install node@$NODE_VERSION from the npm registry; install Node.js >= 22.18 yourself and retry." >&2
      exit 1
    fi
    if ! node_ok "$tmp/node_modules/.bin/node"; then
      rm -rf "$tmp"
      echo "node@$NODE_VERSION from the npm registry does not run on this machine; install Node.js >= 22.18 yourself and retry." >&2
      exit 1
    fi
    if node_ok "$bin/node"; then
      rm -rf "$tmp" # a concurrent first run got there first
    else
      rm -rf "$tools"
      mv "$tmp" "$tools"
    fi
  fi
  dir="$bin"
fi

if [ "${1-}" = "--bin-dir" ]; then
  [ -n "$dir" ] && echo "$dir"
  exit 0
fi
if [ "$#" -eq 0 ]; then
  echo "usage: sh scripts/with-node22.sh COMMAND [ARGS...]" >&2
  exit 2
fi
if [ -n "$dir" ]; then
  PATH="$dir:$PATH"
  # npm exports the Node that runs it; tools that respawn Node through these must get this one.
  NODE="$dir/node"
  npm_node_execpath="$dir/node"
  export PATH NODE npm_node_execpath
fi
# The project's CLIs (vitest, wrangler…) even when this runs outside `npm run`.
PATH="$root/node_modules/.bin:$PATH"
export PATH
exec "$@"
