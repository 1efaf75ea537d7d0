#!/bin/sh
# The docs check (scripts/check-docs.py): every command README.md
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

# Rule 6: a marked options table lists every option of the binary's
# --help and no other.
{
	echo '# A table of ofcd options'
	echo
	echo '<!-- check-docs: options ofcd -->'
	echo '| option | meaning |'
	echo '|---|---|'
	"$BUILD/ofcd" --help | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u |
		grep -vxE -- '--(help|version|gateway-uid|cluster-ttl)' | sed 's/.*/| `&` | x |/'
	echo '| `--no-such-option N` | x |'
} >"$TMP/table.md"
expect_exit 1 scripts/check-docs.py --build "$BUILD" "$TMP/table.md"
grep -qF "$TMP/table.md:3: the options table lacks --cluster-ttl, --gateway-uid ('ofcd --help' lists them)" "$TMP/out" &&
	grep -qE "^$TMP/table.md:[0-9]+: the options table lists --no-such-option, which 'ofcd --help' does not" "$TMP/out" &&
	ok || bad "the docs check should name the table's missing and unknown options" "$(cat "$TMP/out")"
# Rule 7: a reference to bench's results names a page that exists and
# one of its headings, also where a comment's line break splits the name;
# bench/RESULTS.md is an index with no sections of its own.
# (The page names are put together here, so that the check of this file
# itself does not read them as references.)
R=bench/results I=bench/RESULTS
cat >"$TMP/refs.md" <<MD
# References to bench's results

Found: $R/failures.md, "Failures at every size"; a split name,
$R/netconf.md, "The per-command
floor"; a page alone, $R/lp.md.

Missing: $R/failures.md, "No such section"; $R/no-such-page.md;
the old form, $I.md, "Huge pages".
MD
expect_exit 1 scripts/check-docs.py --build "$BUILD" "$TMP/refs.md"
for want in \
	"$TMP/refs.md:7: $R/failures.md has no section \"No such section\"" \
	"$TMP/refs.md:7: $R/no-such-page.md does not exist" \
	"$TMP/refs.md:8: $I.md is an index; name the page under $R/ that holds \"Huge pages\""; do
	grep -qF -- "$want" "$TMP/out" && ok || bad "the docs check did not report: $want" "$(cat "$TMP/out")"
done
grep -q "^$TMP/refs.md:[3-5]:" "$TMP/out" && bad "the docs check reported a reference that resolves" "$(cat "$TMP/out")" || ok
# ... a figure quoted beside a reference (in README.md and docs/) is found
# under the section it names, as written or rounded; `, section N` names
# the heading numbered N.
cat >"$TMP/figs.md" <<MD
Found: 8.91 ms, 19x the per-pair edits (rounded), $R/netconf.md, "The
per-command floor"; the library's table, $R/mpi.md, section 3.

Not there: 7.5 ms, $R/netconf.md, "The per-command floor"; $R/mpi.md, section 9.
MD
python3 - "$TMP/figs.md" >"$TMP/out" 2>&1 <<'PY' && ok || bad "the figures check should name the figure and the section not there, alone" "$(cat "$TMP/out")"
import importlib.util, sys
spec = importlib.util.spec_from_file_location("check_docs", "scripts/check-docs.py")
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
got = m.check_results_refs([sys.argv[1]], figures=lambda f: True)
page = "bench/" + "results/"
want = [sys.argv[1] + ':4: ' + page + 'mpi.md has no section "9."',
        sys.argv[1] + ':4: ' + page + 'netconf.md, "The per-command floor" does not hold the figure "7.5 ms" quoted beside it']
