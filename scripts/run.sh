#!/bin/sh
# What `make run` runs once the build is done.
#  - stdin or stdout not a terminal (an IDE, a pipe): the daemon on stdio, nothing else on stdout.
#  - a terminal: app-client chat on the daemon. With OPENAI_API_KEY set or a model provider in
#    $CODEX_HOME/config.toml it talks to that model; otherwise it says so in one line and uses
#    the offline demo model (app-server mock-model with clients/cli/demo/demo.json) in a private
#    CODEX_HOME and a scratch workspace, both removed at the end.
set -eu
build=${BUILD:-build}
if [ ! -t 0 ] || [ ! -t 1 ]; then
	exec "$build/app-server" "$@"
fi
home=${CODEX_HOME:-$HOME/.codex}
if [ -n "${OPENAI_API_KEY:-}" ] || grep -qs '^[[:space:]]*model_provider' "$home/config.toml"; then
	exec "$build/app-client" chat
fi
echo "make run: no OPENAI_API_KEY and no model_provider in $home/config.toml: the offline demo model answers (scripted, no network)" >&2
demo=$(mktemp -d "${TMPDIR:-/tmp}/app-server-demo.XXXXXX")
mkdir -p "$demo/home" "$demo/workspace"
"$build/app-server" mock-model --script clients/cli/demo/demo.json --port-file "$demo/port" \
	>/dev/null 2>&1 &
mock=$!
trap 'kill $mock 2>/dev/null || true; rm -rf "$demo"; echo "make run: the demo workspace $demo/workspace is removed" >&2' EXIT
# Ctrl-C belongs to the chat (it interrupts a turn; twice quits): the script waits for the chat
# and ends with its status, so make does not report "Error 130" for a chat that quit cleanly.
trap : INT
trap 'exit 143' TERM
trap 'exit 129' HUP
i=0
while [ ! -s "$demo/port" ] && [ $i -lt 200 ]; do
	sleep 0.05
	i=$((i + 1))
done
cat >"$demo/home/config.toml" <<CONF
model = "demo-model"
model_provider = "demo"
approval_policy = "untrusted"
sandbox_mode = "workspace-write"

[model_providers.demo]
name = "offline demo (app-server mock-model)"
base_url = "http://127.0.0.1:$(cat "$demo/port")/v1"
request_max_retries = 0
stream_max_retries = 0
CONF
CODEX_HOME="$demo/home" "$build/app-client" chat --cwd "$demo/workspace"
