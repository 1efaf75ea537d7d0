#!/bin/sh
# Run every CLI suite (tests/cli/test_*.sh); fail if any fails.
cd "$(dirname "$0")/../.." || exit 1
status=0
for t in tests/cli/test_*.sh; do
	sh "$t" || status=1
done
exit $status
