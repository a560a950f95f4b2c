#!/bin/sh
# Find upstream's reference material for the tests and write $BUILD/reference.env, which the
# test targets source. The reference is upstream's, never copied into the repository:
#
#   schema    $APP_SERVER_REFERENCE_SCHEMA, else ../shared/reference/codex-app-server-schema
#             (CI), else one generated earlier into $BUILD/reference/, else generated now the way
#             a user could: `codex app-server generate-json-schema` of the upstream npm package
#             (@openai/codex@0.169.0) when the npm registry answers, with the experimental
#             schema beside it (--experimental); else the checks against it
#             are skipped (APP_SERVER_NO_REFERENCE=1) and the reason is written down.
#   rollouts  $APP_SERVER_REFERENCE_ROLLOUTS, else ../shared/reference/rollouts (a CODEX_HOME
#             recorded by upstream: it cannot be generated offline); else the tests comparing
#             with it are skipped (APP_SERVER_NO_ROLLOUTS=1).
#
# The tests note every skipped check in $APP_SERVER_SKIP_LOG; tests/run-all.sh counts them, so
# a run without the reference is never silent. APP_SERVER_REFERENCE_NPM=0 forbids the download.
set -eu

BUILD=${BUILD:-build}
UPSTREAM=@openai/codex@0.169.0
out=$BUILD/reference.env
gen=$BUILD/reference/codex-app-server-schema
mkdir -p "$BUILD"

schema="" schema_why="" rollouts="" rollouts_why=""

if [ -n "${APP_SERVER_REFERENCE_SCHEMA:-}" ]; then
	[ -d "$APP_SERVER_REFERENCE_SCHEMA" ] || {
		echo "reference: APP_SERVER_REFERENCE_SCHEMA=$APP_SERVER_REFERENCE_SCHEMA is not a directory" >&2
		exit 1
	}
	schema=$APP_SERVER_REFERENCE_SCHEMA
elif [ -d ../shared/reference/codex-app-server-schema ]; then
	schema=$(cd ../shared/reference/codex-app-server-schema && pwd)
elif [ -f "$gen/codex_app_server_protocol.schemas.json" ] &&
	[ -f "$gen-experimental/codex_app_server_protocol.schemas.json" ]; then
	schema=$(cd "$gen" && pwd)
elif [ "${APP_SERVER_REFERENCE_NPM:-1}" = 0 ]; then
	schema_why="../shared/reference/codex-app-server-schema is absent and APP_SERVER_REFERENCE_NPM=0"
elif ! command -v npm >/dev/null 2>&1; then
	schema_why="../shared/reference/codex-app-server-schema is absent and npm is not installed to generate it"
else
	echo "reference: ../shared is absent; generating upstream's schema with $UPSTREAM (npm)" >&2
	tmp=$BUILD/reference/npm
	rm -rf "$tmp" "$gen.tmp" && mkdir -p "$tmp"
	home=$(mktemp -d)
	# The stable schema, and beside it the one with experimental methods and fields (the
	# contract of clients that initialize with experimentalApi), as ../shared has them.
	rm -rf "$gen-experimental.tmp"
	if timeout 300 npm install --prefix "$tmp" --no-audit --no-fund --loglevel=error "$UPSTREAM" >&2 &&
		CODEX_HOME=$home timeout 60 "$tmp/node_modules/.bin/codex" app-server \
			generate-json-schema --out "$gen.tmp" >&2 &&
		CODEX_HOME=$home timeout 60 "$tmp/node_modules/.bin/codex" app-server \
			generate-json-schema --experimental --out "$gen-experimental.tmp" >&2 &&
		[ -f "$gen.tmp/codex_app_server_protocol.schemas.json" ] &&
		[ -f "$gen-experimental.tmp/codex_app_server_protocol.schemas.json" ]; then
		rm -rf "$gen" "$gen-experimental" && mv "$gen.tmp" "$gen" &&
			mv "$gen-experimental.tmp" "$gen-experimental"
		schema=$(cd "$gen" && pwd)
	else
		rm -rf "$gen.tmp" "$gen-experimental.tmp"
		schema_why="../shared/reference/codex-app-server-schema is absent and generating it with $UPSTREAM failed (is the npm registry reachable?)"
	fi
	rm -rf "$home" "$tmp"
fi

if [ -n "${APP_SERVER_REFERENCE_ROLLOUTS:-}" ]; then
	rollouts=$APP_SERVER_REFERENCE_ROLLOUTS
elif [ -d ../shared/reference/rollouts ]; then
	rollouts=$(cd ../shared/reference/rollouts && pwd)
else
	rollouts_why="../shared/reference/rollouts (a CODEX_HOME recorded by upstream) is absent"
fi

{
	echo "# written by scripts/reference.sh; sourced by the test targets"
	if [ -n "$schema" ]; then
		echo "APP_SERVER_REFERENCE_SCHEMA='$schema'"
		echo "APP_SERVER_NO_REFERENCE=0"
	else
		echo "APP_SERVER_NO_REFERENCE=1"
		echo "APP_SERVER_NO_REFERENCE_WHY='$schema_why'"
	fi
	if [ -n "$rollouts" ]; then
		echo "APP_SERVER_REFERENCE_ROLLOUTS='$rollouts'"
		echo "APP_SERVER_NO_ROLLOUTS=0"
	else
		echo "APP_SERVER_NO_ROLLOUTS=1"
		echo "APP_SERVER_NO_ROLLOUTS_WHY='$rollouts_why'"
	fi
	echo "APP_SERVER_SKIP_LOG='$(pwd)/$BUILD/skipped.log'"
} >"$out"

[ -n "$schema" ] && echo "reference: schema $schema" >&2
[ -n "$schema_why" ] && echo "reference: SKIPPING every check against upstream's schema: $schema_why" >&2
[ -n "$rollouts_why" ] && echo "reference: SKIPPING the comparisons with upstream's rollouts: $rollouts_why" >&2
exit 0
