#!/bin/sh
# The layers check (scripts/check-layers.py), its rule on ofcd's thread
# line: a file of controller/ofcd/ that reaches both the mutation worker's
# header (worker.h) and the loop thread's (conn.h, loop.h), even through
# another header, fails the check, and so does a half of struct ofcd
# defined outside its side's header. First on a small tree of its own
# (compiled here, as make compiles the real one), which breaks each rule
# once; then the same tree without the breakage, which must pass (the
# real tree passing is make test's layers target). Then the map's
# derivable claims (check-architecture.py) and the list of what still
# links an engine into ofcd (check-engines.py), each failing on a copy
# with one thing left out (and the latter on a lookup that comes to use an
# engine).
SUITE=layers
. "$(dirname "$0")/lib.sh"

T="$TMP/tree"
O="$T/controller/ofcd"
mkdir -p "$O" "$T/build/obj/controller/ofcd"
cat >"$O/internal.h" <<'C'
#ifndef INTERNAL_H
#define INTERNAL_H
struct ofcd_loop;
struct ofcd_worker;
struct ofcd {
	struct ofcd_loop *loop;
	struct ofcd_worker *w;
};
#endif
C
printf '#include "controller/ofcd/internal.h"\nstruct ofcd_loop {\n\tint conns;\n};\n' >"$O/conn.h"
printf '#include "controller/ofcd/internal.h"\nstruct ofcd_worker {\n\tint jobs;\n};\n' >"$O/worker.h"
printf 'struct loop;\n' >"$O/loop.h"
# a header of the loop's side: reaching conn.h through it reaches the loop
printf '#ifndef QUEUE_H\n#define QUEUE_H\n#include "controller/ofcd/conn.h"\nint loop_conns(const struct ofcd *d);\n#endif\n' >"$O/queue.h"
printf '#include "controller/ofcd/queue.h"\nint loop_conns(const struct ofcd *d) { return d->loop->conns; }\n' >"$O/loop_side.c"
printf '#include "controller/ofcd/worker.h"\nint worker_jobs(const struct ofcd *d);\nint worker_jobs(const struct ofcd *d) { return d->w->jobs; }\n' >"$O/worker_side.c"
printf '#include "controller/ofcd/queue.h"\n#include "controller/ofcd/worker.h"\nint both(const struct ofcd *d);\nint both(const struct ofcd *d) { return d->loop->conns + d->w->jobs; }\n' >"$O/both.c"
# struct ofcd_worker again, in a header any file may include
printf 'struct ofcd_worker {\n\tint jobs;\n};\n' >"$O/leak.h"
built=yes
for f in loop_side worker_side both; do
	"${CC:-cc}" -std=c11 -c -I"$T" "$O/$f.c" -o "$T/build/obj/controller/ofcd/$f.o" 2>"$TMP/cc" || built=no
done
[ "$built" = yes ] && ok || bad "the small tree did not compile" "$(cat "$TMP/cc")"

expect_exit 1 scripts/check-layers.py --root "$T" --build "$T/build"
grep -qF "check-layers: controller/ofcd/both.c includes controller/ofcd/worker.h and controller/ofcd/conn.h: the mutation worker's state and the loop thread's in one file" "$TMP/out" &&
	ok || bad "the check should refuse both.c, which reaches both threads' headers" "$(cat "$TMP/out")"
grep -qF "check-layers: controller/ofcd/leak.h defines struct ofcd_worker, which only controller/ofcd/worker.h may" "$TMP/out" &&
	ok || bad "the check should refuse struct ofcd_worker defined in leak.h" "$(cat "$TMP/out")"
grep -qE "loop_side.c|worker_side.c|queue.h includes" "$TMP/out" &&
	bad "the check refused a file on one side of the line" "$(cat "$TMP/out")" || ok
grep -qF "check-layers: 2 problem(s)" "$TMP/out" && ok || bad "two problems, no more" "$(cat "$TMP/out")"

