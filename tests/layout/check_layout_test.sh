#!/bin/sh
# make check-layout's own test: each kind of violation, planted in a scratch copy of the tree,
# makes scripts/check-layout.py fail with its line; the untouched copy and an allowed include
# (a sibling sub-folder's public header) pass. Prints "N passed, M failed".
set -u
cd "$(dirname "$0")/../.."
root=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
pass=0 fail=0

fresh() {
	rm -rf "$tmp/tree" && mkdir "$tmp/tree"
	tar -C "$root" --exclude=./build --exclude=./.git --exclude=node_modules -cf - . |
		tar -C "$tmp/tree" -xf -
}

# expect NAME ok|FAIL_TEXT: run the check on the copy as it now is.
expect() {
	name=$1 want=$2
	out=$(python3 "$root/scripts/check-layout.py" "$tmp/tree" 2>&1)
	rc=$?
	if [ "$want" = ok ]; then
		if [ $rc -eq 0 ]; then pass=$((pass + 1)); else
			fail=$((fail + 1)); echo "FAIL $name: the check refused an allowed tree:"; echo "$out"; fi
	elif [ $rc -ne 0 ] && printf '%s\n' "$out" | grep -qF -- "$want"; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1)); echo "FAIL $name: wanted a failure naming '$want', got (rc $rc):"; echo "$out"
	fi
}

plant() { printf '%s\n' "$2" >>"$tmp/tree/$1"; }

fresh
expect clean ok

plant server/agent/patch/apply_patch.c '#include "agent/shell/shell_words.h"'
expect sibling-public-header ok

fresh
plant server/thread/index/tindex.c '#include "rpc/rpc.h"'
expect engine-includes-rpc 'server/thread/ may not include server/rpc/'

fresh
plant server/agent/approval/approval_cache.c '#include "agent/shell/command_actions_int.h"'
expect sibling-internal-header 'an internal header is for server/agent/shell/ alone'

fresh
plant server/agent/agent.c '#include "agent/patch/apply_patch_int.h"'
expect parent-internal-header 'an internal header is for server/agent/patch/ alone'

fresh
plant server/agent/agent.c '#include "diff.h"'
expect bare-name-elsewhere '"diff.h" is not in its own folder'

fresh
plant server/agent/agent.c '#include "agent/agent_int.h"'
expect own-folder-by-path 'include it by its bare name'

fresh
plant server/mcp/mcp.c '#include "api/api.h"'
expect reserved-room-rule 'server/mcp/ may not include server/api/'

fresh
i=0
while [ $i -lt 21 ]; do : >"$tmp/tree/server/thread/index/extra_$i.c"; i=$((i + 1)); done
expect oversized-folder 'split it into sub-folders'

fresh
mkdir "$tmp/tree/server/agent/newroom" && : >"$tmp/tree/server/agent/newroom/x.c"
expect folder-without-readme 'server/agent/newroom/: no README.md'

fresh
: >"$tmp/tree/server/agent/patch/second_int.h"
expect two-internal-headers 'one per folder'

fresh
plant docs/architecture.md 'The `server/agent/nowhere.c` file.'
expect doc-names-missing-path 'names `server/agent/nowhere.c`, which does not exist'

fresh
plant server/thread/store/store.c '#include "thread/store.h"'
expect old-path-before-the-move '"thread/store.h" does not name a header'

echo "check-layout test: $pass passed, $fail failed"
sh "$root/scripts/tally.sh" add check-layout-test "$pass" "$fail"
[ $fail -eq 0 ]
