# ofc — optical fabric controller.
#
#   make            build build/ofc (installs missing Debian packages first:
#                   those building and running need, scripts/install-deps.sh)
#   make run        validate and show an example fabric
#   make mpi        the MPI baseline's rank, build/ofc-mpi-rank (MPICH)
#   make test       build and run every unit and integration test (installs
#                   the servers and tools the tests run against first)
#   make check      the tests under AddressSanitizer + UndefinedBehaviorSanitizer
#   make bench      benchmarks (results: bench/results/, a page each)
#   make fuzz       build the libFuzzer targets (clang)
#   make install    binaries, man pages, completion, systemd unit, sysusers.d
#                   and tmpfiles.d, headers, libofc.a and ofc.pc, the docs,
#                   the .proto files, the example configs and the Slurm
#                   wrappers (share/ofc) under $(DESTDIR)$(PREFIX)
#                   (PREFIX=/usr/local)
#
# BUILD=dir selects the output directory, so several builds (sanitizers, a
# helper's worktree) never share objects.

BUILD    ?= build
# One version for every binary (--version), the man pages and ofc.pc.
VERSION  := $(shell cat VERSION)
CC       ?= cc
# OPT: the compiler's flags, LDOPT: the linker's. Debian's hardening by
# default, exactly as dpkg-buildflags gives them to debian/rules
# (hardening=+all on bookworm): the programs make test runs are the ones
# the package ships, and make deb packages this build instead of compiling
# it all again. A build remembers its flags ($(BUILD)/.flags): other flags
# on the same BUILD remake every object.
OPT      ?= -g -O2 -ffile-prefix-map=$(CURDIR)=. -fstack-protector-strong -Wformat \
            -Werror=format-security -Wdate-time -D_FORTIFY_SOURCE=2
LDOPT    ?= -Wl,-z,relro -Wl,-z,now
SAN      ?=
V        ?= 0
Q         = $(if $(filter 1,$(V)),,@)
# ARCH: extra machine flags (e.g. -march=native). None by default: the
# binaries run on any x86-64; BFB no longer counts bits in its inner loops
# (its -mpopcnt made no difference after that).
ARCH     ?=
CSTD      = -std=c11 -D_GNU_SOURCE -DOFC_VERSION='"$(VERSION)"'
WARN      = -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
            -Wformat=2 -Wno-format-nonliteral -Wvla -Wpointer-arith \
            -Wno-missing-field-initializers
PKGS      = yaml-0.1 libprotobuf-c libnl-3.0 libnl-route-3.0 libnl-genl-3.0 libsystemd \
            libyang json-c libmicrohttpd gnutls nauty libnetconf2 libssh zlib
# lp_solve ships no pkg-config file: its headers live in /usr/include/lpsolve
# and the static library needs COLAMD (suitesparse) and libdl.
LPSOLVE_LIBS = -llpsolve55 -lcolamd -ldl
# COIN-OR Clp: a plugin of its own (below), not linked into the programs.
CLP_PC     = clp
CLP_PLUGIN = $(BUILD)/libofc-clp.so

# Recursive (=) so pkg-config runs only after the dependency stamp is built.
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS))
# nauty is linked statically: its shared library's relocated pages alone
# added 0.3 MB to every run's resident memory (the memory limits count
# only what a run holds beyond its start, util/mem.c mem_held, so this is
# the program's size, not a limit's); libnauty.a is position-independent.
PKG_LIBS   = $(filter-out -lnauty,$(shell pkg-config --libs $(PKGS)))
NAUTY_LIBS = -Wl,-Bstatic -lnauty -Wl,-Bdynamic
CFLAGS_ALL = $(CSTD) $(OPT) $(ARCH) $(SAN) $(WARN) -I. -I$(BUILD)/gen $(PKG_CFLAGS) -MMD -MP
# Every program links against the one archive and the one list of
# libraries; --as-needed keeps a library out of a program's NEEDED entries
# unless an object the program pulls from libofc.a calls it, so ofc-gateway
# loads libmicrohttpd and GnuTLS but not lp_solve, libnl or libyang, and
# ocs-emu only libc (Debian's gcc does this by default, clang and gcc's
# sanitizer builds do not; test_install.sh checks the lists).
AS_NEEDED  = -Wl,--as-needed
# NETCONF_DYN: what the netconf plugin calls back in the program (below).
# --wrap=dlopen: lp_solve's search for an optional BLAS at every model is
# answered "absent" without touching the disk (util/dlopen_wrap.c).
LDLIBS_ALL = $(AS_NEEDED) -Wl,--dynamic-list=$(NETCONF_DYN) -Wl,--wrap=dlopen $(PKG_LIBS) \
	     $(NAUTY_LIBS) $(LPSOLVE_LIBS) -lpthread -lm

MODULES  = util topo sched rwa bfb alltoall baselines optree fluid drivers exec controller
# Modules may hold sub-folders (controller/cli/, drivers/emu/, ...).
# exec/mpi/ is MPI code built with mpicc (below), not part of libofc.
SRC_ALL  = $(sort $(filter-out exec/mpi/%,$(shell find $(MODULES) -name '*.c')))
HDR_ALL  = $(sort $(shell find $(MODULES) -name '*.h'))
MAIN_SRC = $(filter %_main.c,$(SRC_ALL))
LIB_SRC  = $(filter-out %_main.c,$(SRC_ALL))
# foo_bar_main.c builds $(BUILD)/foo-bar.
BINS     = $(foreach f,$(MAIN_SRC),$(BUILD)/$(subst _,-,$(patsubst %_main.c,%,$(notdir $(f)))))