# Without them the same tree passes: what failed was the rule.
rm "$O/both.c" "$T/build/obj/controller/ofcd/both.o" "$O/leak.h"
expect_exit 0 scripts/check-layers.py --root "$T" --build "$T/build"
grep -qF "check-layers: 7 files in 1 folders, no circles" "$TMP/out" && ok ||
	bad "the small tree without its breakage should pass" "$(cat "$TMP/out")"

# The arrows and the globals come from the objects' symbol tables (nm and
# objdump, once over all objects): two files that call each other and a
# function's static counter, in objects of their own, are seen there (the
# counter by its own name, which gcc's objects and clang's (make check)
# each spell another way).
printf 'int cb(int n);\nint ca(int n);\nint ca(int n) { static int hits; hits++; return n ? cb(n - 1) : hits; }\n' >"$O/ca.c"
printf 'int ca(int n);\nint cb(int n);\nint cb(int n) { return n ? ca(n - 1) : 0; }\n' >"$O/cb.c"
built=yes
for f in ca cb; do
	"${CC:-cc}" -std=c11 -c -I"$T" "$O/$f.c" -o "$T/build/obj/controller/ofcd/$f.o" 2>"$TMP/cc" || built=no
done
[ "$built" = yes ] && ok || bad "the calling pair did not compile" "$(cat "$TMP/cc")"
expect_exit 1 scripts/check-layers.py --root "$T" --build "$T/build"
grep -qxF "  controller/ofcd/ca.c -> controller/ofcd/cb.c: cb" "$TMP/out" &&
	grep -qxF "  controller/ofcd/cb.c -> controller/ofcd/ca.c: ca" "$TMP/out" && ok ||
	bad "the check should see ca.c and cb.c call each other (nm)" "$(cat "$TMP/out")"
grep -qF "check-layers: controller/ofcd/ca.c: 'hits' is a mutable global" "$TMP/out" && ok ||
	bad "the check should see ca.c's static counter (objdump)" "$(cat "$TMP/out")"
grep -qF "check-layers: 2 problem(s)" "$TMP/out" && ok || bad "two problems, no more" "$(cat "$TMP/out")"

# The map's derivable claims (scripts/check-architecture.py): the real
# docs/ARCHITECTURE.md holds; a copy with one caller of a use case left out
# of its "Called by", one thread's function left out of the threads list,
# a header's include left out, or a symbol put in another file does not,
# and each is said.
M=docs/ARCHITECTURE.md
expect_exit 0 scripts/check-architecture.py
grep -q . "$TMP/out" && bad "the real map should hold, silently" "$(cat "$TMP/out")" || ok
grep -q "what-if's topology (cli/cmd_testbed_topo.c)" "$M" && ok ||
	bad "the map no longer names cmd_testbed_topo.c as reconfigure_run's caller as this test expects"
sed "s|what-if's topology (cli/cmd_testbed_topo.c)|what-if's topology|" "$M" >"$TMP/map.md"
expect_exit 1 scripts/check-architecture.py --map "$TMP/map.md"
grep -qF "controller/cli/cmd_testbed_topo.c calls reconfigure_run, but the map's \"Called by\" does not name it" "$TMP/out" &&
	grep -qF "check-architecture: 1 claims" "$TMP/out" && ok ||
	bad "a caller left out of the map should be named, alone" "$(cat "$TMP/out")"
sed 's|`watch_main`|watch_main|' "$M" >"$TMP/map.md"
expect_exit 1 scripts/check-architecture.py --map "$TMP/map.md"
grep -qF "controller/reconfig/store_etcd.c starts a thread running watch_main" "$TMP/out" && ok ||
	bad "a thread left out of the map should be named" "$(cat "$TMP/out")"
