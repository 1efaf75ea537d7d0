#!/bin/sh
# The attack table (docs/security.md): hostile inputs checked for
# being rejected correctly. Needs root.
cd "$(dirname "$0")/.." || exit 1
PY=python3
python3 -c "import google.protobuf" 2>/dev/null || PY=/usr/bin/python3
exec "$PY" bench/attack.py --build "${BUILD:-build}"
