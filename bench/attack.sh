#!/bin/sh
# The attack table (issue 34; docs/security.md): hostile inputs checked for
# being rejected correctly. Needs root.
cd "$(dirname "$0")/.." || exit 1
exec python3 bench/attack.py --build "${BUILD:-build}"
