# ofc — optical fabric controller.
#
#   make            build build/ofc (installs missing Debian packages first)
#   make run        validate and show an example fabric
#   make test       build and run every unit and integration test
#   make check      the tests under AddressSanitizer + UndefinedBehaviorSanitizer
#   make bench      benchmarks (results are recorded in bench/RESULTS.md)
#   make fuzz       build the libFuzzer targets (clang)
#
# BUILD=dir selects the output directory, so several builds (sanitizers, a
# helper's worktree) never share objects.

BUILD    ?= build
CC       ?= cc
OPT      ?= -O2 -g
SAN      ?=
V        ?= 0
Q         = $(if $(filter 1,$(V)),,@)
CSTD      = -std=c11 -D_GNU_SOURCE
WARN      = -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
            -Wformat=2 -Wno-format-nonliteral -Wvla -Wpointer-arith \
            -Wno-missing-field-initializers
PKGS      = yaml-0.1 libprotobuf-c libnl-3.0 libnl-route-3.0 libnl-genl-3.0
# lp_solve ships no pkg-config file: its headers live in /usr/include/lpsolve
# and the static library needs COLAMD (suitesparse) and libdl.
LPSOLVE_LIBS = -llpsolve55 -lcolamd -ldl

# Recursive (=) so pkg-config runs only after the dependency stamp is built.
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS))
PKG_LIBS   = $(shell pkg-config --libs $(PKGS))
CFLAGS_ALL = $(CSTD) $(OPT) $(SAN) $(WARN) -I. -I$(BUILD)/gen $(PKG_CFLAGS) -MMD -MP
LDLIBS_ALL = $(PKG_LIBS) $(LPSOLVE_LIBS) -lpthread -lm

MODULES  = util topo sched rwa optree fluid drivers controller
# Modules may hold sub-folders (controller/cli/, drivers/emu/, ...).
SRC_ALL  = $(sort $(shell find $(MODULES) -name '*.c'))
HDR_ALL  = $(sort $(shell find $(MODULES) -name '*.h'))
MAIN_SRC = $(filter %_main.c,$(SRC_ALL))
LIB_SRC  = $(filter-out %_main.c,$(SRC_ALL))
# foo_bar_main.c builds $(BUILD)/foo-bar.
BINS     = $(foreach f,$(MAIN_SRC),$(BUILD)/$(subst _,-,$(patsubst %_main.c,%,$(notdir $(f)))))

PROTOS   = $(wildcard proto/*.proto)
PROTO_C  = $(patsubst proto/%.proto,$(BUILD)/gen/proto/%.pb-c.c,$(PROTOS))
PROTO_H  = $(PROTO_C:.c=.h)

LIB_OBJ  = $(patsubst %.c,$(BUILD)/obj/%.o,$(LIB_SRC)) $(PROTO_C:.c=.o)
LIB      = $(BUILD)/libofc.a

TEST_SRC = $(wildcard tests/unit/test_*.c)
TESTS    = $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(TEST_SRC))
TESTLIB_SRC = $(filter-out tests/unit/test_%.c,$(wildcard tests/unit/*.c))

BENCH_SRC = $(wildcard bench/*.c)
BENCHES   = $(patsubst bench/%.c,$(BUILD)/bench/%,$(BENCH_SRC))

STAMP    = $(BUILD)/.deps-ok

.PHONY: all run test unit cli check bench fuzz clean deps format
.DEFAULT_GOAL := all
# Keep generated protobuf sources and test objects: they are not throwaway.
.SECONDARY:

all: $(BINS)

# Install the Debian packages when any is missing; the stamp keeps this to once.
deps: $(STAMP)
$(STAMP): scripts/install-deps.sh
	@scripts/install-deps.sh
	@mkdir -p $(BUILD) && touch $@

# Generated C is never an intermediate to delete: a missing header next to
$(BUILD)/gen/proto/%.pb-c.c $(BUILD)/gen/proto/%.pb-c.h: proto/%.proto | $(STAMP)
	@mkdir -p $(BUILD)/gen
	@echo "  PROTOC  $<"
	$(Q)protoc-c --c_out=$(BUILD)/gen $<

$(BUILD)/obj/%.o: %.c | $(STAMP) $(PROTO_H)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(CFLAGS_ALL) -c $< -o $@

# Generated protobuf C is not ours to lint: no -Werror extras there.
$(BUILD)/gen/proto/%.pb-c.o: $(BUILD)/gen/proto/%.pb-c.c $(BUILD)/gen/proto/%.pb-c.h
	@echo "  CC      $<"
	$(Q)$(CC) $(CSTD) $(OPT) $(SAN) -I$(BUILD)/gen $(PKG_CFLAGS) -c $< -o $@

$(LIB): $(LIB_OBJ)
	@rm -f $@
	@echo "  AR      $@"
	$(Q)ar rcs $@ $^

define main_rule
$(BUILD)/$(subst _,-,$(patsubst %_main.c,%,$(notdir $(1)))): $(BUILD)/obj/$(1:.c=.o) $(LIB)
	@echo "  LD      $$@"
	$$(Q)$$(CC) $$(OPT) $$(SAN) $$^ -o $$@ $$(LDLIBS_ALL)
endef
$(foreach f,$(MAIN_SRC),$(eval $(call main_rule,$(f))))

TESTLIB_OBJ = $(patsubst %.c,$(BUILD)/obj/%.o,$(TESTLIB_SRC))
$(BUILD)/tests/%: $(BUILD)/obj/tests/unit/%.o $(TESTLIB_OBJ) $(LIB)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(OPT) $(SAN) $^ -o $@ $(LDLIBS_ALL) -lcmocka

$(BUILD)/bench/%: $(BUILD)/obj/bench/%.o $(LIB)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(OPT) $(SAN) $^ -o $@ $(LDLIBS_ALL)

# The main job on an example config: validate, schedule, reconfigure an
# emulated OCS (scripts/demo.sh).
run: all
	@BUILD=$(BUILD) scripts/demo.sh configs/torus64-ocs.yaml

unit: $(TESTS)
	@set -e; for t in $(TESTS); do echo "== $$t"; $$t; done

cli: all
	@BUILD=$(BUILD) tests/cli/run.sh

test: all $(TESTS)
	@$(MAKE) --no-print-directory unit cli

# Sanitizer build in its own directory; detect_leaks keeps LeakSanitizer on.
check:
	@$(MAKE) --no-print-directory BUILD=build-san CC=clang \
	  SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" \
	  OPT="-O1 -g" test

bench: $(BENCHES) all
	@BUILD=$(BUILD) bench/run.sh

fuzz:
	@$(MAKE) --no-print-directory -f tests/fuzz/fuzz.mk BUILD=build-fuzz

format:
	clang-format -i $(SRC_ALL) $(HDR_ALL) $(TEST_SRC) $(wildcard tests/unit/*.h) $(BENCH_SRC)

clean:
	rm -rf $(BUILD) build-san build-fuzz

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
