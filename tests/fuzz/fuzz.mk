# libFuzzer (clang): make fuzz [FUZZ_SECONDS=600] runs every target below
# for FUZZ_SECONDS each, one after the other.  New inputs go to
# build-fuzz/corpus-*; copy the interesting ones into tests/fuzz/corpus/
# so that test_fuzz_replay keeps running them.
#
#   fuzz_hdrs   record headers -> header parser -> engine (dedup/ only)
#   fuzz_query  query strings, cursors and --listen addresses -> http/'s
#               pure parsers -> the ledger queries of the API handlers
#               (links the whole library: SQLite, jansson, ...)
#
# UBSan findings abort (-fno-sanitize-recover), or libFuzzer would only
# print them and go on.
FUZZ_SECONDS ?= 600
FUZZ_TARGETS := hdrs query
FUZZ_CFLAGS := -g -O1 -std=c11 -D_GNU_SOURCE \
               -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
FUZZ_QUERY_SRC := $(LIB_SRC) build-fuzz/gen/migrations.c \
                  build-fuzz/gen/index_html.c

build-fuzz/fuzz_hdrs: tests/fuzz/fuzz_hdrs.c $(DEDUP_SRC) dedup/dedup.h
	@mkdir -p $(@D)
	clang $(FUZZ_CFLAGS) -o $@ tests/fuzz/fuzz_hdrs.c $(DEDUP_SRC)

build-fuzz/gen/migrations.c: schema/embed.sh $(MIGRATIONS)
	@mkdir -p $(@D)
	./schema/embed.sh $(MIGRATIONS) > $@.tmp && mv $@.tmp $@

build-fuzz/gen/index_html.c: http/embed.sh http/index.html
	@mkdir -p $(@D)
	./http/embed.sh http/index.html > $@.tmp && mv $@.tmp $@

build-fuzz/fuzz_query: tests/fuzz/fuzz_query.c $(FUZZ_QUERY_SRC) \
                       $(wildcard base/*.h dedup/*.h auditor/*.h auditor/*/*.h http/*.h producer/*.h cmd/*.h)
	@mkdir -p $(@D)
	clang $(FUZZ_CFLAGS) $(PKG_CFLAGS) -o $@ tests/fuzz/fuzz_query.c \
	        $(FUZZ_QUERY_SRC) $(PKG_LIBS) $(LDLIBS)

fuzz: $(FUZZ_TARGETS:%=build-fuzz/fuzz_%)
	@set -e; for t in $(FUZZ_TARGETS); do \
	        mkdir -p build-fuzz/corpus-$$t; \
	        echo "== fuzz_$$t for $(FUZZ_SECONDS) s"; \
	        build-fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
	                -dict=tests/fuzz/$$t.dict \
	                build-fuzz/corpus-$$t tests/fuzz/corpus/$$t; \
	done
