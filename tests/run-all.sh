#!/bin/sh
# Run each test binary given, print one summary line, fail if any failed.
set -u
label=$1
shift
pass=0
fail=0
failed=""
for t in "$@"; do
	if "$t"; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		failed="$failed $(basename "$t")"
	fi
done
echo "$label: $pass passed, $fail failed"
[ "$fail" -eq 0 ] || { echo "$label: failing:$failed"; exit 1; }
