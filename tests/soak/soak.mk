# make soak: the soak tests of tests/soak/ (README.md there), minutes each; not part of make test.
# SOAK_ARGS goes to every soak; an option of another soak is ignored by the ones it does not
# belong to, e.g. make soak SOAK_ARGS="--count 1000 --turns 100 --kills 20 --mb 10 --seed 1".
# One soak alone: make soak-exec (soak-turn, soak-input, soak-lifecycle).
SOAK_ARGS ?=
SOAKS     := exec turn input lifecycle

.PHONY: soak $(addprefix soak-,$(SOAKS))

soak: $(BUILD)/app-server
	@rc=0; for s in $(SOAKS); do \
		python3 tests/soak/$${s}_soak.py --bin $(BUILD)/app-server $(SOAK_ARGS) || rc=1; \
	done; \
	if [ $$rc = 0 ]; then echo "make soak: all soaks passed"; else echo "make soak: FAILED"; fi; \
	exit $$rc

$(addprefix soak-,$(SOAKS)): soak-%: $(BUILD)/app-server
	python3 tests/soak/$*_soak.py --bin $(BUILD)/app-server $(SOAK_ARGS)
