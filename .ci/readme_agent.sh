#!/usr/bin/env bash
# The README's "Use it with your agent" commands, exactly as written, run in the checkout with
# a real Claude Code (the npm package ships its own binary), which must then report clew's MCP
# server connected. HOME is a scratch folder, so no real user's settings are touched.
set -euo pipefail
cd "$(dirname "$0")/.."

block=$(python3 - <<'PY'
import re
from pathlib import Path

section = Path("README.md").read_text().split("## Use it with your agent", 1)[1]
print(re.search(r"```sh\n(.*?)\n```", section, re.S).group(1))
PY
)

cache="${XDG_CACHE_HOME:-$HOME/.cache}/clew-ci/claude-code"
if [ ! -x "$cache/node_modules/.bin/claude" ]; then
  mkdir -p "$cache"
  npm install --silent --no-audit --no-fund --prefix "$cache" @anthropic-ai/claude-code >/dev/null
fi

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export HOME="$scratch" PATH="$cache/node_modules/.bin:$PATH"
echo "+ the README's agent lines:"
echo "$block"
bash -euo pipefail -c "$block"
listing=$(claude mcp list)
echo "$listing"
grep -q "^clew: $(pwd)/.venv/bin/clew mcp - .*Connected" <<<"$listing"
echo "README agent lines: clew's MCP server connected in Claude Code"
