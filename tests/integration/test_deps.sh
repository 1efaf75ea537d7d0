#!/bin/sh
# scripts/check-deps: what the build includes and the programs load comes
# from install-deps' groups. It fails, naming the header, its package and
# the group, on a copy of install-deps whose build group lacks libcurl's
# headers (as it did when a fresh machine's make run stopped at
# curl/curl.h); and naming libcurl4 on a debian/control whose Depends lacks
# the library the CLI dlopens.
SUITE=deps
. "$(dirname "$0")/lib.sh"

# The copies change only what the tree is checked against: the compiler's
# answers for the tree (cc -M, 12 of a check's 15 s of CPU) are asked once.
check() { # ARGS...: make check-deps with CHECK_DEPS_ARGS; output in $TMP/out
	make --no-print-directory -s BUILD="$BUILD" CC="${CC:-cc}" SAN="${SAN:-}" check-deps \
		CHECK_DEPS_ARGS="$* --includes $TMP/includes.json" >"$TMP/out" 2>&1
}

# On the tree as it is, make test's check-deps target passes; here each
# copy must fail, naming only what the copy lost.
# The build group without libcurl4-openssl-dev.
sed 's/libcurl4-openssl-dev//' scripts/install-deps.sh >"$TMP/install-deps.sh"
! sh "$TMP/install-deps.sh" --list build | grep -qx libcurl4-openssl-dev || bad "the copy still lists libcurl4-openssl-dev"
check --install-deps "$TMP/install-deps.sh"
rc=$?
[ $rc -ne 0 ] && grep -q "includes curl/curl.h .* from Debian's libcurl4-openssl-dev, .*add libcurl4-openssl-dev to the build group" "$TMP/out" &&
	ok || bad "check-deps without libcurl4-openssl-dev in the build group should name curl/curl.h and the package" \
	"exit $rc: $(head -c 2000 "$TMP/out")"
# Only what the copy lost is named.
! grep "check-deps:" "$TMP/out" | grep -v "libcurl4" | grep -q . && ok ||
	bad "check-deps named more than libcurl's packages" "$(head -c 2000 "$TMP/out")"

# The package's Depends without libcurl4: dpkg-shlibdeps cannot see a dlopen.
if [ -f debian/control ]; then
	sed '/^Package:/,$ { /^ *libcurl4,$/d }' debian/control >"$TMP/control"
	grep -q libcurl4-openssl-dev "$TMP/control" && ! sed -n '/^Package:/,$p' "$TMP/control" | grep -q libcurl4 ||
		bad "the control copy should lack only the Depends on libcurl4"
	check --control "$TMP/control"
	rc=$?
	[ $rc -ne 0 ] && grep -q "loads libcurl.so.4 .* from Debian's libcurl4, which $TMP/control's Depends does not name" "$TMP/out" &&
		ok || bad "check-deps should name libcurl4 missing from the package's Depends" "exit $rc: $(head -c 2000 "$TMP/out")"
fi
# Kept answers that are not JSON: said, and the check fails.
echo "not json" >"$TMP/includes.json"
check
rc=$?
[ $rc -ne 0 ] && grep -q "check-deps: --includes $TMP/includes.json: " "$TMP/out" && ok ||
	bad "a broken --includes file should be exit 2, named" "exit $rc: $(head -c 2000 "$TMP/out")"
finish