sed 's|util/util.h,$|util/util.h, util/no-such.h,|; s|, drivers/types.h and rwa/rwa.h| and drivers/types.h|' "$M" >"$TMP/map.md"
expect_exit 1 scripts/check-architecture.py --map "$TMP/map.md"
grep -qE "controller/fabric/fabric.h includes .*rwa/rwa.h.*; the map says only" "$TMP/out" && ok ||
	bad "a header's include left out of the map should be said" "$(cat "$TMP/out")"
sed 's|(`batch_gather`, batch_gather.c;|(`batch_gather`, batch.c;|' "$M" >"$TMP/map.md"
expect_exit 1 scripts/check-architecture.py --map "$TMP/map.md"
grep -qF "the map puts \`batch_gather\` in batch.c, which does not define it" "$TMP/out" && ok ||
	bad "a symbol put in the wrong file should be said" "$(cat "$TMP/out")"

# What of the engines ofcd links (scripts/check-engines.py, make layers):
# none (planning runs in planner processes); a use would have to be listed
# with why, so a new one fails the check, named.
expect_exit 0 scripts/check-engines.py --build "$BUILD"
grep -qx "check-engines: ofcd links no engine (no object, no symbol in build/ofcd)" "$TMP/out" && ok ||
	bad "the real build's ofcd should link no engine" "$(cat "$TMP/out")"
# One listed file's uses taken off the list (--forget) stand for a new one
# (the first listed, while any is).
f=$(scripts/check-engines.py --build "$BUILD" --list | sed -n 's/^\([^: ]*\.c\): .*/\1/p' | head -n 1)
if [ -n "$f" ]; then
	expect_exit 1 scripts/check-engines.py --build "$BUILD" --forget "$f"
	grep -qF "check-engines: $f links an engine into ofcd, not listed: " "$TMP/out" &&
		grep -qF "check-engines: 1 problem(s)" "$TMP/out" && ok ||
		bad "a use of an engine not listed should be named, alone" "$(cat "$TMP/out")"
fi

# A file of ofcd's made to use an engine again (its object merged with one
# that takes the engine's symbol's address, in a copy of the build's
# objects) is named as a use not listed.
# uses_engine DIR OBJ SYMBOL TYPE WHAT: OBJ (under obj/, .o) in a copy at DIR
# made to use SYMBOL (of C type TYPE), WHAT the check's words for it
B=$(cd "$BUILD" && pwd)
uses_engine() {
	mkdir -p "$TMP/$1"
	cp -rs "$B/obj" "$TMP/$1/obj"
	ln -s "$B/ofcd" "$TMP/$1/ofcd"
	printf '%s %s(void);\n%s (*const uses_%s)(void) = %s;\n' "$4" "$3" "$4" "$3" "$3" >"$TMP/$1.c"
	rm "$TMP/$1/obj/$2"
	if "${CC:-cc}" -c -o "$TMP/$1.o" "$TMP/$1.c" &&
		ld -r -o "$TMP/$1/obj/$2" "$B/obj/$2" "$TMP/$1.o"; then ok; else bad "could not make $2 use $3"; fi
	expect_exit 1 scripts/check-engines.py --build "$TMP/$1"
	grep -qF "check-engines: ${2%.o}.c links an engine into ofcd, not listed: $3" "$TMP/out" &&
		grep -qF "check-engines: 1 problem(s)" "$TMP/out" && ok ||
		bad "$5 should be named as a use not listed" "$(cat "$TMP/out")"
}
# A lookup in an engine's folder (names, defaults, limits: LOOKUPS) is no
# engine only while it uses none: lookup.o made to use a build of the
# engines' table by address again.
uses_engine eng controller/schedule/lookup.o direct_build_bfb void "a lookup that uses an engine"
# Validation asks the fabric's picker for topology: auto (ofcd's asks a
# planner process): validate.o made to call the finder's pick_run itself
# again, as it did.
uses_engine eng2 controller/config/validate.o pick_run int "validation calling the finder"

# (That the real tree keeps the line, no file of controller/ofcd/ reaching
# both, is make test's layers target: the same check-layers.py --build on
# the same build, not run twice.)

finish
