#!/bin/sh
# Install the Debian packages the build and the tests need, only when something is missing.
# Runs as root on a fresh Debian 12 machine (CI); elsewhere it prints what to install.
set -eu

missing=""
need() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'ok installed' || missing="$missing $1"; }

# The sandbox tests run real tools under the sandbox (curl, wget, nc, ssh, ping, getent, git,
# strace, python3, bash): they must exist for the test to prove the sandbox stops them.
for p in build-essential pkg-config libev-dev libcurl4-openssl-dev libssl-dev libseccomp-dev libcmocka-dev \
	libjansson-dev libsqlite3-dev libedit-dev libwslay-dev libhttp-parser-dev json-schema-test-suite clang-format clang libclang-rt-dev python3 procps \
	curl wget netcat-openbsd openssh-client iputils-ping git strace bash libc-bin; do
	need "$p"
done
# The TypeScript client's suite and its README install (node and npm: Debian 12 has node 18,
# which the client supports; a newer node already installed, e.g. NodeSource's, is kept), and
# the Python client's README install (a venv).
command -v node >/dev/null 2>&1 || missing="$missing nodejs"
command -v npm >/dev/null 2>&1 || missing="$missing npm"
need python3-venv

[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "deps: missing Debian packages:$missing" >&2
	echo "deps: install them as root, then run make again:" >&2
	echo "  sudo apt-get install -y --no-install-recommends$missing" >&2
	exit 1
fi
echo "deps: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >&2
