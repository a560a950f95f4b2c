#!/bin/sh
# Run each test binary given, print one summary line, fail if any failed. The counts are
# cmocka's test cases (a binary that dies before its summary counts as one failed case), and
# they go to the tally of `make test` (scripts/tally.sh). Skips are never silent: a case that
# skips says why (tests/helpers/skip_note.h, into $APP_SERVER_SKIP_LOG), as does a check that
# needs upstream's reference material; their counts and reasons are printed after the summary
# and added to the tally.
set -u
label=$1
shift
here=$(dirname "$0")
pass=0
fail=0
skipped=0
failed=""
log=${APP_SERVER_SKIP_LOG:-}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
[ -n "$log" ] && : >"$log"
# cmocka's summary of one run: "[  PASSED  ] N test(s)." and the FAILED / SKIPPED lines.
count() { sed -n "s/^\[  $1 *\] \([0-9][0-9]*\) test(s).*/\1/p" "$out" | tail -1; }
for t in "$@"; do
	"$t" >"$out" 2>&1
	rc=$?
	cat "$out"
	p=$(count PASSED) f=$(count FAILED) s=$(count SKIPPED)
	if [ -z "$p$f$s" ]; then
		# No summary: not a cmocka binary (one case) or one that died.
		if [ $rc -eq 0 ]; then p=1; else f=1; fi
	fi
	[ $rc -ne 0 ] && [ "${f:-0}" -eq 0 ] && f=1
	pass=$((pass + ${p:-0}))
	fail=$((fail + ${f:-0}))
	skipped=$((skipped + ${s:-0}))
	[ $rc -eq 0 ] || failed="$failed $(basename "$t")"
done
echo "$label: $pass passed, $fail failed, $skipped skipped"
sh "$here/../scripts/tally.sh" add "$label" "$pass" "$fail"
if [ -n "$log" ] && [ -s "$log" ]; then
	awk -F '\t' -v label="$label" '
		{ n += $2; why[$3] += $2 }
		END {
			printf "%s: SKIPPED %d (test cases and reference checks):\n", label, n
			for (w in why) printf "%s:   %d because %s\n", label, why[w], w
		}' "$log"
	awk -F '\t' '{ why[$3] += $2 } END { for (w in why) printf "%d\t%s\n", why[w], w }' "$log" |
		while IFS="$(printf '\t')" read -r n w; do
			sh "$here/../scripts/tally.sh" add "$label" 0 0 "$n" "$w"
		done
fi
# A case that skipped without saying why (skip_test() of skip_note.h) fails the suite.
notes=0
[ -n "$log" ] && [ -s "$log" ] && notes=$(wc -l <"$log")
if [ "$skipped" -gt "$notes" ]; then
	echo "$label: $skipped cases skipped but only $notes said why (use skip_test(), tests/helpers/skip_note.h)"
	sh "$here/../scripts/tally.sh" add "$label" 0 $((skipped - notes))
	fail=$((fail + skipped - notes))
fi
[ "$fail" -eq 0 ] || { echo "$label: failing:$failed"; exit 1; }
