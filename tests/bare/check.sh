#!/bin/sh
# make bare-check: a clone without ../shared (upstream's reference material) must neither fail
# for that reason nor pass silently. Plays that clone: scripts/reference.sh in a folder with no
# ../shared and no download allowed must say what it skips; suites run with what it wrote pass
# and print the count of skipped checks with the reason; without that acknowledgement a missing
# reference still fails loudly. Runs from the repository root on built binaries.
set -u
BUILD=${BUILD:-build}
root=$(pwd)
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fail() { echo "bare-check: FAILED: $*"; exit 1; }

mkdir -p "$t/clone"
(cd "$t/clone" && env -u APP_SERVER_REFERENCE_SCHEMA -u APP_SERVER_REFERENCE_ROLLOUTS \
	BUILD=out APP_SERVER_REFERENCE_NPM=0 sh "$root/scripts/reference.sh" 2>"$t/ref.err") ||
	fail "scripts/reference.sh exited non-zero"
env=$t/clone/out/reference.env
grep -q '^APP_SERVER_NO_REFERENCE=1$' "$env" || fail "no APP_SERVER_NO_REFERENCE=1 in $env"
grep -q '^APP_SERVER_NO_ROLLOUTS=1$' "$env" || fail "no APP_SERVER_NO_ROLLOUTS=1 in $env"
grep -q 'SKIPPING every check against upstream' "$t/ref.err" || fail "reference.sh said nothing"

# The suites that need the reference most, on the paths a bare clone has (none).
bins="$BUILD/tests/protocol/test_conformance $BUILD/tests/thread/test_store $BUILD/itests/test_rpc"
set -a
. "$env"
set +a
export APP_SERVER_REFERENCE_SCHEMA="$t/none" APP_SERVER_REFERENCE_ROLLOUTS="$t/none"
export APP_SERVER_SKIP_LOG="$t/skipped.log" APP_SERVER_BIN="$BUILD/app-server"
# The bare clone's run is played, not counted: its tally stays here.
real_tally=${TALLY:-}
export TALLY="$t/tally.tsv"
# shellcheck disable=SC2086
sh tests/run-all.sh bare $bins >"$t/out" 2>&1 || { cat "$t/out"; fail "the suites failed"; }
grep -Eq "^bare: [0-9]+ passed, 0 failed" "$t/out" || fail "no pass line"
grep -Eq "^bare:   [0-9]+ because ../shared/reference/codex-app-server-schema is absent" "$t/out" ||
	{ cat "$t/out"; fail "schema skips not counted"; }
grep -Eq "^bare:   [0-9]+ because ../shared/reference/rollouts" "$t/out" ||
	{ cat "$t/out"; fail "rollout skips not counted"; }
grep "^bare: SKIPPED" "$t/out"

# Not acknowledged (no reference.sh): a missing reference is an error, never a silent pass.
for b in $bins; do
	if env -u APP_SERVER_NO_REFERENCE -u APP_SERVER_NO_ROLLOUTS "$b" >"$t/loud" 2>&1; then
		fail "$b passed with its reference missing and no APP_SERVER_NO_REFERENCE"
	fi
done
echo "bare-check: a clone without ../shared skips and counts exactly the reference checks"
[ -n "$real_tally" ] && TALLY=$real_tally sh scripts/tally.sh add bare-check 1 0
exit 0
