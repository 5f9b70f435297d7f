#!/usr/bin/env bash
# Source this file (`. scripts/use-node22.sh`) to get Node >= 22.12 on PATH: current wrangler
# refuses older Node. When the machine's Node is older, Node 22 is installed from the npm
# registry (the `node@22` package) into .tools/node22 once and put first on PATH.
_dg_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
_dg_node_ok() { node -e 'const [a,b]=process.versions.node.split(".").map(Number);process.exit(a>22||(a===22&&b>=12)?0:1)' 2>/dev/null; }
if ! _dg_node_ok; then
  if [ ! -x "$_dg_root/.tools/node22/node_modules/.bin/node" ]; then
    echo "Node $(node --version 2>/dev/null || echo none) is older than 22.12: installing node@22 from the npm registry into .tools/node22" >&2
    npm install --no-save --no-audit --no-fund --loglevel=error --prefix "$_dg_root/.tools/node22" node@22.23.3 >&2
  fi
  export PATH="$_dg_root/.tools/node22/node_modules/.bin:$PATH"
fi
unset _dg_root
