# app-server: a C daemon speaking the Codex app-server JSON-RPC protocol (v2) over stdio.
#
#   make            build build/app-server
#   make run        install missing packages, build, serve JSON-RPC on stdin/stdout
#   make test       install missing packages, build, run every test (plain and ASan/UBSan,
#                   and every libFuzzer target over its committed corpus)
#   make schema     regenerate schema/ (JSON Schema) and the clients' TS/Python types from protocol/
#   make schema-check  fail when the committed schema/ or client types are stale
#   make clients-test  the TypeScript and Python clients' and codex-acp's suites against build/app-server
#   make bench      run the benchmarks (figures go to docs/benchmarks.md by hand)
#   make install    PREFIX=/usr/local DESTDIR=

PREFIX  ?= /usr/local
DESTDIR ?=
CC      ?= cc
BUILD   ?= build
SAN     ?= $(BUILD)/san

PKGS     := jansson libcurl libseccomp sqlite3
WARN     := -Wall -Wextra -Werror -Wshadow -Wformat=2 -Wno-unused-parameter -Wno-missing-field-initializers
BASEFLAGS := -std=gnu11 -D_GNU_SOURCE -I. -Iserver \
	$(shell pkg-config --cflags $(PKGS) 2>/dev/null)
OPT      ?= -O2 -g
CFLAGS   ?=
# libwslay and libhttp-parser ship no .pc file in Debian 12: named directly. The libraries with
# an archive in their Debian -dev package are linked from it (docs/architecture.md,
# "Dependencies"): nothing of theirs to map and bind at each start, and of libcrypto only its SHA
# objects. libwslay ships no archive; libcurl (named for the tests that call it; the daemon
# loads it when its first request needs it, server/io/http.c) stays shared.
STATIC_LIBS := -lev -ljansson -lseccomp -lsqlite3 -lhttp_parser -lcrypto
LDLIBS   := -Wl,-Bstatic $(STATIC_LIBS) -Wl,-Bdynamic $(shell pkg-config --libs libcurl 2>/dev/null) \
	-lwslay -lutil -lpthread -lm
SANFLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

