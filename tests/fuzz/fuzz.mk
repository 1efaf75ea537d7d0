# libFuzzer builds of the input parsers (make fuzz). Run one for a while:
#   mkdir -p build-fuzz/c1 build-fuzz/c2  (new units go to the first directory)
#   build-fuzz/fuzz_config build-fuzz/c1 tests/fuzz/corpus/config -max_total_time=60
#   build-fuzz/fuzz_topo build-fuzz/c2 tests/fuzz/corpus/topo -max_total_time=60
#   build-fuzz/fuzz_control build-fuzz/c3 tests/fuzz/corpus/control -max_total_time=60 -detect_leaks=0
#   build-fuzz/fuzz_tl1 build-fuzz/c4 tests/fuzz/corpus/tl1 -max_total_time=60
#   build-fuzz/fuzz_mrr build-fuzz/c5 tests/fuzz/corpus/mrr -max_total_time=60
#   build-fuzz/fuzz_demands build-fuzz/c6 tests/fuzz/corpus/demands -max_total_time=60
#   build-fuzz/fuzz_records build-fuzz/c7 tests/fuzz/corpus/records -max_total_time=60
#   build-fuzz/fuzz_credentials build-fuzz/c8 tests/fuzz/corpus/credentials -max_total_time=60
#   build-fuzz/fuzz_edges build-fuzz/c9 tests/fuzz/corpus/edges -max_total_time=60
#   build-fuzz/fuzz_statefiles build-fuzz/c10 tests/fuzz/corpus/statefiles -max_total_time=60
#   (the daemon fuzz_control fuzzes lives for the whole run, so leak checks at exit do not apply)
BUILD   ?= build-fuzz
FLAGS    = -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
SAN_LIB  = -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all

all: $(BUILD)/fuzz_config $(BUILD)/fuzz_topo $(BUILD)/fuzz_control $(BUILD)/fuzz_tl1 \
     $(BUILD)/fuzz_mrr $(BUILD)/fuzz_demands $(BUILD)/fuzz_records $(BUILD)/fuzz_credentials \
     $(BUILD)/fuzz_edges $(BUILD)/fuzz_statefiles

lib:
	@$(MAKE) --no-print-directory BUILD=$(BUILD) CC=clang OPT="-O1 -g" SAN="$(SAN_LIB)" $(BUILD)/libofc.a

$(BUILD)/fuzz_%: tests/fuzz/fuzz_%.c lib
	clang $(FLAGS) -std=c11 -D_GNU_SOURCE -I. -I$(BUILD)/gen $< $(BUILD)/libofc.a -o $@ \
	  $$(pkg-config --libs yaml-0.1 libprotobuf-c libnl-3.0 libnl-route-3.0) -llpsolve55 -lcolamd -ldl -lpthread -lm

.PHONY: all lib
