#!/bin/sh
# The same answer on any number of threads: the heavy engines' parallel
# parts (the MCF's pricing, its routes mirrored by the group, the paths
# kept per pair, the symmetric routes expanded, BFB's LPs, the fluid
# engine, the verifier) each work in parts joined in a fixed order, so a
# request on 2 or 4 threads writes the schedule byte for byte as on 1, and
# its summary differs in its timings alone. No timing is asserted.
SUITE=threads
. "$(dirname "$0")/lib.sh"

# masked FILE: the summary less its timings (the keys the corpus masks,
# and the fluid engine's seconds_*).
masked() {
	sed -E -e 's/"(generate_s|verify_s|[a-z_]*seconds|seconds_[a-z_]*)": *[0-9.e+-]+/"\1": <T>/g' \
		-e 's/[0-9]+\.[0-9]+ s\)/<T> s)/g' "$1"
}

# same NAME ARGS...: `ofc schedule ARGS` on 1, 2 and 4 threads: exit 0,
# the whole schedule (json) identical, the summaries identical but for
# their timings; NAME's single-thread schedule kept as $TMP/NAME.1.json.
same() {
	name=$1
	shift
	for t in 1 2 4; do
		if ! $OFC schedule "$@" --threads $t --json --format json -o "$TMP/$name.$t.json" \
			>"$TMP/$name.$t.out" 2>"$TMP/$name.$t.err"; then
			bad "$name: ofc schedule $* --threads $t failed" "$(head -c 400 "$TMP/$name.$t.err")"
			return
		fi
	done
	for t in 2 4; do
		if cmp -s "$TMP/$name.1.json" "$TMP/$name.$t.json"; then ok; else
			bad "$name: the schedule on $t threads differs from the one on 1" \
				"$(cmp "$TMP/$name.1.json" "$TMP/$name.$t.json")"
		fi
		masked "$TMP/$name.1.out" >"$TMP/$name.1.m"
		masked "$TMP/$name.$t.out" >"$TMP/$name.$t.m"
		if cmp -s "$TMP/$name.1.m" "$TMP/$name.$t.m"; then ok; else
			bad "$name: the summary on $t threads differs from the one on 1" \
				"$(diff "$TMP/$name.1.m" "$TMP/$name.$t.m" | head -8)"
		fi
	done
}

# The mirrored MCF (15 classes of 256 sources: its pricing, 16 blocks of
# mirrored routes, the paths kept per pair in parts), lowered to paths.
same gk256 --topology genkautz:256,4 --collective alltoall --lowering paths --size 1MiB
# A master on Clp with its pool of threads (175 rows, 1,700 columns,
# 144,000 elements: rwa/lp_clp_split.h; its pricing mostly by rows, Clp's
# own: the split pricing's bit-for-bit check is test_rwa_lp's).
same gk512 --topology genkautz:512,4 --collective alltoall --lowering paths --size 1MiB
# The one-source MCF on a torus, its routes expanded to every source.
same torus16 --topology torus:16x16 --collective alltoall --lowering paths --size 1MiB
# The time-stepped MCF (its pricing on the time-expanded graph).
same gk64steps --topology genkautz:64,4 --collective alltoall --lowering steps --size 1MiB
# BFB's per-node LPs and the verifier's parallel pass.
same hc8 --topology hypercube:8 --collective allreduce --size 64MiB
# The fluid engine on a model W server pair, and on 8 servers (64 GPUs:
# its pricing's cut LPs, 683 columns).
same fluid2 examples/modelw/all-links-2.yaml --collective allgather
same fluid8 examples/modelw/all-links-8.yaml --collective allgather

# The schedules checked are the ones meant: verified, and the MCF's mirrored.
if grep -q '"verified": true' "$TMP/gk256.1.out" && grep -q '"mirrored column generation"' "$TMP/gk256.1.out" &&
	grep -q '"mirrored column generation"' "$TMP/gk512.1.out" && grep -q '"verified": true' "$TMP/gk512.1.out" &&
	grep -q '"verified": true' "$TMP/fluid8.1.out" &&
	grep -q '"verified": true' "$TMP/torus16.1.out" && grep -q '"verified": true' "$TMP/hc8.1.out"; then ok; else
	bad "the single-thread schedules should be verified (and genkautz:256,4's MCF mirrored)" \
		"$(head -c 600 "$TMP/gk256.1.out")"
fi

finish
