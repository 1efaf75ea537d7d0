#!/bin/sh
# Runs the output corpus (tests/corpus/commands) with one build's ofc and
# writes each answer to OUTDIR: stdout, stderr, exit status and any file the
# command wrote, with wall-clock timings masked. A refactoring is checked by
# running it before and after and comparing the two folders:
#
#   scripts/corpus.sh build /tmp/before   (on the old tree)
#   scripts/corpus.sh build /tmp/after    (on the new tree)
#   scripts/corpus.sh --compare /tmp/before /tmp/after
#
# --compare pairs the answers by their command line (a list that gained or
# lost a line shifts the numbers), prints a diff of each pair that differs
# and the commands one side lacks, and exits 1 if any does.
set -u
usage() {
	echo "usage: scripts/corpus.sh BUILD OUTDIR | --compare BEFORE AFTER" >&2
	exit 2
}
[ "${1:-}" = --compare ] && {
	[ $# -eq 3 ] && [ -d "$2" ] && [ -d "$3" ] || usage
	before=$2 after=$3 ix=$(mktemp -d) || exit 1
	# index DIR: "COMMAND<tab>FILE" for each answer, sorted by command
	index() { for f in "$1"/*; do printf '%s\t%s\n' "$(head -n 1 "$f")" "$f"; done | sort; }
	index "$before" >"$ix/before" && index "$after" >"$ix/after" || exit 1
	same=0 differ=0 lacking=0
	while IFS="$(printf '\t')" read -r cmd file; do
		old=$(c=$cmd awk -F '\t' '$1 == ENVIRON["c"] {print $2; exit}' "$ix/before")
		if [ -z "$old" ]; then
			echo "only after: $cmd"
			lacking=$((lacking + 1))
		elif cmp -s "$old" "$file"; then
			same=$((same + 1))
		else
			diff -u --label "before: $cmd" --label "after" "$old" "$file"
			differ=$((differ + 1))
		fi
	done <"$ix/after"
	while IFS="$(printf '\t')" read -r cmd file; do
		c=$cmd awk -F '\t' '$1 == ENVIRON["c"] {f = 1} END {exit !f}' "$ix/after" ||
			{ echo "only before: $cmd" && lacking=$((lacking + 1)); }
	done <"$ix/before"
	rm -rf "$ix"
	echo "corpus: $same the same, $differ differ, $lacking on one side only"
	[ $differ -eq 0 ] && [ $lacking -eq 0 ]
	exit
}
[ $# -eq 2 ] || usage
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
