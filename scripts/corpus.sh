#!/bin/sh
# Runs the output corpus (tests/corpus/commands) with one build's ofc and
# writes each answer to OUTDIR: stdout, stderr, exit status and any file the
# command wrote, with wall-clock timings masked. A refactoring is checked by
# running it before and after and comparing the two folders:
#
#   scripts/corpus.sh build /tmp/before   (on the old tree)
#   scripts/corpus.sh build /tmp/after    (on the new tree)
#   diff -r /tmp/before /tmp/after
set -u
[ $# -eq 2 ] || { echo "usage: scripts/corpus.sh BUILD OUTDIR" >&2; exit 2; }
build=$1 out=$2
ofc=$(cd "$build" && pwd)/ofc
[ -x "$ofc" ] || { echo "corpus: $ofc is not built" >&2; exit 2; }
list=$(dirname "$0")/../tests/corpus/commands
mkdir -p "$out" || exit 1
# Timings and the machine's own figures are the only parts of an answer
# that may differ between two runs of the same code.
mask() {
	sed -E \
	    -e 's/"(generate_s|verify_s|time_limit_s|[a-z_]*seconds)": *[0-9.e+-]+/"\1": <T>/g' \
	    -e 's/\([0-9.e+-]+ s to solve\)/(<T> s to solve)/g' \
	    -e 's/(in|took|after|elapsed|wall|solved in|optimal,|iterations,|models,|\() +[0-9]+(\.[0-9]+)?(e-?[0-9]+)? ?(ns|us|ms|s|min)\b/\1 <T>/g' \
	    -e 's/[0-9]+(\.[0-9]+)? ?s to price/<T> to price/g'
}
n=0
grep -v '^#' "$list" | grep -v '^$' | while IFS= read -r line; do
	n=$((n + 1))
	id=$(printf '%03d' "$n")
	tmp=$(mktemp -d)
	cmd=$(printf '%s\n' "$line" | sed -e "s#\\bOFC\\b#\"$ofc\"#g" -e "s#OUT\\.#$tmp/out.#g")
	(cd "$(dirname "$list")/../.." && OFC_SOCKET= timeout 120 sh -c "$cmd" \
		>"$tmp/stdout" 2>"$tmp/stderr" </dev/null; echo "rc $?" >"$tmp/rc")
	{
		printf '$ %s\n' "$line"
		cat "$tmp/rc"
		echo "--- stdout"
		sed "s#$tmp/#OUT/#g; s#$ofc#ofc#g" "$tmp/stdout" | mask
		echo "--- stderr"
		sed "s#$tmp/#OUT/#g; s#$ofc#ofc#g" "$tmp/stderr" | mask
		for f in "$tmp"/out.*; do
			[ -e "$f" ] || continue
			echo "--- file ${f##*/} sha256 $(mask <"$f" | sha256sum | cut -c1-16) bytes $(wc -c <"$f")"
		done
	} >"$out/$id"
	rm -rf "$tmp"
done
echo "corpus: $(ls "$out" | wc -l) answers in $out"
