#!/bin/sh
# The one tally of `make test`. Every suite adds lines to $TALLY (default build/tally.tsv):
#
#   <suite> TAB <passed> TAB <failed> TAB <skipped> TAB <why the skipped ones were skipped>
#
# (a suite with skips of several reasons adds a line per reason, with 0 passed and 0 failed
# on the extra lines). `report` prints the sums, then each reason with its count, and ends
# with the one closing line "tally: N passed, M failed, K skipped"; it exits 1 when anything
# failed or when no suite added a line (a run that tested nothing is not green).
#
#   tally.sh reset                         start a new tally
#   tally.sh add SUITE PASSED FAILED [SKIPPED WHY]
#   tally.sh report
set -u
TALLY=${TALLY:-${BUILD:-build}/tally.tsv}

case ${1:-} in
reset)
	mkdir -p "$(dirname "$TALLY")"
	: >"$TALLY"
	;;
add)
	[ $# -ge 4 ] || { echo "usage: tally.sh add SUITE PASSED FAILED [SKIPPED WHY]" >&2; exit 2; }
	mkdir -p "$(dirname "$TALLY")"
	printf '%s\t%s\t%s\t%s\t%s\n' "$2" "$3" "$4" "${5:-0}" "${6:-}" >>"$TALLY"
	;;
report)
	[ -s "$TALLY" ] || { echo "tally: no suite reported (nothing was tested)"; exit 1; }
	awk -F '\t' '
		{
			if (!($1 in seen)) { seen[$1] = 1; order[++n] = $1 }
			p[$1] += $2; f[$1] += $3; s[$1] += $4
			P += $2; F += $3; S += $4
			if ($4 > 0) { w = $1 ": " $5; if (!(w in why)) worder[++m] = w; why[w] += $4 }
		}
		END {
			for (i = 1; i <= n; i++)
				printf "  %-28s %7d passed  %d failed  %d skipped\n", order[i], p[order[i]],
					f[order[i]], s[order[i]]
			if (m > 0) print "skipped, with the reasons:"
			for (i = 1; i <= m; i++) printf "  %7d  %s\n", why[worder[i]], worder[i]
			printf "tally: %d passed, %d failed, %d skipped\n", P, F, S
			exit F > 0
		}' "$TALLY"
	;;
*)
	echo "usage: tally.sh reset | add SUITE PASSED FAILED [SKIPPED WHY] | report" >&2
	exit 2
	;;
esac
