#!/bin/sh
# make newcomer-check (issue 22): README.md's Quickstart followed literally on a fresh Debian 12
# root, once as root and once as a normal user with sudo. Not part of make test.
#
# Each run gets a minimal root (mmdebstrap --variant=minbase bookworm), the repository offered
# as a clone of this checkout's HEAD (committed work only, at /srv/app-server.git), and then
# the lines of the README's Quickstart block, read from README.md (never copied here):
#   1. that user's install line, then the git clone line;
#   2. `make run` on a pipe: an initialize line in, every stdout line must be JSON. A user
#      without the packages gets the one `sudo apt-get install ...` line from make (as the
#      README says), runs it, and runs `make run` again;
#   3. `make run` on a PTY (pty_drive.py): the demo completes (y to both approvals), then the
#      PTY closes and nothing may be left running;
#   4. `make test`: green, the closing `tally:` line, and in the tally the clients' suites and
#      the README's client installs and examples (clients-test runs those blocks as written).
# A root runs in its own mount and PID namespaces, entered with pivot_root (a chroot would
# refuse the sandbox its user namespaces), with its own /proc and the host's /dev and /sys
# (cgroups): no mount outlives the run, and every process dies with the namespace. The
# CODEX_HOME is the fresh root's ~/.codex.
#
# Needs root, unshare and the Debian mirror (NEWCOMER_MIRROR); where no root can be built it
# prints a skip with the reason and exits 0. NEWCOMER_DIR (default /var/tmp/newcomer-check)
# holds the roots, removed at the end unless NEWCOMER_KEEP=1; the logs of each step stay in
# NEWCOMER_LOGS (default build/newcomer/); NEWCOMER_ONLY=root|user runs one of the two.
#
# MEASURED on the development machine (2 cores shared with other builds, Debian mirror and
# npm registry close), 2026-11-27, root and user in parallel beside a third make test: the
# root 18 s; each newcomer ~23 min (install and clone 12-14 s, make run on a pipe with the
# build ~2 min, on a PTY 3 s, make test ~20.5 min). One after the other on a quiet machine
# (CI): about 40 min for both.
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
mirror=${NEWCOMER_MIRROR:-http://deb.debian.org/debian}
work=${NEWCOMER_DIR:-/var/tmp/newcomer-check}
only=${NEWCOMER_ONLY:-}
logs=${NEWCOMER_LOGS:-$repo/build/newcomer}
t0=$(date +%s)
passed=0
failed=0

say() { echo "newcomer-check: $*"; }
skip() { say "SKIPPED: $*"; exit 0; }
ok() { say "ok: $*"; passed=$((passed + 1)); }
bad() { say "FAILED: $*"; failed=$((failed + 1)); }
since() { echo "$(($(date +%s) - $1)) s"; }

[ "$(id -u)" = 0 ] || skip "building and entering a Debian root needs root (run: sudo make newcomer-check)"
for c in unshare pivot_root git python3 tar; do
	command -v "$c" >/dev/null 2>&1 || skip "$c is not installed"
done
if ! command -v mmdebstrap >/dev/null 2>&1; then
	say "installing mmdebstrap"
	{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mmdebstrap; } >&2 ||
		skip "mmdebstrap is not installed and apt-get could not install it"
fi
unshare --mount --pid --fork --propagation private true 2>/dev/null ||
	skip "this machine cannot make mount and PID namespaces (unshare failed)"

# The README's lines: its Quickstart block, each line found by what starts it.
block=$(awk '/^## Quickstart/ { q = 1 } q && /^```sh$/ { b = 1; next } b && /^```$/ { exit } b' "$repo/README.md")
readme_line() { printf '%s\n' "$block" | grep -E -- "$1" | head -1 | sed 's/[[:space:]]*#.*$//'; }
root_install=$(readme_line '# as root$')
user_install=$(readme_line '# as a user with sudo$')
clone=$(readme_line '^git clone <this repository> ' | sed 's#<this repository>#/srv/app-server.git#')
run=$(readme_line '^make run')
test=$(readme_line '^make test')
for v in root_install user_install clone run test; do
	eval "[ -n \"\$$v\" ]" || { bad "README.md's Quickstart block has no $v line"; exit 1; }
done
say "the README's lines: [$root_install] [$user_install] [$clone] [$run] [$test]"

mkdir -p "$work" "$logs" || skip "cannot make $work or $logs"
cleanup() {
	[ "${NEWCOMER_KEEP:-0}" = 1 ] && { say "kept the roots in $work"; return; }
	# Mounts live in the runs' private namespaces: none may show here before anything is removed.
	if grep -q " $work/" /proc/self/mountinfo; then
		say "not removing $work: something is mounted under it"
	else
		rm -rf --one-file-system "$work"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

t=$(date +%s)
say "building a minimal Debian 12 root from $mirror (mmdebstrap)"
# In a mount namespace of its own: mmdebstrap mounts /proc, /sys and /dev in its temporary
# root, which must not show on the host (nor stay there if it is killed).
if ! nice unshare --mount --propagation private mmdebstrap --variant=minbase --mode=root \
	bookworm "$work/base.tar" "$mirror" >"$logs/mmdebstrap.log" 2>&1; then
	tail -5 "$logs/mmdebstrap.log" | sed 's/^/  /'
	skip "mmdebstrap could not build a Debian 12 root from $mirror (last lines above)"
fi
say "root built in $(since "$t")"

# enter ROOT STEP [USER]: run `sh STEP` (a path inside ROOT) there as USER (default root), in
# its home, in new mount and PID namespaces; stdin, stdout and stderr are the caller's.
enter() {
	unshare --mount --pid --fork --propagation private /bin/sh -euc '
		r=$1
		mount --bind "$r" "$r"
		mount -t proc proc "$r/proc"
		mount --rbind /dev "$r/dev"
		mount --rbind /sys "$r/sys"
		cd "$r"
		mkdir -p .oldroot
		pivot_root . .oldroot
		exec chroot . /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
			HOME=/root TERM=xterm LANG=C.UTF-8 /bin/sh -c "
				umount -l /.oldroot && rmdir /.oldroot || exit 125
				if [ \"\$1\" = root ]; then cd && exec sh \"\$0\"; fi
				exec runuser -l \"\$1\" -c \"sh \$0\"" "$2" "$3"
	' enter "$1" "$2" "${3:-root}"
}

# step ROOT USER NAME COMMAND: write COMMAND (run from the user's home) as ROOT/step-NAME.sh.
step() {
	printf 'cd || exit 1\n%s\n' "$4" >"$1/step-$3.sh"
	chmod 0644 "$1/step-$3.sh"
}

# Whether every line of a file is a JSON value and one of them answers id 1.
all_json() {
	python3 -c '
import json, sys
lines = open(sys.argv[1], "rb").read().splitlines()
msgs = [json.loads(l) for l in lines]
sys.exit(0 if any(m.get("id") == 1 and "result" in m for m in msgs) else 1)' "$1" 2>/dev/null
}

# The tally of a make test log: each client suite passed something, failed and skipped nothing.
tally_clients() {
	awk '
		# "  <suite>  <n> passed  <n> failed  <n> skipped" (scripts/tally.sh report)
		$1 ~ /^(typescript-client|python-client|typescript-readme-install|python-readme-venv|python-readme-tree)$/ && $3 == "passed" {
			seen[$1] = 1
			if ($2 == 0 || $4 != 0 || $6 != 0) { print "  " $0; bad = 1 }
		}
		END {
			n = split("typescript-client python-client typescript-readme-install python-readme-venv python-readme-tree", want, " ")
			for (i = 1; i <= n; i++) if (!(want[i] in seen)) { print "  no tally line for " want[i]; bad = 1 }
			exit bad
		}' "$1"
}

# One newcomer: NAME (root or user) on a fresh copy of the root.
newcomer() {
	name=$1
	r=$work/$name
	l=$logs/$name
	who=root
	home=/root
	install=$root_install
	t1=$(date +%s)
	say "--- as $name ---"
	rm -rf --one-file-system "$r"
	mkdir -p "$r" && tar -C "$r" -xf "$work/base.tar" || { bad "$name: cannot unpack the root"; return; }
	git clone -q --bare "$repo" "$r/srv/app-server.git" || { bad "$name: cannot clone $repo"; return; }
	cp -L /etc/resolv.conf "$r/etc/resolv.conf"
	# This machine's own trust anchors (a TLS-inspecting egress proxy's CA), which a newcomer's
	# machine on the same network has too: ca-certificates, once make installs it, adds them.
	if ls /usr/local/share/ca-certificates/*.crt >/dev/null 2>&1; then
		mkdir -p "$r/usr/local/share/ca-certificates"
		cp -L /usr/local/share/ca-certificates/*.crt "$r/usr/local/share/ca-certificates/"
	fi
	if [ "$name" = user ]; then
		# A user with sudo (what the README's second line assumes), then lists emptied again.
		who=tester
		home=/home/tester
		install=$user_install
		step "$r" root setup 'set -e
			apt-get update -qq
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq sudo >/dev/null
			useradd -m -s /bin/bash tester
			echo "tester ALL=(ALL) NOPASSWD:ALL" >/etc/sudoers.d/tester
			chown -R tester: /srv/app-server.git
			apt-get clean
			rm -rf /var/lib/apt/lists/*'
		enter "$r" /step-setup.sh >"$l-setup.log" 2>&1 ||
			{ bad "$name: cannot add a user with sudo"; sed 's/^/  /' "$l-setup.log"; return; }
	fi

	step "$r" "$who" install "$install && $clone"
	t=$(date +%s)
	if enter "$r" /step-install.sh "$who" >"$l-install.log" 2>&1; then
		ok "$name: [$install] and [$clone] ($(since "$t"))"
	else
		bad "$name: [$install] and [$clone]"
		tail -20 "$l-install.log" | sed 's/^/  /'
		return
	fi

	# make run on a pipe: stdout carries protocol lines only.
	init='{"id":1,"method":"initialize","params":{"clientInfo":{"name":"newcomer","version":"1"}}}'
	step "$r" "$who" run-pipe "cd app-server && $run"
	t=$(date +%s)
	echo "$init" | enter "$r" /step-run-pipe.sh "$who" >"$l-run-pipe.out" 2>"$l-run-pipe.err"
	rc=$?
	sudo_line=$(sed -n 's/^  \(sudo apt-get install .*\)$/\1/p' "$l-run-pipe.err" | head -1)
	if [ $rc -ne 0 ] && [ "$name" = user ] && [ -n "$sudo_line" ]; then
		# The README: "without root it prints the one sudo apt-get install ... line to run".
		[ -s "$l-run-pipe.out" ] && bad "$name: make run wrote to stdout before stopping at deps"
		ok "$name: make run stopped at deps with the line [$sudo_line]"
		step "$r" "$who" deps "$sudo_line"
		enter "$r" /step-deps.sh "$who" >"$l-deps.log" 2>&1 ||
			{ bad "$name: [$sudo_line]"; tail -20 "$l-deps.log" | sed 's/^/  /'; return; }
		echo "$init" | enter "$r" /step-run-pipe.sh "$who" >"$l-run-pipe.out" 2>"$l-run-pipe.err"
		rc=$?
	fi
	if [ $rc -eq 0 ] && all_json "$l-run-pipe.out"; then
		ok "$name: [$run] on a pipe: $(wc -l <"$l-run-pipe.out") stdout line(s), all JSON, initialize answered ($(since "$t"))"
	else
		bad "$name: [$run] on a pipe (exit $rc): stdout is not protocol lines only"
		head -c 2000 "$l-run-pipe.out" | sed 's/^/  stdout: /'
		tail -20 "$l-run-pipe.err" | sed 's/^/  stderr: /'
	fi

	# make run on a terminal: the demo, both approvals, then the window closes.
	step "$r" "$who" run-pty "cd app-server && python3 tests/newcomer/pty_drive.py 300 $run"
	t=$(date +%s)
	if enter "$r" /step-run-pty.sh "$who" >"$l-run-pty.log" 2>&1 </dev/null; then
		ok "$name: [$run] on a PTY: the demo completed, nothing left running once the PTY closed ($(since "$t"))"
	else
		bad "$name: [$run] on a PTY"
		tail -30 "$l-run-pty.log" | sed 's/^/  /'
	fi

	# make test: green, one tally, the clients installed and run as the README says.
	step "$r" "$who" test "cd app-server && nice $test"
	t=$(date +%s)
	enter "$r" /step-test.sh "$who" >"$l-test.log" 2>&1 </dev/null
	rc=$?
	tally=$(grep '^tally: ' "$l-test.log" | tail -1)
	sed -n '/^skipped, with the reasons:$/,/^tally: /p' "$l-test.log" | sed "s/^/  $name: /"
	if [ $rc -eq 0 ] && [ -n "$tally" ]; then
		ok "$name: [$test] green, [$tally] ($(since "$t"))"
	else
		bad "$name: [$test] exited $rc, tally line: [${tally:-none}]"
		grep -E 'FAIL|failing|Error [0-9]' "$l-test.log" | head -30 | sed 's/^/  /'
	fi
	if tally_clients "$l-test.log"; then
		ok "$name: the clients' suites and the README's Python and TypeScript installs and examples passed"
	else
		bad "$name: the clients' suites or README installs are not all passed (lines above)"
	fi
	say "as $name: $(since "$t1")"
	[ "${NEWCOMER_KEEP:-0}" = 1 ] || rm -rf --one-file-system "$r"
}

for n in root user; do
	[ -z "$only" ] || [ "$only" = "$n" ] || continue
	newcomer "$n"
done
say "$passed passed, $failed failed in $(since "$t0")"
[ "$failed" -eq 0 ]
