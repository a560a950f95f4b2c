#!/bin/sh
# Run each test binary given, print one summary line, fail if any failed. Checks the tests
# skipped (tests/helpers/skip_note.h, into $APP_SERVER_SKIP_LOG) are counted and their reasons
# printed after the summary, so a run without upstream's reference material is never silent.
set -u
label=$1
shift
pass=0
fail=0
failed=""
log=${APP_SERVER_SKIP_LOG:-}
[ -n "$log" ] && : >"$log"
for t in "$@"; do
	if "$t"; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		failed="$failed $(basename "$t")"
	fi
done
echo "$label: $pass passed, $fail failed"
if [ -n "$log" ] && [ -s "$log" ]; then
	awk -F '\t' -v label="$label" '
		{ n += $2; why[$3] += $2 }
		END {
			printf "%s: SKIPPED %d checks that need upstream'"'"'s reference material:\n", label, n
			for (w in why) printf "%s:   %d because %s\n", label, why[w], w
		}' "$log"
fi
[ "$fail" -eq 0 ] || { echo "$label: failing:$failed"; exit 1; }