PROTOS   = $(wildcard proto/*.proto)
PROTO_C  = $(patsubst proto/%.proto,$(BUILD)/gen/proto/%.pb-c.c,$(PROTOS))
PROTO_H  = $(PROTO_C:.c=.h)

# YANG modules the netconf driver and build/netconf-emu load, as C strings
# (scripts/embed-yang.py): ofc's own (drivers/yang), and from Debian's
# libyuma-base ietf-netconf and RFC 5277's notifications (create-subscription;
# yuma's rendering imports yuma-ncx for its extensions).
YANG_SRC = $(sort $(wildcard drivers/yang/*.yang)) \
           /usr/share/yuma/modules/ietf/ietf-netconf@2011-06-01.yang \
           /usr/share/yuma/modules/ietf-derived/notifications.yang \
           /usr/share/yuma/modules/netconfcentral/yuma-ncx.yang
YANG_C   = $(BUILD)/gen/yang/yang_texts.c

LIB_OBJ  = $(patsubst %.c,$(BUILD)/obj/%.o,$(LIB_SRC)) $(PROTO_C:.c=.o) $(YANG_C:.c=.o)
LIB      = $(BUILD)/libofc.a

# The netconf driver is also a plugin of its own (drivers/internal.h):
# ofc and ofcd load it, and libnetconf2, libssh, GnuTLS and libyang with
# it, only when a config names a netconf device, as these libraries and
# what they pull in were two thirds of every command's start-up. Its
# objects are position-independent, the same ones in libofc.a and in the
# plugin; the plugin exports its table alone (drivers/netconf.map) and
# calls back into the program for the rest of libofc (ofc_error_set,
# state_diff, ...), which every program exports (NETCONF_DYN: the symbols
# its objects need that the rest of libofc defines, made from the objects).
NETCONF_OBJ    = $(patsubst %.c,$(BUILD)/obj/%.o,$(filter drivers/netconf%.c,$(LIB_SRC))) \
		 $(YANG_C:.c=.o)
NETCONF_PLUGIN = $(BUILD)/libofc-netconf.so
NETCONF_DYN    = $(BUILD)/netconf.dyn
NETCONF_PC     = libnetconf2 libssh gnutls libyang

TEST_SRC = $(wildcard tests/unit/test_*.c)
TESTS    = $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(TEST_SRC))
TESTLIB_SRC = $(filter-out tests/unit/test_%.c,$(wildcard tests/unit/*.c))

BENCH_SRC = $(wildcard bench/*.c)
BENCHES   = $(patsubst bench/%.c,$(BUILD)/bench/%,$(BENCH_SRC))

# What each group of Debian packages installed leaves behind (install-deps
# below): building and running, MPICH, and the tests' servers and tools.
STAMP      = $(BUILD)/.deps-ok
MPI_STAMP  = $(BUILD)/.deps-mpi-ok
TEST_STAMP = $(BUILD)/.deps-test-ok
UNIT_STAMP = $(BUILD)/.deps-unit-ok
# The flags this build was made with: rewritten only when they change, so
# an object is remade when they do (as git's GIT-CFLAGS), never mixed.
FLAGS      = $(BUILD)/.flags
FLAGS_NOW  = $(strip $(CC) $(CXX) $(OPT) $(LDOPT) $(ARCH) $(SAN))

# Man pages are generated from each binary's --help (scripts/man.py) and
# the hand-written sections in docs/man/NAME.extra, so they list every
# option the binary has.
MAN1     = ofc ocs-emu mrr-emu netconf-emu
MAN8     = ofcd ofc-gateway ofc-hostd
MANS     = $(patsubst %,$(BUILD)/man/%.1,$(MAN1)) $(patsubst %,$(BUILD)/man/%.8,$(MAN8))

# The MPI baseline's rank (ofc testbed run --mpi), built with MPICH's
# mpicc: not part of `all`, so building and running ofc needs no MPICH
# (make mpi, and the targets that run or install it, install MPICH first).
MPICC    ?= mpicc
MPI_RANK  = $(BUILD)/ofc-mpi-rank
# libofc-mpi, the PMPI library (exec/mpi/pmpi*.c, docs/mpi.md): one source
# built against each MPI of Debian, whose ABIs differ; the schedule's
# protobuf-c code compiled into it, position-independent; only the MPI_
# functions exported (exec/mpi/pmpi.map), so a program's own symbols and
# the library's never meet.
MPICC_OPENMPI ?= mpicc.openmpi
PMPI_SRC  = $(sort $(wildcard exec/mpi/pmpi*.c))
PMPI_PROTO = $(patsubst %,$(BUILD)/gen/proto/%.pb-c.c,schedule control fabric mrr topology)
PMPI_DEPS = $(PMPI_SRC) exec/mpi/pmpi.h exec/mpi/pmpi.map $(PMPI_PROTO) $(FLAGS)
PMPI_LIBS = $(BUILD)/libofc-mpi.so $(BUILD)/libofc-mpi-openmpi.so
PMPI_CFLAGS = -std=c11 -D_GNU_SOURCE $(OPT) $(LDOPT) $(WARN) -fPIC -shared -I. -I$(BUILD)/gen \
	      -Wl,--version-script=exec/mpi/pmpi.map -Wl,--no-undefined
PMPI_LDLIBS = $(shell pkg-config --libs libprotobuf-c json-c)

.PHONY: all run mpi test layers unit integration check bench fuzz clean deps format install python \
        check-deps deb clean-deb
.DEFAULT_GOAL := all
# Keep generated protobuf sources and test objects: they are not throwaway.
.SECONDARY:

# The unit tests and benchmarks built before (by make test, make bench or
# by name) are relinked too: one left behind a change to the library and
# run by hand ran the old code. Those never built are left to make test
# and make bench, as they need the tests' packages.
BUILT_TESTS = $(filter $(wildcard $(BUILD)/tests/test_* $(BUILD)/bench/*),$(TESTS) $(BENCHES))

all: $(BINS) $(MANS) $(BUILD)/ofc.pc python $(CLP_PLUGIN) $(NETCONF_PLUGIN) $(BUILT_TESTS)

# The check program (tests/mpi/, MPI alone) built with each mpicc.
MPI_CHECKS = $(BUILD)/tests/ofc-mpi-check $(BUILD)/tests/ofc-mpi-check-openmpi \
	     $(BUILD)/bench-mpi/ofc-mpi-bench $(BUILD)/bench-mpi/ofc-mpi-bench-openmpi
mpi: $(MPI_RANK) $(BUILD)/ofc-netns-exec $(PMPI_LIBS) $(MPI_CHECKS)
# bench/mpi.sh's program (bench/mpi/, MPI alone), with each mpicc: not in
# $(BUILD)/bench, whose programs bench/run.sh runs without arguments.
$(BUILD)/bench-mpi/ofc-mpi-bench: bench/mpi/ofc_mpi_bench.c $(FLAGS) | $(MPI_STAMP)
	@mkdir -p $(dir $@)
	@echo "  MPICC   $<"
	$(Q)$(MPICC) -std=c11 $(OPT) $(LDOPT) $(WARN) $< -o $@
$(BUILD)/bench-mpi/ofc-mpi-bench-openmpi: bench/mpi/ofc_mpi_bench.c $(FLAGS) | $(MPI_STAMP)
	@mkdir -p $(dir $@)
	@echo "  MPICC   $< (Open MPI)"
	$(Q)$(MPICC_OPENMPI) -std=c11 $(OPT) $(LDOPT) $(WARN) $< -o $@
$(BUILD)/tests/ofc-mpi-check: tests/mpi/ofc_mpi_check.c $(FLAGS) | $(MPI_STAMP)
	@mkdir -p $(dir $@)
	@echo "  MPICC   $<"
	$(Q)$(MPICC) -std=c11 $(OPT) $(LDOPT) $(WARN) $< -o $@
$(BUILD)/tests/ofc-mpi-check-openmpi: tests/mpi/ofc_mpi_check.c $(FLAGS) | $(MPI_STAMP)
	@mkdir -p $(dir $@)
	@echo "  MPICC   $< (Open MPI)"
	$(Q)$(MPICC_OPENMPI) -std=c11 $(OPT) $(LDOPT) $(WARN) $< -o $@
$(BUILD)/ofc-mpi-rank: exec/mpi/ofc_mpi_rank.c exec/mpi/netns_enter.c exec/mpi/netns_enter.h $(FLAGS) \
		       | $(MPI_STAMP)
	@mkdir -p $(dir $@)
	@echo "  MPICC   $<"
	$(Q)$(MPICC) -std=c11 $(OPT) $(LDOPT) $(WARN) -I. $< exec/mpi/netns_enter.c -o $@
# Any program's rank on the testbed (ofc testbed mpirun): no MPI in it.
NETNS_EXEC_SRC = exec/mpi/ofc_netns_exec.c exec/mpi/netns_enter.c exec/mpi/pmix_relay.c
$(BUILD)/ofc-netns-exec: $(NETNS_EXEC_SRC) exec/mpi/netns_enter.h exec/mpi/pmix_relay.h $(FLAGS)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) -std=c11 -D_GNU_SOURCE $(OPT) $(LDOPT) $(WARN) -I. $(NETNS_EXEC_SRC) -o $@
$(BUILD)/libofc-mpi.so: $(PMPI_DEPS) | $(MPI_STAMP)
	@echo "  MPICC   $@"
	$(Q)$(MPICC) $(PMPI_CFLAGS) $(PMPI_SRC) $(PMPI_PROTO) -o $@ $(PMPI_LDLIBS)
$(BUILD)/libofc-mpi-openmpi.so: $(PMPI_DEPS) | $(MPI_STAMP)
	@echo "  MPICC   $@"
	$(Q)$(MPICC_OPENMPI) $(PMPI_CFLAGS) $(PMPI_SRC) $(PMPI_PROTO) -o $@ $(PMPI_LDLIBS)

# SEE ALSO names the installed documents and data (DOCDIR, OFCDATADIR
# below). The pages in $(BUILD)/man name this make's paths; make install
# writes its own into DESTDIR for the paths it is given, so that no file
# in $(BUILD) depends on PREFIX: two makes on one build with different
# prefixes (the suites' make install beside make run) would remake the
# same file at once.
MAN_PATHS = $(DOCDIR) $(OFCDATADIR)
$(BUILD)/man/%.1: $(BUILD)/% scripts/man.py docs/man/%.extra VERSION
	@mkdir -p $(dir $@)
	@echo "  MAN     $@"
	$(Q)scripts/man.py $< $* 1 $(VERSION) docs/man/$*.extra $(MAN_PATHS) >$@.tmp && mv $@.tmp $@
$(BUILD)/man/%.8: $(BUILD)/% scripts/man.py docs/man/%.extra VERSION
	@mkdir -p $(dir $@)
	@echo "  MAN     $@"
	$(Q)scripts/man.py $< $* 8 $(VERSION) docs/man/$*.extra $(MAN_PATHS) >$@.tmp && mv $@.tmp $@

# Install the Debian packages when any is missing; the stamps keep this to
# once per group. `make deps` installs every group. One after another, as
# apt-get takes a lock: under -j two groups' installs would race for it.
deps: $(STAMP) $(MPI_STAMP) $(TEST_STAMP)
$(STAMP): scripts/install-deps.sh
	@scripts/install-deps.sh build
	@scripts/install-deps.sh --check $(PKGS) $(CLP_PC) libcurl
	@mkdir -p $(BUILD) && touch $@
$(MPI_STAMP): scripts/install-deps.sh | $(STAMP)
	@scripts/install-deps.sh mpi
	@mkdir -p $(BUILD) && touch $@
$(UNIT_STAMP): scripts/install-deps.sh | $(STAMP)
	@scripts/install-deps.sh unit
	@mkdir -p $(BUILD) && touch $@
$(TEST_STAMP): scripts/install-deps.sh | $(STAMP) $(MPI_STAMP) $(UNIT_STAMP)
	@scripts/install-deps.sh test
	@scripts/install-deps.sh --check $(BLISS_PC)
	@mkdir -p $(BUILD) && touch $@

# Generated C is never an intermediate to delete: a missing header next to
$(BUILD)/gen/proto/%.pb-c.c $(BUILD)/gen/proto/%.pb-c.h: proto/%.proto | $(STAMP)
	@mkdir -p $(BUILD)/gen
	@echo "  PROTOC  $<"
	$(Q)protoc-c --c_out=$(BUILD)/gen $<

# The system's modules come with the packages the stamp installs: on a fresh
# machine under -j, make must wait for it rather than find no rule for them.
$(filter /usr/%,$(YANG_SRC)): | $(STAMP)
	@test -f $@ || { echo "$@: missing after install-deps (libyuma-base)" >&2; exit 1; }
$(YANG_C): scripts/embed-yang.py $(YANG_SRC) | $(STAMP)
	@mkdir -p $(dir $@)
	@echo "  YANG    $@"
	$(Q)scripts/embed-yang.py $@ $(YANG_SRC)
$(YANG_C:.c=.o): $(YANG_C) $(FLAGS)
	@echo "  CC      $<"
	$(Q)$(CC) $(CSTD) $(OPT) $(SAN) -fPIC -I. $(PKG_CFLAGS) -c $< -o $@

$(NETCONF_OBJ): CFLAGS_ALL += -fPIC
$(NETCONF_PLUGIN): $(NETCONF_OBJ) drivers/netconf.map
	@echo "  LD      $@"
	$(Q)$(CC) -shared $(OPT) $(LDOPT) $(SAN) $(NETCONF_OBJ) -o $@ -Wl,--version-script=drivers/netconf.map \
	  $(AS_NEEDED) $(shell pkg-config --libs $(NETCONF_PC)) -lpthread -lm
$(NETCONF_DYN): $(LIB)
	@echo "  NM      $@"
	$(Q)nm -g --defined-only $(NETCONF_OBJ) | awk 'NF == 3 { print $$3 }' | sort -u >$@.own
	$(Q)nm -g --defined-only $(filter-out $(NETCONF_OBJ),$(LIB_OBJ)) | awk 'NF == 3 { print $$3 }' | \
	  sort -u >$@.lib
	$(Q)nm -u $(NETCONF_OBJ) | awk 'NF == 2 { print $$2 }' | sort -u | comm -23 - $@.own | \
	  comm -12 - $@.lib | awk 'BEGIN { print "{" } { print "  " $$1 ";" } END { print "};" }' >$@.tmp
	$(Q)rm -f $@.own $@.lib && mv $@.tmp $@

$(FLAGS): FORCE
	@mkdir -p $(BUILD) && echo '$(FLAGS_NOW)' | cmp -s - $@ || echo '$(FLAGS_NOW)' >$@
.PHONY: FORCE
FORCE:

$(BUILD)/obj/%.o: %.c $(FLAGS) | $(STAMP) $(PROTO_H)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(CFLAGS_ALL) -c $< -o $@

# Generated protobuf C is not ours to lint: no -Werror extras there. It
# includes the headers of the files its .proto imports: every header
# first, as for our own objects (else a clean -j build can race them).
$(BUILD)/gen/proto/%.pb-c.o: $(BUILD)/gen/proto/%.pb-c.c $(BUILD)/gen/proto/%.pb-c.h $(FLAGS) | $(PROTO_H)
	@echo "  CC      $<"
	$(Q)$(CC) $(CSTD) $(OPT) $(SAN) -I$(BUILD)/gen $(PKG_CFLAGS) -c $< -o $@

$(LIB): $(LIB_OBJ)
	@rm -f $@
	@echo "  AR      $@"
	$(Q)ar rcs $@ $^

define main_rule
$(BUILD)/$(subst _,-,$(patsubst %_main.c,%,$(notdir $(1)))): $(BUILD)/obj/$(1:.c=.o) $(LIB) | $(NETCONF_DYN)
	@echo "  LD      $$@"
	$$(Q)$$(CC) $$(OPT) $$(LDOPT) $$(SAN) $$^ -o $$@ $$(LDLIBS_ALL)
endef
$(foreach f,$(MAIN_SRC),$(eval $(call main_rule,$(f))))

TESTLIB_OBJ = $(patsubst %.c,$(BUILD)/obj/%.o,$(TESTLIB_SRC))
# The unit tests' objects include cmocka's header (the unit group: make
# unit installs no more), the benchmarks' libcurl's: the tests' packages.
TEST_OBJ  = $(patsubst %.c,$(BUILD)/obj/%.o,$(TEST_SRC) $(TESTLIB_SRC))
BENCH_OBJ = $(patsubst %.c,$(BUILD)/obj/%.o,$(BENCH_SRC))
$(TEST_OBJ): | $(UNIT_STAMP)
$(BENCH_OBJ): | $(TEST_STAMP)
$(BUILD)/tests/%: $(BUILD)/obj/tests/unit/%.o $(TESTLIB_OBJ) $(LIB) | $(NETCONF_DYN)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(OPT) $(LDOPT) $(SAN) $^ -o $@ $(LDLIBS_ALL) -lcmocka

# COIN-OR Clp, the second LP solver, is a plugin rwa/lp.c loads
# when a model asks for it (rwa/lp_clp.h: linked, Clp and what it pulls in
# added 4 MB to every run's resident memory). C++ (its event handler stops
# a solve at every iteration), without the sanitizers: an instrumented
# program loads it as is.
# lp_clp_split.cc: the pricing split over threads (std::thread).
CLP_OBJ = $(BUILD)/obj/rwa/lp_clp.o $(BUILD)/obj/rwa/lp_clp_split.o
$(CLP_OBJ): $(BUILD)/obj/rwa/%.o: rwa/%.cc rwa/lp_clp.h rwa/lp_clp_split.h $(FLAGS) | $(STAMP)
	@mkdir -p $(dir $@)
	@echo "  CXX     $<"
	$(Q)$(CXX) -std=c++11 -fPIC $(OPT) -Wall -Wextra -Werror -I. $(shell pkg-config --cflags $(CLP_PC)) -c $< -o $@
$(CLP_PLUGIN): $(CLP_OBJ)
	@echo "  LD      $@"
	$(Q)$(CXX) -shared $(OPT) $(LDOPT) $^ -o $@ -Wl,--no-undefined $(AS_NEEDED) $(shell pkg-config --libs $(CLP_PC)) -pthread

# bench/symmetry measures bliss beside nauty: bliss's digraphs
# are C++ only (its C interface has undirected graphs), so a shim of the
# bench's own, built with g++ against libbliss; ofc itself calls nauty.
BLISS_PC = libbliss-cxx
$(BUILD)/obj/bench/%.o: bench/%.cc bench/bliss_shim.h $(FLAGS) | $(TEST_STAMP)
	@mkdir -p $(dir $@)
	@echo "  CXX     $<"
	$(Q)$(CXX) -std=c++11 $(OPT) $(SAN) -Wall -Wextra -Werror -I. $(shell pkg-config --cflags $(BLISS_PC)) -c $< -o $@
$(BUILD)/bench/symmetry: $(BUILD)/obj/bench/symmetry.o $(BUILD)/obj/bench/bliss_shim.o $(LIB) | $(NETCONF_DYN)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CXX) $(OPT) $(LDOPT) $(SAN) $^ -o $@ $(LDLIBS_ALL) $(shell pkg-config --libs $(BLISS_PC))

# libcurl: only bench/gateway_load links it (ofc loads it for --server, https.c).
$(BUILD)/bench/%: $(BUILD)/obj/bench/%.o $(LIB) | $(NETCONF_DYN)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(OPT) $(LDOPT) $(SAN) $^ -o $@ $(LDLIBS_ALL) $(shell pkg-config --libs libcurl)

# The main job on an example config: validate, schedule, reconfigure an
# emulated OCS (scripts/demo.sh).
run: all
	@BUILD=$(BUILD) scripts/demo.sh configs/torus64-ocs.yaml

# (test_ofcd's daemon hands GetSchedule to the build's planner)
unit: $(TESTS) $(BUILD)/ofc-planner | $(UNIT_STAMP)
	@set -e; for t in $(TESTS); do echo "== $$t"; $$t; done

# CC and SAN: test_install builds a program against the library as built.
integration: all $(MPI_RANK) $(BUILD)/ofc-netns-exec $(PMPI_LIBS) $(MPI_CHECKS) | $(TEST_STAMP)
	@BUILD=$(BUILD) CC="$(CC)" SAN="$(SAN)" tests/integration/run.sh

# No circles between files or folders, no private header across folders;
# the map's derivable claims (callers, includes, threads, files) hold; what
# of the engines ofcd still links is each listed (check-engines.py).
layers: all
	@scripts/check-layers.py --build $(BUILD)
	@scripts/check-architecture.py
	@scripts/check-engines.py --build $(BUILD)

# make test keeps both cores busy (JOBS, the machine's by default) when it
# is called without -j, as CI calls it: the build, then the integration
# suites (tests/integration/run.sh, a pool of its own) beside the unit
# tests, and layers and check-deps as those end. The integration suites,
# the longest, start first: named after layers, they waited for it (half
# a minute on a loaded machine). The netns testbed's suites, which run.sh
# runs first and one at a time, have the unit tests beside them and
# run.sh's lanes of suites that mostly wait (see run.sh).
# Called with -j, it uses what it was given.
JOBS ?= $(shell nproc)
TEST_J = $(if $(filter -j%,$(MAKEFLAGS)),,-j$(JOBS))

test:
	@$(MAKE) --no-print-directory $(TEST_J) all $(TESTS)
	@$(MAKE) --no-print-directory $(TEST_J) integration unit layers check-deps

# Sanitizer build in its own directory; detect_leaks keeps LeakSanitizer on.
# Then ofcd's threads under ThreadSanitizer (build-tsan/, scripts/check-tsan).
check:
	@$(MAKE) --no-print-directory BUILD=build-san CC=clang \
	  SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" \
	  OPT="-O1 -g" test
	@scripts/check-tsan

bench: $(BENCHES) all $(MPI_RANK) | $(TEST_STAMP)
	@BUILD=$(BUILD) bench/run.sh

fuzz:
	@$(MAKE) --no-print-directory -f tests/fuzz/fuzz.mk BUILD=build-fuzz

format:
	clang-format -i $(SRC_ALL) $(HDR_ALL) $(TEST_SRC) $(wildcard tests/unit/*.h) $(BENCH_SRC)

clean:
	rm -rf $(BUILD) build-san build-tsan build-fuzz

# The Python client (python/ofc_client) with its protobuf modules generated
# into ofc_client.pb: protoc writes "from proto import x_pb2", which is
# rewritten to the package's own relative import.
PY_SRC = $(wildcard python/ofc_client/*.py)
python: $(BUILD)/python/ofc_client/pb/__init__.py
$(BUILD)/python/ofc_client/pb/__init__.py: $(PY_SRC) $(PROTOS) | $(STAMP)
	@echo "  PYTHON  $(BUILD)/python/ofc_client"
	$(Q)rm -rf $(BUILD)/python && mkdir -p $(BUILD)/python/gen $(BUILD)/python/ofc_client/pb
	$(Q)cp $(PY_SRC) $(BUILD)/python/ofc_client/
	$(Q)protoc -I. --python_out=$(BUILD)/python/gen $(PROTOS)
	$(Q)for f in $(BUILD)/python/gen/proto/*_pb2.py; do \
	  sed -e 's/^from proto import /from . import /' $$f >$(BUILD)/python/ofc_client/pb/$$(basename $$f) || exit 1; done
	$(Q)rm -rf $(BUILD)/python/gen
	$(Q)echo '"""Generated from proto/ by make: the ofc.v1 messages."""' >$@

# ---- install ----------------------------------------------------------------
PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
SBINDIR    ?= $(PREFIX)/sbin
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
DATADIR    ?= $(PREFIX)/share
MANDIR     ?= $(DATADIR)/man
DOCDIR     ?= $(DATADIR)/doc/ofc
# The protos, and the example configs make run and the docs use.
OFCDATADIR ?= $(DATADIR)/ofc
SYSCONFDIR ?= /etc
# systemd reads units, sysusers.d and tmpfiles.d under /usr/local/lib too.
UNITDIR    ?= $(PREFIX)/lib/systemd/system
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
TMPFILESDIR ?= $(PREFIX)/lib/tmpfiles.d
COMPLETIONDIR ?= $(DATADIR)/bash-completion/completions
# Debian's python3 looks in /usr/lib/python3/dist-packages and
# /usr/local/lib/python3.X/dist-packages.
PYVER      := $(shell python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
PYTHONDIR  ?= $(if $(filter /usr,$(PREFIX)),$(PREFIX)/lib/python3/dist-packages,$(PREFIX)/lib/python$(PYVER)/dist-packages)

# Every module's public header (never internal.h or loop.h), and the
# generated protobuf headers they include, under include/ofc/ as the
# sources name them ("topo/topo.h", "proto/fabric.pb-c.h").
PUBLIC_H = $(filter-out %/internal.h %/loop.h,$(HDR_ALL))

# ofc.pc names the paths of an install: $(BUILD)/ofc.pc this make's, and
# make install writes its own into DESTDIR (one made for another prefix,
# installed as it was, named headers the install did not put there; and a
# file in $(BUILD) made per prefix is remade by two makes at once).
PC_SED = sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	  -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' \
	  -e 's|@REQUIRES@|$(filter-out libsystemd,$(PKGS))|' -e 's|@LIBS@|-Wl,-u,netconf_driver_ops $(LPSOLVE_LIBS) -lpthread -lm|'
$(BUILD)/ofc.pc: contrib/ofc.pc.in VERSION Makefile
	@mkdir -p $(dir $@)
	$(Q)$(PC_SED) $< >$@

# The Slurm wrappers go to share/ofc/slurm, to be copied into /etc/slurm
# (docs/slurm.md); they and their env file name the ofc installed here
# ($(BINDIR)/ofc), not /usr/bin's, which a PREFIX=/usr/local install lacks.
install: all $(LIB) $(MPI_RANK) $(BUILD)/ofc-netns-exec $(PMPI_LIBS)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SBINDIR) $(DESTDIR)$(MANDIR)/man1 \
	  $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(COMPLETIONDIR) $(DESTDIR)$(UNITDIR) \
	  $(DESTDIR)$(SYSUSERSDIR) $(DESTDIR)$(TMPFILESDIR) $(DESTDIR)$(LIBDIR)/pkgconfig \
	  $(DESTDIR)$(INCLUDEDIR)/ofc/proto $(DESTDIR)$(SYSCONFDIR)/default \
	  $(DESTDIR)$(DOCDIR) $(DESTDIR)$(PYTHONDIR) $(DESTDIR)$(OFCDATADIR)/proto \
	  $(DESTDIR)$(OFCDATADIR)/configs/credentials $(DESTDIR)$(OFCDATADIR)/examples/modelw \
	  $(DESTDIR)$(OFCDATADIR)/yang $(DESTDIR)$(OFCDATADIR)/slurm $(DESTDIR)$(LIBDIR)/ofc \
	  $(DESTDIR)$(OFCDATADIR)/ui
	install -m 0755 $(BUILD)/ofc $(BUILD)/ocs-emu $(BUILD)/mrr-emu $(BUILD)/netconf-emu \
	  $(BUILD)/ofc-mpi-rank $(BUILD)/ofc-netns-exec $(DESTDIR)$(BINDIR)/
	install -m 0755 $(BUILD)/ofcd $(BUILD)/ofc-planner $(BUILD)/ofc-gateway $(BUILD)/ofc-hostd $(DESTDIR)$(SBINDIR)/
	install -m 0644 $(CLP_PLUGIN) $(NETCONF_PLUGIN) $(PMPI_LIBS) $(DESTDIR)$(LIBDIR)/ofc/
	for p in $(MAN1); do scripts/man.py $(BUILD)/$$p $$p 1 $(VERSION) docs/man/$$p.extra \
	  $(MAN_PATHS) >$(DESTDIR)$(MANDIR)/man1/$$p.1 || exit 1; done
	for p in $(MAN8); do scripts/man.py $(BUILD)/$$p $$p 8 $(VERSION) docs/man/$$p.extra \
	  $(MAN_PATHS) >$(DESTDIR)$(MANDIR)/man8/$$p.8 || exit 1; done
	chmod 0644 $(patsubst %,$(DESTDIR)$(MANDIR)/man1/%.1,$(MAN1)) \
	  $(patsubst %,$(DESTDIR)$(MANDIR)/man8/%.8,$(MAN8))
	install -m 0644 contrib/ofc.bash-completion $(DESTDIR)$(COMPLETIONDIR)/ofc
	sed -e 's|/usr/local/sbin|$(SBINDIR)|g' -e 's|/usr/local/share|$(DATADIR)|g' \
	  contrib/ofcd.service >$(DESTDIR)$(UNITDIR)/ofcd.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/ofcd.service
	sed -e 's|/usr/local/sbin|$(SBINDIR)|g' -e 's|/usr/local/share|$(DATADIR)|g' \
	  contrib/ofc-gateway.service >$(DESTDIR)$(UNITDIR)/ofc-gateway.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/ofc-gateway.service
	sed -e 's|/usr/local/sbin|$(SBINDIR)|g' -e 's|/usr/local/share|$(DATADIR)|g' \
	  contrib/ofc-hostd.service >$(DESTDIR)$(UNITDIR)/ofc-hostd.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/ofc-hostd.service
	test -e $(DESTDIR)$(SYSCONFDIR)/default/ofc-gateway || \
	  install -m 0644 contrib/ofc-gateway.conf $(DESTDIR)$(SYSCONFDIR)/default/ofc-gateway
	install -m 0644 contrib/ofc.sysusers $(DESTDIR)$(SYSUSERSDIR)/ofc.conf
	install -m 0644 contrib/ofc.tmpfiles $(DESTDIR)$(TMPFILESDIR)/ofc.conf
	test -e $(DESTDIR)$(SYSCONFDIR)/default/ofcd || \
	  install -m 0644 contrib/ofcd.conf $(DESTDIR)$(SYSCONFDIR)/default/ofcd
	install -m 0644 $(LIB) $(DESTDIR)$(LIBDIR)/libofc.a
	$(PC_SED) contrib/ofc.pc.in >$(DESTDIR)$(LIBDIR)/pkgconfig/ofc.pc
	chmod 0644 $(DESTDIR)$(LIBDIR)/pkgconfig/ofc.pc
	for h in $(PUBLIC_H); do install -D -m 0644 $$h $(DESTDIR)$(INCLUDEDIR)/ofc/$$h || exit 1; done
	install -m 0644 $(PROTO_H) $(DESTDIR)$(INCLUDEDIR)/ofc/proto/
	install -m 0644 README.md docs/*.md $(DESTDIR)$(DOCDIR)/
	install -m 0644 proto/*.proto $(DESTDIR)$(OFCDATADIR)/proto/
	install -m 0644 configs/*.yaml $(DESTDIR)$(OFCDATADIR)/configs/
	install -m 0644 configs/credentials/* $(DESTDIR)$(OFCDATADIR)/configs/credentials/
	install -m 0644 drivers/yang/*.yang $(DESTDIR)$(OFCDATADIR)/yang/
	install -m 0644 contrib/ui/* $(DESTDIR)$(OFCDATADIR)/ui/
	install -m 0644 examples/README.md $(DESTDIR)$(OFCDATADIR)/examples/
	install -m 0644 examples/modelw/*.yaml $(DESTDIR)$(OFCDATADIR)/examples/modelw/
	for f in ofc-prolog ofc-epilog ofc-task-prolog; do \
	  sed -e 's|^OFC=.*|OFC=$(BINDIR)/ofc|' \
	      -e 's|^OFC_MPI_LIB=/usr/lib/ofc/|OFC_MPI_LIB=$(LIBDIR)/ofc/|' \
	      contrib/slurm/$$f >$(DESTDIR)$(OFCDATADIR)/slurm/$$f && \
	  chmod 0755 $(DESTDIR)$(OFCDATADIR)/slurm/$$f || exit 1; done
	sed -e 's|^OFC=.*|OFC=$(BINDIR)/ofc|' \
	    -e 's|^OFC_MPI_LIB=/usr/lib/ofc/|OFC_MPI_LIB=$(LIBDIR)/ofc/|' contrib/slurm/ofc-slurm.env \
	  >$(DESTDIR)$(OFCDATADIR)/slurm/ofc-slurm.env
	chmod 0644 $(DESTDIR)$(OFCDATADIR)/slurm/ofc-slurm.env
	cp -r $(BUILD)/python/ofc_client $(DESTDIR)$(PYTHONDIR)/
	find $(DESTDIR)$(PYTHONDIR)/ofc_client -name __pycache__ -prune -exec rm -rf {} +

# ---- Debian: what install-deps installs, and the package -------------------
# check-deps: every system header the product's sources include and every
# library its programs load comes from a package install-deps' groups
# install (or hard-depend on), asked of dpkg's data, so that a machine warm
# from earlier work cannot hide a missing package (scripts/check-deps).
# CHECK_DEPS_ARGS: --install-deps FILE checks another copy's groups.
CHECK_DEPS_ARGS ?=
check-deps: all $(MPI_RANK)
	@CC="$(CC)" CXX="$(CXX)" MPICC="$(MPICC)" scripts/check-deps --build $(BUILD) \
	  --cflags "-std=c11 -D_GNU_SOURCE -I. -I$(BUILD)/gen $(PKG_CFLAGS)" \
	  --cxxflags "-std=c++11 -I. $(shell pkg-config --cflags $(CLP_PC))" $(CHECK_DEPS_ARGS)

# deb: ofc_VERSION_ARCH.deb in $(BUILD), the Debian way (debian/: dh runs
# this Makefile's all and install, PREFIX=/usr) with Debian's hardening
# flags, then lintian (its errors fail, warnings are listed in
# docs/debian.md). debian/rules build and binary as dpkg-buildpackage -b
# runs them (Rules-Requires-Root: no, so no fakeroot), without the .changes
# it would write beside the tree. When this build's flags are the package's
# (the default OPT and LDOPT), dh's make finds $(BUILD) made and the package
# holds what the tests ran; other flags (OPT=-O0, a sanitizer) build the
# package into $(BUILD)-deb instead, leaving $(BUILD) as it is.
DEB_FLAG  = $(shell DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --get $(1))
DEB_FLAGS = $(strip $(call DEB_FLAG,CFLAGS) $(call DEB_FLAG,CPPFLAGS) | $(call DEB_FLAG,LDFLAGS))
DEB_ARCH  = $(shell dpkg --print-architecture)
DEB       = $(BUILD)/ofc_$(VERSION)_$(DEB_ARCH).deb
DEB_STAMP = $(BUILD)/.deps-deb-ok
$(DEB_STAMP): scripts/install-deps.sh | $(STAMP) $(MPI_STAMP)
	@scripts/install-deps.sh deb
	@mkdir -p $(BUILD) && touch $@
deb: | $(DEB_STAMP)
	@v=$$(dpkg-parsechangelog -S Version) && [ "$$v" = "$(VERSION)" ] || \
	  { echo "make deb: debian/changelog's version is $$v, VERSION's $(VERSION): add an entry (dch -v $(VERSION))" >&2; exit 1; }
	@dpkg-checkbuilddeps
	@rm -f $(DEB)
	$(Q)b=$(BUILD); [ "$(strip $(OPT) | $(LDOPT) $(ARCH) $(SAN))" = "$(DEB_FLAGS)" ] || b=$(BUILD)-deb; \
	  echo "  DEB     building in $$b" && \
	  OFC_BUILD=$$b OFC_DEBDIR=$(BUILD) DEB_BUILD_OPTIONS="parallel=$(JOBS) $(DEB_BUILD_OPTIONS)" \
	  debian/rules build >$(BUILD)/deb.log 2>&1 || { tail -30 $(BUILD)/deb.log >&2; exit 1; }; \
	  OFC_BUILD=$$b OFC_DEBDIR=$(BUILD) debian/rules binary >>$(BUILD)/deb.log 2>&1 || \
	  { tail -30 $(BUILD)/deb.log >&2; exit 1; }
	@echo "  DEB     $(DEB)"
	$(Q)lintian --fail-on error $(DEB)
clean: clean-deb
clean-deb:
	rm -rf $(BUILD)-deb debian/ofc debian/.debhelper debian/files debian/*.substvars \
	  debian/debhelper-build-stamp

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
