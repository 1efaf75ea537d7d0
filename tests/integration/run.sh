#!/bin/sh
# Run every integration suite (tests/integration/test_*.sh): the binaries,
# the daemon, the emulators and the testbed driven as users drive them; fail
# if any fails. Each suite's wall time goes to stderr, so the budget of make
# test (about 10 minutes on 2 cores) can be watched suite by suite.
cd "$(dirname "$0")/../.." || exit 1
status=0
for t in tests/integration/test_*.sh; do
	start=$(date +%s)
	sh "$t" || status=1
	echo "time: $(basename "$t" .sh) $(($(date +%s) - start)) s" >&2
done
exit $status
