#!/bin/sh
# make clients-test: the TypeScript and Python clients' suites and codex-acp's against
# $BUILD/app-server, each counted in the tally of make test (scripts/tally.sh). A suite that
# cannot run here (no node and npm, no registry) is a skip with its reason, never a pass.
set -u
BUILD=${BUILD:-build}
root=$(pwd)
bin=$root/$BUILD/app-server
tally() { sh "$root/scripts/tally.sh" add "$@"; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
status=0

# TypeScript: node's test runner ("# pass N", "# fail N", "# skipped N").
if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
	# a test() inside `for (...) of TRANSPORTS) {` (test/listen.ts: ws and unix) runs twice
	n=$(awk '/^for .* of TRANSPORTS\) \{/ { x = 2 } /^}/ { x = 1 } /^[ \t]*test\(/ { s += x ? x : 1 }
		END { print s + 0 }' clients/typescript/test/*.test.ts 2>/dev/null)
	echo "clients-test: SKIPPED the TypeScript suite ($n tests): node and npm are not installed (scripts/deps.sh installs them)"
	tally typescript-client 0 0 "$n" "node and npm are not installed"
else
	# npm ci also when node_modules lacks what package-lock.json names (a tree made before it changed)
	(cd clients/typescript && { { [ -d node_modules ] && npm ls --depth=0 >/dev/null 2>&1; } ||
		npm ci --no-audit --no-fund >&2; } &&
		APP_SERVER_BIN=$bin npm test --silent) >"$out" 2>&1
	rc=$?
	cat "$out"
	p=$(sed -n 's/^# pass \([0-9]*\)$/\1/p' "$out") f=$(sed -n 's/^# fail \([0-9]*\)$/\1/p' "$out")
	s=$(sed -n 's/^# skipped \([0-9]*\)$/\1/p' "$out")
	[ $rc -ne 0 ] && [ "${f:-0}" -eq 0 ] && f=1
	tally typescript-client "${p:-0}" "${f:-0}" "${s:-0}" "skipped by the suite itself (see its output)"
	[ $rc -eq 0 ] || status=1
fi

# Python: unittest ("Ran N tests", then "OK" or "FAILED (failures=F, errors=E)", "skipped=S").
(cd clients/python && APP_SERVER_BIN=$bin python3 -m unittest -v) >"$out" 2>&1
rc=$?
cat "$out"
n=$(sed -n 's/^Ran \([0-9]*\) tests\{0,1\} .*/\1/p' "$out")
f=$(sed -n 's/.*\(failures\|errors\)=\([0-9]*\).*/\2/p' "$out" | awk '{ s += $1 } END { print s + 0 }')
s=$(sed -n 's/.*skipped=\([0-9]*\).*/\1/p' "$out")
[ $rc -ne 0 ] && [ "$f" -eq 0 ] && f=1
tally python-client $((${n:-0} - f - ${s:-0})) "$f" "${s:-0}" "skipped by the suite itself (see its output)"
[ $rc -eq 0 ] || status=1

# codex-acp (npm @agentclientprotocol/codex-acp, the ACP adapter editors run) driven as an ACP
# editor drives it against $BUILD/app-server (tests/acp/). The package is installed into
# $BUILD/acp, never committed; without its optional dependencies (upstream's 400 MB codex
# binary: CODEX_PATH names ours). Where npm cannot fetch it, its tests are skipped, counted.
ACP_VERSION=2.6.0
acp_entry=$root/$BUILD/acp/node_modules/@agentclientprotocol/codex-acp/dist/index.js
acp_n=$(cat tests/acp/*.test.mjs | grep -cE '^test\(')
if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
	echo "clients-test: SKIPPED the codex-acp suite ($acp_n tests): node and npm are not installed"
	tally codex-acp 0 0 "$acp_n" "node and npm are not installed"
else
	if ! grep -qs "\"version\": \"$ACP_VERSION\"" "$(dirname "$(dirname "$acp_entry")")/package.json"; then
		timeout 180 npm install --prefix "$BUILD/acp" --no-save --no-audit --no-fund --omit=optional \
			--prefer-offline "@agentclientprotocol/codex-acp@$ACP_VERSION" >"$out" 2>&1 || rm -f "$acp_entry"
	fi
	if [ ! -f "$acp_entry" ]; then
		echo "clients-test: SKIPPED the codex-acp suite ($acp_n tests): npm could not install @agentclientprotocol/codex-acp@$ACP_VERSION:"
		tail -3 "$out"
		tally codex-acp 0 0 "$acp_n" "npm could not install @agentclientprotocol/codex-acp (registry unreachable?)"
	else
		APP_SERVER_BIN=$bin CODEX_ACP_ENTRY=$acp_entry timeout 120 node --test tests/acp/ >"$out" 2>&1
		rc=$?
		cat "$out"
		p=$(sed -n 's/^# pass \([0-9]*\)$/\1/p' "$out") f=$(sed -n 's/^# fail \([0-9]*\)$/\1/p' "$out")
		s=$(sed -n 's/^# skipped \([0-9]*\)$/\1/p' "$out")
		[ $rc -ne 0 ] && [ "${f:-0}" -eq 0 ] && f=1
		tally codex-acp "${p:-0}" "${f:-0}" "${s:-0}" "skipped by the suite itself (see its output)"
		[ $rc -eq 0 ] || status=1
	fi
fi

# The README's install paths and examples, exactly: its code blocks are run as written, with
# build/app-server made absolute (they run outside the tree).
work=$(mktemp -d)
trap 'rm -f "$out"; rm -rf "$work"' EXIT
readme_block() { # the first fenced block of language $1 after the line starting with $2
	awk -v lang="$1" -v mark="$2" '
		index($0, mark) == 1 { armed = 1 }
		armed && $0 == "```" lang { inb = 1; next }
		inb && $0 == "```" { exit }
		inb { print }' README.md | sed "s#\"build/app-server\"#\"$bin\"#"
}
check_example() { # NAME OUTPUT-FILE RC
	if [ "$3" -eq 0 ] && grep -q '^hi$' "$2"; then
		tally "$1" 1 0
	else
		echo "clients-test: $1 failed:"; cat "$2"; tally "$1" 0 1; status=1
	fi
}
if command -v npm >/dev/null && command -v node >/dev/null; then
	(cd clients/typescript && npm pack --pack-destination "$work" >/dev/null 2>&1) &&
		mkdir "$work/proj" && (cd "$work/proj" && echo '{"name":"proj","private":true}' >package.json &&
		npm install --offline --no-audit --no-fund "$work"/app-server-client-*.tgz >/dev/null 2>&1)
	readme_block ts "**TypeScript**" >"$work/proj/example.mjs"
	(cd "$work/proj" && node example.mjs) >"$out" 2>&1
	check_example typescript-readme-install "$out" $?
else
	tally typescript-readme-install 0 0 1 "node and npm are not installed"
fi
if python3 -m venv "$work/venv" >/dev/null 2>&1; then
	"$work/venv/bin/pip" install --quiet clients/python >"$out" 2>&1
	readme_block python "**Python**" >"$work/example.py"
	(cd "$work" && ./venv/bin/python3 example.py) >>"$out" 2>&1
	check_example python-readme-venv "$out" $?
else
	tally python-readme-venv 0 0 1 "python3 -m venv does not work (Debian: apt-get install python3-venv)"
fi
(cd "$work" && PYTHONPATH=$root/clients/python python3 example.py) >"$out" 2>&1
check_example python-readme-tree "$out" $?

if [ $status -eq 0 ]; then
	echo "clients-test: every client suite that could run passed"
else
	echo "clients-test: FAILED"
fi
exit $status
