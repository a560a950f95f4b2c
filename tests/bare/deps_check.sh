#!/bin/sh
# make bare-check (part 2): scripts/deps.sh on a machine missing a package, as a user who is
# not root, says once what is missing and the command to run, installs nothing and fails.
# dpkg-query is replaced by a shim that reports one package missing.
set -u
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fail() { echo "deps-check: FAILED: $*"; cat "$t/out" 2>/dev/null; exit 1; }

mkdir "$t/bin"
cat >"$t/bin/dpkg-query" <<'SHIM'
#!/bin/sh
for a; do last=$a; done
[ "$last" = libedit-dev ] && exit 1
printf 'install ok installed'
SHIM
chmod 755 "$t/bin/dpkg-query" "$t"
cp scripts/deps.sh "$t/deps.sh"
chmod 644 "$t/deps.sh"
if command -v setpriv >/dev/null && [ "$(id -u)" = 0 ]; then
	run="setpriv --reuid=65534 --regid=65534 --clear-groups"
else
	run=""
fi
if $run env PATH="$t/bin:$PATH" sh "$t/deps.sh" >"$t/out" 2>&1; then
	fail "deps.sh succeeded with a package missing"
fi
[ "$(grep -c 'libedit-dev' "$t/out")" = 2 ] || fail "the missing package is not named exactly twice (list, command)"
grep -q '^  sudo apt-get install -y --no-install-recommends libedit-dev$' "$t/out" || fail "no sudo command"
grep -qi 'installing' "$t/out" && fail "it claims to install as a non-root user"
echo "deps-check: as non-root, deps.sh names what is missing once and the sudo command to run"
