# libFuzzer builds of the input parsers (make fuzz): every tests/fuzz/fuzz_NAME.c
# is a target, seeded from tests/fuzz/corpus/NAME. Run one for a while (new
# units go to the first directory):
#   mkdir -p build-fuzz/c-NAME
#   build-fuzz/fuzz_NAME build-fuzz/c-NAME tests/fuzz/corpus/NAME -max_total_time=60
# e.g. NAME = config, topo, edges, control, tl1, mrr, demands, records,
# statefiles, credentials, schedule_pb, exec, json, netconf (the YANG
# modules are built in). Three take options:
#   fuzz_config: -dict=tests/fuzz/config.dict (the keys of server fabrics,
#   partitions and failures, so mutations reach their validation);
#   fuzz_control: -detect_leaks=0 (the daemon it fuzzes lives for the whole
#   run, so leak checks at exit do not apply);
#   fuzz_exec: -timeout=60 (it runs the executor's threads over loopback TCP,
#   a few hundred inputs a second).
BUILD   ?= build-fuzz
FLAGS    = -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
SAN_LIB  = -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
FUZZERS  = $(patsubst tests/fuzz/%.c,$(BUILD)/%,$(wildcard tests/fuzz/fuzz_*.c))

all: $(FUZZERS)

lib:
	@$(MAKE) --no-print-directory BUILD=$(BUILD) CC=clang OPT="-O1 -g" SAN="$(SAN_LIB)" $(BUILD)/libofc.a

$(BUILD)/fuzz_%: tests/fuzz/fuzz_%.c lib
	clang $(FLAGS) -std=c11 -D_GNU_SOURCE -I. -I$(BUILD)/gen $< $(BUILD)/libofc.a -o $@ \
	  $$(pkg-config --libs yaml-0.1 libprotobuf-c libnl-3.0 libnl-route-3.0 libyang json-c libmicrohttpd gnutls nauty libnetconf2 libssh) -llpsolve55 -lcolamd -ldl -lpthread -lm

.PHONY: all lib
