# libFuzzer (clang): make fuzz [FUZZ_SECONDS=600].  New inputs go to
# build-fuzz/corpus-*; copy the interesting ones into tests/fuzz/corpus/
# so that test_fuzz_replay keeps running them.
FUZZ_SECONDS ?= 600
FUZZ_CFLAGS := -g -O1 -std=c11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined
build-fuzz/fuzz_hdrs: tests/fuzz/fuzz_hdrs.c $(DEDUP_SRC) dedup/dedup.h
	@mkdir -p $(@D)
	clang $(FUZZ_CFLAGS) -o $@ tests/fuzz/fuzz_hdrs.c $(DEDUP_SRC)

fuzz: build-fuzz/fuzz_hdrs
	@mkdir -p build-fuzz/corpus-hdrs
	build-fuzz/fuzz_hdrs -max_total_time=$(FUZZ_SECONDS) \
	        -dict=tests/fuzz/hdrs.dict build-fuzz/corpus-hdrs tests/fuzz/corpus/hdrs

