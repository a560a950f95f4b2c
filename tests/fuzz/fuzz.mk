# libFuzzer targets (tests/fuzz/fuzz_<name>.c), included by the main Makefile.
#
#   make fuzz        build every target into $(BUILD)/fuzz/ and run each for FUZZ_TIME seconds
#                    (default 60) on a scratch copy of its corpus; fails if any target crashed
#   make fuzz-smoke  build every target and run each seed of tests/fuzz/corpus/ once (-runs=0)
#
# The objects are clang's, instrumented (-fsanitize=fuzzer-no-link,address,undefined), in
# $(BUILD)/fuzzobj/, apart from the gcc objects of $(BUILD)/obj. Each target runs in its own
# directory $(BUILD)/fuzz/run-<name>/ (crash files land there); the committed corpus is only
# read. Without clang (and its libFuzzer runtime) both print SKIPPED and succeed.

FUZZ_CC      ?= clang
FUZZ_TIME    ?= 60
FUZZ_TARGETS := rpc sse toml base64 rollout apply_patch gitignore jscan item
FUZZ_SANFLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
# clang (not gcc) flags the unevaluated arms of base64.c's table-building ternaries.
FUZZ_WARN    := $(WARN) -Wno-constant-conversion
FUZZ_OBJ     := $(BUILD)/fuzzobj
FUZZ_BIN     := $(BUILD)/fuzz
# Whether clang can link a fuzzer here (checked by the recipes, not at every make).
FUZZ_CHECK   := echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' | \
	$(FUZZ_CC) -x c -fsanitize=fuzzer -o /dev/null - >/dev/null 2>&1
FUZZ_SKIP     = echo "$@: SKIPPED: $(FUZZ_CC) with libFuzzer is not installed (Debian: apt-get install clang libclang-rt-dev; scripts/deps.sh does it)"

# Longest input per target (libFuzzer's -max_len).
FUZZ_MAXLEN_rpc         := 16384
FUZZ_MAXLEN_sse         := 8192
FUZZ_MAXLEN_toml        := 8192
FUZZ_MAXLEN_base64      := 4096
FUZZ_MAXLEN_rollout     := 65536
FUZZ_MAXLEN_apply_patch := 4096
FUZZ_MAXLEN_gitignore   := 4096
FUZZ_MAXLEN_jscan       := 4096
FUZZ_MAXLEN_item        := 16384

# A target is fuzz_<name>.c plus its helpers fuzz_<name>_*.c, on the instrumented core library.
fuzz_srcs = tests/fuzz/fuzz_$(1).c $(filter-out tests/fuzz/fuzz_$(1).c,$(wildcard tests/fuzz/fuzz_$(1)_*.c))
FUZZ_BINS := $(foreach t,$(FUZZ_TARGETS),$(FUZZ_BIN)/fuzz_$(t))

.PHONY: fuzz fuzz-smoke fuzz-build

$(FUZZ_OBJ)/%.o: %.c Makefile tests/fuzz/fuzz.mk
	@mkdir -p $(dir $@)
	$(call quiet,CC,$(FUZZ_CC) $(BASEFLAGS) $(FUZZ_WARN) $(FUZZ_SANFLAGS) -fsanitize=fuzzer-no-link $(CFLAGS) -MMD -MP -c $< -o $@)

$(FUZZ_OBJ)/libcore.a: $(patsubst %.c,$(FUZZ_OBJ)/%.o,$(CORE_SRC))
	@rm -f $@
	$(call quiet,AR,ar rcs $@ $^)

define fuzz_target
$(FUZZ_BIN)/fuzz_$(1): $(patsubst %.c,$(FUZZ_OBJ)/%.o,$(call fuzz_srcs,$(1))) $(FUZZ_OBJ)/libcore.a
	@mkdir -p $$(dir $$@)
	$$(call quiet,LD,$$(FUZZ_CC) $$(FUZZ_SANFLAGS) -fsanitize=fuzzer -o $$@ $$^ $$(LDLIBS))
endef
$(foreach t,$(FUZZ_TARGETS),$(eval $(call fuzz_target,$(t))))

fuzz-build: $(FUZZ_BINS)

# Each seed once; the corpus directory is only read (-runs=0 adds nothing to it).
fuzz-smoke:
	@if ! $(FUZZ_CHECK); then $(FUZZ_SKIP); \
		$(TALLY_ADD) fuzz-smoke 0 0 $(words $(FUZZ_TARGETS)) "$(FUZZ_CC) with libFuzzer is not installed"; exit 0; fi; \
	$(MAKE) --no-print-directory fuzz-build || exit 1; \
	fail=""; for t in $(FUZZ_TARGETS); do \
		d=$(FUZZ_BIN)/run-$$t; rm -rf $$d && mkdir -p $$d && \
		( cd $$d && ../fuzz_$$t -runs=0 $(CURDIR)/tests/fuzz/corpus/$$t >log 2>&1 ) || \
			fail="$$fail $$t"; \
		echo "fuzz-smoke: $$t: $$(ls tests/fuzz/corpus/$$t | wc -l) seeds," \
			"$$(grep -o 'cov: [0-9]* ft: [0-9]*' $$d/log | tail -1)"; \
	done; \
	nfail=$$(echo $$fail | wc -w); \
	$(TALLY_ADD) fuzz-smoke $$(($(words $(FUZZ_TARGETS)) - nfail)) $$nfail; \
	if [ -n "$$fail" ]; then for t in $$fail; do tail -40 $(FUZZ_BIN)/run-$$t/log; done; \
		echo "fuzz-smoke: FAILED:$$fail (logs: $(FUZZ_BIN)/run-<target>/log)"; exit 1; fi; \
	echo "fuzz-smoke: every seed of every target ran without a crash"

# FUZZ_TIME seconds each, one at a time, on a copy of the corpus (new inputs go to the copy).
fuzz:
	@if ! $(FUZZ_CHECK); then $(FUZZ_SKIP); exit 0; fi; \
	$(MAKE) --no-print-directory fuzz-build || exit 1; \
	fail=""; for tl in $(foreach t,$(FUZZ_TARGETS),$(t):$(FUZZ_MAXLEN_$(t))); do \
		t=$${tl%%:*}; d=$(FUZZ_BIN)/run-$$t; rm -rf $$d && mkdir -p $$d && \
		cp -r tests/fuzz/corpus/$$t $$d/corpus && \
		echo "fuzz: $$t for $(FUZZ_TIME) s (log: $$d/log)" && \
		( cd $$d && ../fuzz_$$t -max_total_time=$(FUZZ_TIME) -max_len=$${tl#*:} \
			-timeout=30 -print_final_stats=1 corpus >log 2>&1 ) || fail="$$fail $$t"; \
		grep -E '^#[0-9]+' $$d/log | tail -1; \
	done; \
	if [ -n "$$fail" ]; then for t in $$fail; do tail -60 $(FUZZ_BIN)/run-$$t/log; done; \
		echo "fuzz: FAILED:$$fail (crash files: $(FUZZ_BIN)/run-<target>/crash-*)"; exit 1; fi; \
	echo "fuzz: no target crashed"