# Sources are found, never listed: every .c under these folders, at any depth (sub-folders such
# as server/agent/patch/ included). $(call rwildcard,DIRS,PATTERN) is a recursive $(wildcard).
rwildcard = $(foreach d,$(wildcard $(addsuffix /*,$(1))),$(call rwildcard,$(d),$(2)) $(filter $(subst *,%,$(2)),$(d)))
SRC_DIRS := protocol sandbox server
CORE_SRC := $(sort $(filter-out server/main.c,$(call rwildcard,$(SRC_DIRS),*.c)))
UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c tests/unit/*/test_*.c))
INT_SRC  := $(sort $(wildcard tests/integration/test_*.c))
HARNESS  := $(sort $(filter-out $(INT_SRC),$(wildcard tests/integration/*.c)))
BENCH_SRC := $(sort $(wildcard bench/*.c))
BENCH_LIB := $(sort $(wildcard bench/lib/*.c))
HELPER_SRC := $(sort $(wildcard tests/helpers/*.c))
CLI_SRC  := $(sort $(wildcard clients/cli/*.c))

# The client libraries' generated types (make schema writes them, make schema-check diffs them).
TS_TYPES := clients/typescript/src/protocol.ts
PY_TYPES := clients/python/app_server_client/protocol.py

# The tally of make test (scripts/tally.sh): every suite adds its counts here.
export TALLY := $(CURDIR)/$(BUILD)/tally.tsv
TALLY_ADD = sh $(CURDIR)/scripts/tally.sh add

# Quiet rules: one short line per step ("  CC   build/obj/server/agent/agent.o"); a step that
# fails prints its whole command after the compiler's messages. V=1 prints every command.
V ?= 0
ifeq ($(V),1)
quiet = $(2)
else
quiet = @printf '  %-4s %s\n' '$(1)' '$@'; $(2) || { echo 'make: this command failed:'; echo '$(2)'; exit 1; }
endif

# $(call objs,DIR,SOURCES)
objs = $(patsubst %.c,$(1)/obj/%.o,$(2))

.PHONY: all build-all check-layout methods-check clients-test newcomer-check run test deps reference bare-check schema schema-check unit integration suite san-test san-unit san-integration bench install clean format format-check

all: $(BUILD)/app-server $(BUILD)/app-client

deps:
	@sh scripts/deps.sh

# stdout carries protocol lines only: everything make and the compiler say goes to stderr.
run: deps
	@$(MAKE) --no-print-directory all >&2
	@BUILD=$(BUILD) exec scripts/run.sh

# --- objects, in two flavours: plain ($(BUILD)) and sanitized ($(SAN)) ----------------------------
# Each object depends on the headers it really includes (-MMD: the .d files read below).
$(BUILD)/obj/%.o: %.c Makefile
	@mkdir -p $(dir $@)
	$(call quiet,CC,$(CC) $(BASEFLAGS) $(WARN) $(OPT) $(CFLAGS) -MMD -MP -c $< -o $@)

$(SAN)/obj/%.o: %.c Makefile
	@mkdir -p $(dir $@)
	$(call quiet,CC,$(CC) $(BASEFLAGS) $(WARN) $(SANFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

$(BUILD)/libcore.a: $(call objs,$(BUILD),$(CORE_SRC))
	@rm -f $@
	$(call quiet,AR,ar rcs $@ $^)

$(SAN)/libcore.a: $(call objs,$(SAN),$(CORE_SRC))
	@rm -f $@
	$(call quiet,AR,ar rcs $@ $^)

# Code mode's host program is assembled into this object (.incbin): rebuilt when it changes.
$(BUILD)/obj/server/agent/codemode/codemode_js.o $(SAN)/obj/server/agent/codemode/codemode_js.o: server/agent/codemode/codemode_host.js

$(BUILD)/app-server: $(BUILD)/obj/server/main.o $(BUILD)/libcore.a
	$(call quiet,LD,$(CC) $(OPT) -o $@ $^ $(LDLIBS))

$(SAN)/app-server: $(SAN)/obj/server/main.o $(SAN)/libcore.a
	$(call quiet,LD,$(CC) $(SANFLAGS) -o $@ $^ $(LDLIBS))

# The terminal client: clients/cli/*.c on the same core library (buffers, base64, line splitting).
$(BUILD)/app-client: $(call objs,$(BUILD),$(CLI_SRC)) $(BUILD)/libcore.a
	$(call quiet,LD,$(CC) $(OPT) -o $@ $^ $(LDLIBS) -ledit)

$(SAN)/app-client: $(call objs,$(SAN),$(CLI_SRC)) $(SAN)/libcore.a
	$(call quiet,LD,$(CC) $(SANFLAGS) -o $@ $^ $(LDLIBS) -ledit)

# Unit tests: one binary per tests/unit/test_*.c, linked with the core library.
$(BUILD)/tests/%: $(BUILD)/obj/tests/unit/%.o $(BUILD)/libcore.a
	@mkdir -p $(dir $@)
	$(call quiet,LD,$(CC) $(OPT) -o $@ $^ $(LDLIBS) -lcmocka)

$(SAN)/tests/%: $(SAN)/obj/tests/unit/%.o $(SAN)/libcore.a
	@mkdir -p $(dir $@)
	$(call quiet,LD,$(CC) $(SANFLAGS) -o $@ $^ $(LDLIBS) -lcmocka)

# Integration tests: the harness drives the real binary over pipes.
$(BUILD)/itests/%: $(BUILD)/obj/tests/integration/%.o $(call objs,$(BUILD),$(HARNESS)) $(BUILD)/libcore.a
	@mkdir -p $(dir $@)
	$(call quiet,LD,$(CC) $(OPT) -o $@ $^ $(LDLIBS) -lcmocka)

$(BUILD)/suite-runner: $(BUILD)/obj/tests/schema_suite/run_suite.o $(BUILD)/libcore.a
	$(call quiet,LD,$(CC) $(OPT) -o $@ $^ $(LDLIBS))

$(BUILD)/bench/%: $(BUILD)/obj/bench/%.o $(call objs,$(BUILD),$(BENCH_LIB)) $(BUILD)/libcore.a
	@mkdir -p $(dir $@)
	$(call quiet,LD,$(CC) $(OPT) -o $@ $^ $(LDLIBS))

# Small standalone programs the tests run (e.g. inside a sandbox), no core library.
$(BUILD)/helpers/%: tests/helpers/%.c Makefile
	@mkdir -p $(dir $@)
	$(call quiet,CC,$(CC) $(BASEFLAGS) $(WARN) $(OPT) $(CFLAGS) -o $@ $< $(LDLIBS))

HELPER_BINS   := $(patsubst tests/helpers/%.c,$(BUILD)/helpers/%,$(HELPER_SRC))
UNIT_BINS     := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRC))
SAN_UNIT_BINS := $(patsubst tests/unit/%.c,$(SAN)/tests/%,$(UNIT_SRC))
INT_BINS      := $(patsubst tests/integration/%.c,$(BUILD)/itests/%,$(INT_SRC))
BENCH_BINS    := $(patsubst bench/%.c,$(BUILD)/bench/%,$(BENCH_SRC))

# --- schema: generated from protocol/ by the binary itself -------------------------------------
schema: $(BUILD)/app-server
	rm -rf schema $(TS_TYPES) $(PY_TYPES)
	./$(BUILD)/app-server generate-json-schema --out schema
	./$(BUILD)/app-server generate-ts --out $(dir $(TS_TYPES))
	./$(BUILD)/app-server generate-python --out $(dir $(PY_TYPES))

# docs/protocol.md's table of every upstream method, as the daemon answers them now.
methods-check: reference $(BUILD)/app-server
	@$(REFENV) if [ -n "$${APP_SERVER_REFERENCE_SCHEMA:-}" ] && [ -d "$$APP_SERVER_REFERENCE_SCHEMA-experimental" ]; then \
		python3 scripts/method-status.py $(BUILD)/app-server "$$APP_SERVER_REFERENCE_SCHEMA-experimental" --check docs/protocol.md && \
			$(TALLY_ADD) method-status 1 0 || { $(TALLY_ADD) method-status 0 1; exit 1; }; \
	else echo "methods-check: SKIPPED: no experimental reference schema beside the stable one"; \
		$(TALLY_ADD) method-status 0 0 1 "no experimental reference schema beside the stable one"; fi

# The layout check, then its own test (each kind of violation planted in a scratch copy).
check-layout:
	@python3 scripts/check-layout.py && $(TALLY_ADD) check-layout 1 0 || { $(TALLY_ADD) check-layout 0 1; exit 1; }
	@sh tests/layout/check_layout_test.sh

schema-check: $(BUILD)/app-server
	@rm -rf $(BUILD)/schema-check && mkdir -p $(BUILD)/schema-check
	@./$(BUILD)/app-server generate-json-schema --out $(BUILD)/schema-check/schema
	@./$(BUILD)/app-server generate-ts --out $(BUILD)/schema-check/ts
	@./$(BUILD)/app-server generate-python --out $(BUILD)/schema-check/py
	@diff -r schema $(BUILD)/schema-check/schema >/dev/null || \
		{ echo "schema/ is stale: run 'make schema' and commit"; diff -r schema $(BUILD)/schema-check/schema | head -20; exit 1; }
	@diff $(TS_TYPES) $(BUILD)/schema-check/ts/protocol.ts >/dev/null || \
		{ echo "$(TS_TYPES) is stale: run 'make schema' and commit"; exit 1; }
	@diff $(PY_TYPES) $(BUILD)/schema-check/py/protocol.py >/dev/null || \
		{ echo "$(PY_TYPES) is stale: run 'make schema' and commit"; exit 1; }
	@echo "schema-check: schema/, $(TS_TYPES) and $(PY_TYPES) are fresh"
	@$(TALLY_ADD) schema-check 1 0

# --- tests ------------------------------------------------------------------------------------
# Upstream's reference material (its schema, its recorded rollouts): ../shared in CI, else
# generated with the npm package, else the checks needing it are skipped and counted
# (scripts/reference.sh writes $(BUILD)/reference.env; the suites below source it).
REFENV = set -a && . ./$(BUILD)/reference.env && set +a &&

reference:
	@BUILD=$(BUILD) sh scripts/reference.sh

# A clone without ../shared: skips counted, never a red run for it, never a silent pass.
bare-check: $(BUILD)/app-server $(UNIT_BINS) $(INT_BINS)
	@BUILD=$(BUILD) sh tests/bare/check.sh
	@sh tests/bare/deps_check.sh

# The TypeScript and Python clients' suites against the real binary (npm ci only when
# node_modules is missing: the dev dependencies, typescript and @types/node).
clients-test: $(BUILD)/app-server
	@BUILD=$(BUILD) sh scripts/clients-test.sh

# README.md's Quickstart on a fresh Debian 12 root, as root and as a user with sudo (needs root
# and the Debian mirror, else a skip with its reason; 30+ minutes). Not part of make test.
newcomer-check:
	@sh tests/newcomer/check.sh

# Everything the tests and benchmarks run, built without running anything.
build-all: all $(UNIT_BINS) $(INT_BINS) $(HELPER_BINS) $(BENCH_BINS) $(BUILD)/suite-runner

unit: reference $(BUILD)/app-server $(UNIT_BINS) $(HELPER_BINS)
	@$(REFENV) sh tests/run-all.sh unit $(UNIT_BINS)
	@$(REFENV) APP_SERVER_NO_AVX2=1 sh tests/run-all.sh unit-scalar-base64 $(BUILD)/tests/protocol/test_base64

suite: $(BUILD)/suite-runner
	@./$(BUILD)/suite-runner tests/schema_suite/skipped.txt >$(BUILD)/suite.out 2>&1; rc=$$?; \
	cat $(BUILD)/suite.out; \
	set -- $$(sed -n 's/^suite: \([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$$/\1 \2 \3/p' $(BUILD)/suite.out); \
	$(TALLY_ADD) json-schema-suite $${1:-0} $${2:-1} $${3:-0} \
		"draft-07 cases listed in tests/schema_suite/skipped.txt (they need the remote draft-07 meta-schema, which Debian does not ship)"; \
	exit $$rc

integration: reference $(BUILD)/app-server $(INT_BINS) $(HELPER_BINS)
	@$(REFENV) APP_SERVER_BIN=$(BUILD)/app-server sh tests/run-all.sh integration $(INT_BINS)

# The sanitized unit and integration suites are targets of their own, so that under make -k
# (make test) a failing unit suite does not keep the integration suite from running.
san-test: san-unit san-integration

san-unit: reference $(BUILD)/app-server $(SAN)/app-server $(SAN_UNIT_BINS) $(HELPER_BINS)
	@$(REFENV) ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
		sh tests/run-all.sh san-unit $(SAN_UNIT_BINS)
	@$(REFENV) APP_SERVER_NO_AVX2=1 ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
		sh tests/run-all.sh san-unit-scalar-base64 $(SAN)/tests/protocol/test_base64

san-integration: reference $(BUILD)/app-server $(SAN)/app-server $(INT_BINS) $(HELPER_BINS)
	@$(REFENV) ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
		APP_SERVER_BIN=$(SAN)/app-server APP_SERVER_SANITIZED=1 sh tests/run-all.sh san-integration $(INT_BINS)

# Every suite runs even when an earlier one failed (-k), so that one run shows every failure
# and the tally always closes it; the exit status says whether anything failed.
test: deps
	@sh scripts/tally.sh reset
	@$(MAKE) --no-print-directory all
	@rc=0; \
	$(MAKE) --no-print-directory -k format-check check-layout schema-check methods-check || rc=1; \
	$(MAKE) --no-print-directory -k unit suite bare-check integration clients-test || rc=1; \
	$(MAKE) --no-print-directory -k san-test fuzz-smoke || rc=1; \
	sh scripts/tally.sh report || rc=1; \
	[ $$rc -eq 0 ] || echo "make test: FAILED (the failing steps are above; the tally counts the suites)"; \
	exit $$rc

bench: $(BUILD)/app-server $(BENCH_BINS)
	@for b in $(BENCH_BINS); do APP_SERVER_BIN=$(BUILD)/app-server $$b || exit 1; done

# --- style ------------------------------------------------------------------------------------
FORMAT_FILES = $(call rwildcard,$(SRC_DIRS),*.c) $(call rwildcard,$(SRC_DIRS),*.h) $(wildcard tests/*/*.[ch] tests/*/*/*.[ch] bench/*.[ch] bench/lib/*.[ch] clients/cli/*.[ch])
format:
	clang-format -i $(FORMAT_FILES)

format-check:
	@if command -v clang-format >/dev/null; then \
		clang-format --dry-run -Werror $(FORMAT_FILES) || { echo "run 'make format'"; $(TALLY_ADD) format-check 0 1; exit 1; }; \
		$(TALLY_ADD) format-check 1 0; \
	else echo "format-check: clang-format not installed, skipped"; \
		$(TALLY_ADD) format-check 0 0 1 "clang-format is not installed"; fi
	@! grep -nE '\b(strcpy|sprintf|strtok|atoi|system|popen)\(' $(FORMAT_FILES) || \
		{ echo "banned function used (strcpy sprintf strtok atoi system popen)"; exit 1; }

include tests/fuzz/fuzz.mk

install: $(BUILD)/app-server $(BUILD)/app-client
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(BUILD)/app-server $(DESTDIR)$(PREFIX)/bin/app-server
	install -m 0755 $(BUILD)/app-client $(DESTDIR)$(PREFIX)/bin/app-client

clean:
	rm -rf $(BUILD)

include tests/soak/soak.mk

.SECONDARY:
