# Source this from the checkout's root (`. scripts/use-node22.sh`, any POSIX shell) to put the
# project's Node (>= 22.18, see scripts/with-node22.sh) first on this shell's PATH, for commands
# run outside the npm scripts such as `npx wrangler login`. The npm scripts do not need it.
if [ -f scripts/with-node22.sh ]; then
  if _dg_bin=$(sh scripts/with-node22.sh --bin-dir) && [ -n "$_dg_bin" ]; then
    PATH="$_dg_bin:$PATH"
    export PATH
  fi
  unset _dg_bin
else
  echo "scripts/use-node22.sh: source it from the Deltagate checkout's root directory" >&2
fi