sys.exit(0 if sorted(got) == sorted(want) else print(got) or 1)
PY
# ... and the index links every page: a page it lacks is said; and the
# index and its pages over their lines (3 here, against 2) are said.
mkdir -p "$TMP/res/pages" && printf '# a\n' >"$TMP/res/pages/a.md" && printf '# b\n' >"$TMP/res/pages/b.md"
printf -- '- [a.md](results/a.md)\n' >"$TMP/res/index.md"
python3 - "$TMP/res" >"$TMP/out" 2>&1 <<'PY' && ok || bad "the index check should name the page it lacks, alone, and the lines over the cap" "$(cat "$TMP/out")"
import importlib.util, sys
spec = importlib.util.spec_from_file_location("check_docs", "scripts/check-docs.py")
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
where = dict(index=sys.argv[1] + "/index.md", pages=sys.argv[1] + "/pages")
got = m.check_results_index(**where)
want = sys.argv[1] + "/index.md: bench/" + "results/b.md is not in the index"
over = m.check_results_index(max_lines=2, **where)
lines = sys.argv[1] + "/index.md: the index and its pages hold 3 lines, over 2: "
ok = got == [want] and len(over) == 2 and over[0] == want and over[1].startswith(lines)
ok = ok and m.check_results_index(max_lines=3, **where) == [want]
sys.exit(0 if ok else print(got, over) or 1)
PY

# The replica's options in docs/production.md keep what the shipped
# /etc/default/ofcd gives (--admin-group ...: the line is edited in place,
# its options kept as \1) and add the gateway's and the cluster's
# (test_production.sh starts ofcd with them).
line=$(sed -n '/^<!-- production: ofcd -->/,/^[^ <]/p' docs/production.md | grep 'OFCD_OPTS=')
missing=""
for o in '\1' --gateway-socket --gateway-uid --gateway-group --cluster --cluster-cacert --cluster-cert \
	--cluster-key --advertise --cluster-name; do
	printf '%s\n' "$line" | grep -qF -- "$o " || missing="$missing $o"
done
[ -n "$line" ] && [ -z "$missing" ] && ok || bad "docs/production.md's replica options lack:$missing" "$line"

# docs/ofcd.md's Prometheus scrape job, as written, passes promtool check
# config, with the certificate files it names (relative to the config)
# made here by openssl.
if command -v promtool >/dev/null; then
	mkdir -p "$TMP/prom/ofc"
	sed -n '/^<!-- prometheus.yml:/,/^```$/p' docs/ofcd.md | sed '1,2d;$d' >"$TMP/prom/prometheus.yml"
	(
		cd "$TMP/prom/ofc" &&
			openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
				-subj /CN=ofc-ca -keyout ca.key -out ca.pem &&
			openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=prometheus \
				-keyout prometheus.key -out prometheus.csr &&
			openssl x509 -req -in prometheus.csr -CA ca.pem -CAkey ca.key -CAcreateserial \
				-days 2 -out prometheus.pem
	) >"$TMP/prom/openssl.log" 2>&1 || bad "openssl: the scrape job's certificates" "$(tail -3 "$TMP/prom/openssl.log")"
	grep -q '^    tls_config:$' "$TMP/prom/prometheus.yml" && grep -q 'ca_file: ofc/ca.pem' "$TMP/prom/prometheus.yml" &&
		grep -q 'cert_file: ofc/prometheus.pem' "$TMP/prom/prometheus.yml" &&
		promtool check config "$TMP/prom/prometheus.yml" >"$TMP/prom/check.out" 2>&1 && ok ||
		bad "docs/ofcd.md's scrape job: promtool check config" "$(cat "$TMP/prom/prometheus.yml" "$TMP/prom/check.out")"
	# (and promtool does look at the files: without the key it fails)
	mv "$TMP/prom/ofc/prometheus.key" "$TMP/prom/ofc/k"
	! promtool check config "$TMP/prom/prometheus.yml" >/dev/null 2>&1 && ok ||
		bad "promtool check config passed without the key file"
	mv "$TMP/prom/ofc/k" "$TMP/prom/ofc/prometheus.key"
else
	bad "promtool missing: scripts/install-deps.sh installs prometheus"
fi

# The real docs.
scripts/check-docs.py --build "$BUILD" >"$TMP/out" 2>&1
rc=$?
tail -1 "$TMP/out"
[ $rc -eq 0 ] && ok || bad "the docs show commands that fail or that no test runs" "$(cat "$TMP/out")"

finish
