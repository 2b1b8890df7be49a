# eosaudit - see README.md.  `make run` and `make test` are the two entry points.

CC      ?= cc
PKGS    := libmicrohttpd sqlite3 jansson
WARN    := -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes \
           -Wmissing-prototypes -Wformat=2 -Wformat-security -Wvla -fno-common
WERROR  ?= 1
OPT     ?= -O2 -g
CFLAGS  ?= $(OPT)
CFLAGS  += -std=c11 -D_GNU_SOURCE $(WARN) $(if $(filter 1,$(WERROR)),-Werror)
LDLIBS  += -lpthread -lm

# librdkafka allocates and frees every header of every record it hands
# out; glibc's malloc made that half of a scan's CPU time (perf), and
# tcmalloc halves it.  Sanitizer builds keep the allocator ASan brings.
ALLOC_LIBS ?= -ltcmalloc_minimal

# make SANITIZE=address,undefined test
ifneq ($(SANITIZE),)
ALLOC_LIBS :=
CFLAGS  += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS += -fsanitize=$(SANITIZE)
BUILD   ?= build-san
endif
BUILD   ?= build

# Quiet build lines ("CC file.c"); `make V=1` shows the whole commands.
ifeq ($(V),1)
Q :=
quiet = @true
else
Q := @
quiet = @printf '  %-6s %s\n'
endif

# What deploy/install-deps.sh installed, as make variables: librdkafka's
# flags come from deploy/librdkafka.sh (the system's librdkafka when it is
# >= 2.10, else the one it built into a cache outside the tree, linked
# with an rpath), the others from pkg-config.  Written once by the deps
# step and read back here (make restarts after writing it).
DEPS_STAMP := $(BUILD)/deps.mk
ifeq ($(filter clean,$(MAKECMDGOALS)),)
-include $(DEPS_STAMP)
endif
PKG_CFLAGS  = $(RDKAFKA_CFLAGS) $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS    = $(RDKAFKA_LIBS) $(shell pkg-config --libs $(PKGS) 2>/dev/null)

# Layers, lowest first (see docs/INTERNALS.md "Layers"): base, dedup, auditor,
# http, producer, cmd.  The library is all of them but cmd/main.c.
BASE_SRC    := $(wildcard base/*.c)
DEDUP_SRC   := $(wildcard dedup/*.c)
AUDITOR_SRC := $(wildcard auditor/*/*.c)
CMD_SRC     := $(filter-out cmd/main.c,$(wildcard cmd/*.c))
HTTP_SRC    := $(wildcard http/*.c)
PROD_SRC    := $(wildcard producer/*.c)
LIB_SRC     := $(BASE_SRC) $(DEDUP_SRC) $(AUDITOR_SRC) $(HTTP_SRC) $(PROD_SRC) $(CMD_SRC)
# Generated at build time into $(BUILD)/gen/, never committed.
GEN_OBJ     := $(BUILD)/gen/migrations.o $(BUILD)/gen/index_html.o
LIB_OBJ     := $(LIB_SRC:%.c=$(BUILD)/%.o) $(GEN_OBJ)
MIGRATIONS  := $(sort $(wildcard schema/[0-9][0-9][0-9][0-9]_*.sql))
TEST_SRC    := $(wildcard tests/test_*.c)
TESTS       := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
BENCH_SRC   := $(wildcard bench/*.c)
BENCHES     := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)
# The Java producer interceptor, built by Maven (rule below).
INTERCEPTOR_JAR := $(BUILD)/eosaudit-interceptor.jar
INTERCEPTOR_SRC := interceptor/pom.xml $(shell find interceptor/src -type f 2>/dev/null)

.PHONY: all deps run test unit-test unit-build unit-run sanitize-unit-test integration-test bench fuzz clean
# Keep objects of tests and benchmarks between runs.
.SECONDARY:
all: $(BUILD)/eosaudit $(INTERCEPTOR_JAR)

deps: $(DEPS_STAMP)
$(DEPS_STAMP): deploy/install-deps.sh deploy/librdkafka.sh
	@./deploy/install-deps.sh
	@mkdir -p $(@D)
	@./deploy/librdkafka.sh make-vars >$@.tmp && mv $@.tmp $@

$(BUILD)/%.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(quiet) CC $<
	$(Q)$(CC) $(CFLAGS) $(PKG_CFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/gen/migrations.c: schema/embed.sh $(MIGRATIONS)
	@mkdir -p $(@D)
	$(quiet) GEN $@
	$(Q)./schema/embed.sh $(MIGRATIONS) > $@.tmp && mv $@.tmp $@

# The dashboard page as bytes, served at /.
$(BUILD)/gen/index_html.c: http/embed.sh http/index.html
	@mkdir -p $(@D)
	$(quiet) GEN $@
	$(Q)./http/embed.sh http/index.html > $@.tmp && mv $@.tmp $@

$(GEN_OBJ): %.o: %.c
	$(quiet) CC $<
	$(Q)$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/libeosaudit.a: $(LIB_OBJ)
	@rm -f $@
	$(quiet) AR $@
	$(Q)$(AR) rcs $@ $^

$(BUILD)/eosaudit: $(BUILD)/cmd/main.o $(BUILD)/libeosaudit.a
	$(quiet) LD $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) $(ALLOC_LIBS) $(LDLIBS)

$(BUILD)/tests/%: $(BUILD)/tests/%.o $(BUILD)/libeosaudit.a
	$(quiet) LD $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) -lcmocka $(LDLIBS)

$(BUILD)/bench/%: $(BUILD)/bench/%.o $(BUILD)/libeosaudit.a
	$(quiet) LD $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) $(LDLIBS)

# The Java producer interceptor (interceptor/, docs/INTERCEPTOR.md).  Maven
# runs offline first, so that a warm ~/.m2 builds with no network at all;
# only a cold one goes to Maven Central (kafka-clients and the plugins,
# once).  `clean package`: a deleted source leaves no class behind.
INTERCEPTOR_MVN  = mvn -q -B -f interceptor/pom.xml \
                   -Dinterceptor.build.dir=$(abspath $(BUILD))/interceptor clean package

$(INTERCEPTOR_JAR): $(INTERCEPTOR_SRC) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(quiet) MVN $@
	$(Q)$(INTERCEPTOR_MVN) -o >$(BUILD)/interceptor.log 2>&1 || \
		$(INTERCEPTOR_MVN) >$(BUILD)/interceptor.log 2>&1 || \
		{ cat $(BUILD)/interceptor.log >&2; exit 1; }
	$(Q)cp $(BUILD)/interceptor/eosaudit-interceptor.jar $@

run: $(BUILD)/eosaudit
	@$(BUILD)/eosaudit demo

# Unit tests (cmocka, no broker), then the integration tests, which start
# a real Apache Kafka broker when none is running and stop it afterwards.
# The unit test programs mostly wait (time-outs) while a build is all
# CPU, so each run goes beside the next build: the plain unit tests
# beside the sanitizer's build, the sanitizer's unit tests beside the
# interceptor's Maven build.  A run's output is shown when it ends.
SAN_MAKE := $(MAKE) --no-print-directory SANITIZE=address,undefined
# $(call beside,RUN,BUILD,NAME): both at once; fails if either failed.
beside = { $(1); } >$(BUILD)/$(3).out 2>&1 & pid=$$!; \
	b=0; $(2) || b=$$?; u=0; wait $$pid || u=$$?; \
	cat $(BUILD)/$(3).out; [ $$u = 0 ] && [ $$b = 0 ]
test:
	@$(MAKE) --no-print-directory unit-build
ifeq ($(SANITIZE),)
	@$(call beside,$(MAKE) --no-print-directory unit-run,$(SAN_MAKE) unit-build,unit-run)
	@$(call beside,$(SAN_MAKE) unit-run,$(MAKE) --no-print-directory $(INTERCEPTOR_JAR),san-unit-run)
else
	@$(call beside,$(MAKE) --no-print-directory unit-run,$(MAKE) --no-print-directory $(INTERCEPTOR_JAR),unit-run)
endif
	@$(MAKE) --no-print-directory integration-test

# The unit tests once more under ASan and UBSan (build-san/), unless this
# run is already a sanitizer build.
sanitize-unit-test:
ifeq ($(SANITIZE),)
	@$(MAKE) --no-print-directory SANITIZE=address,undefined unit-test
endif

# The programs run four at a time (tests/run_unit.sh): they mostly wait.
# Built two jobs at a time unless make was given -j already.
unit-test: unit-build
	@$(MAKE) --no-print-directory unit-run

unit-build:
	@$(MAKE) --no-print-directory $(if $(filter -j%,$(MAKEFLAGS)),,-j2) $(TESTS) $(BUILD)/eosaudit

unit-run:
	@./tests/check_banned.sh
	@./tests/check_layers.sh
	@./tests/check_calls.sh $(BUILD)
	@./tests/run_unit.sh $(TESTS)

integration-test: $(BUILD)/eosaudit $(INTERCEPTOR_JAR)
	@BUILD=$(BUILD) ./tests/integration/run.sh

# The container image, the compose stack and a fresh machine, with Podman
# (also part of integration-test): tests/integration/t_95..t_97.
.PHONY: image-test
image-test: $(BUILD)/eosaudit
	@BUILD=$(BUILD) ./tests/integration/run.sh 95_image 96_compose 97_fresh_machine

# The C sources rewritten in the house style (.clang-format); not part of
# make test (tests/check_format.sh lists what it would change).
.PHONY: format
format:
	@./tests/check_format.sh --fix

bench: $(BENCHES)
	@set -e; for b in $(BENCHES); do $$b; done

clean:
	rm -rf build build-san build-fuzz

# Fragments: the broker (kafka-up/-down), fuzzing (fuzz), installation
# (install, uninstall).
-include deploy/kafka/kafka.mk
-include tests/fuzz/fuzz.mk
-include deploy/install.mk
-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
