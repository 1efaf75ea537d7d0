#!/bin/sh
# The docs check (scripts/check-docs.py, issue 35): every command README.md
# and docs/*.md show is run by a test. First the check itself on a page
# that breaks each rule once (each must be reported with its line, and the
# check must fail); then on the real docs, which must pass.
SUITE=docs
. "$(dirname "$0")/lib.sh"

cat >"$TMP/bad.md" <<'MD'
# A page that breaks every rule

    build/ofc apply FILE --rate-scale 2
    build/ofc frobnicate FILE
    build/ofc validate configs/no-such.yaml
    build/ofc apply configs/torus64-ocs.yaml --partition no-test-runs-this

    $ build/ofc topo ring:4
    topology ring:5
    ...

<!-- check-docs: run -->

    d=$(mktemp -d)
    build/ofc validate configs/torus64-ocs.yaml
    build/ofc validate $d/missing.yaml
    rm -rf $d

And what passes:

    $ build/ofc topo ring:4
    topology ring:4
    ...
MD
expect_exit 1 scripts/check-docs.py --build "$BUILD" "$TMP/bad.md"
for want in \
	"$TMP/bad.md:3: build/ofc apply FILE --rate-scale 2: '--rate-scale' is not an option of 'ofc apply'" \
	"$TMP/bad.md:4: 'ofc frobnicate --help' exits 2: the command the docs show does not exist" \
	"$TMP/bad.md:5: 'build/ofc validate configs/no-such.yaml' exited 2: " \
	"$TMP/bad.md:6: 'build/ofc apply configs/torus64-ocs.yaml --partition no-test-runs-this': no test runs this command" \
	"$TMP/bad.md:8: 'build/ofc topo ring:4' prints, at line 1 of its output:" \
	"$TMP/bad.md:14: the block exited 2; its last lines:" \
	"docs: 8 commands in 1 files: 3 run here, 2 in 1 script blocks (1 run, 0 skipped), 0 covered by them, 0 by tests, 2 synopses checked against --help; 6 problems"; do
	grep -qF -- "$want" "$TMP/out" && ok || bad "the docs check did not report: $want" "$(cat "$TMP/out")"
done
grep -q "^$TMP/bad.md:2[0-9]:" "$TMP/out" && bad "the docs check reported a command that works" "$(cat "$TMP/out")" || ok

# The real docs.
scripts/check-docs.py --build "$BUILD" >"$TMP/out" 2>&1
rc=$?
tail -1 "$TMP/out"
[ $rc -eq 0 ] && ok || bad "the docs show commands that fail or that no test runs" "$(cat "$TMP/out")"

finish
