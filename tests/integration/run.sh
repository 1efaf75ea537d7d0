#!/bin/sh
# Run every integration suite (tests/integration/test_*.sh): the binaries,
# the daemon, the emulators and the testbed driven as users drive them; fail
# if any fails.
cd "$(dirname "$0")/../.." || exit 1
status=0
for t in tests/integration/test_*.sh; do
	sh "$t" || status=1
done
exit $status
