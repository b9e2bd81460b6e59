# shellcheck shell=bash
# The queue's measure, shared by bench/api and bench/scale: wait until a
# scenario's runs have all ended, then count them and find the last end.
# Needs URL and TOKEN set, curl and jq.

# bench_get PATH: GET PATH with the token, the body on stdout
bench_get() {
	curl -fsS -H "Authorization: Bearer $TOKEN" "$URL$1"
}

# bench_drain SCENARIO SECONDS: wait until none of the scenario's runs is
# queued or running; fails after SECONDS
bench_drain() {
	local sid=$1 secs=$2 i q r
	for ((i = 0; i < secs * 10; i++)); do
		q=$(bench_get "/v1/m/sandbox/runs?scenario=$sid&status=queued&limit=1" | jq '.runs | length')
		r=$(bench_get "/v1/m/sandbox/runs?scenario=$sid&status=running&limit=1" | jq '.runs | length')
		[[ $q == 0 && $r == 0 ]] && return 0
		sleep 0.1
	done
	return 1
}

# bench_tally SCENARIO: "COMPLETED OTHERS LAST_END" of the scenario's runs
# (LAST_END: the latest finished_at, epoch seconds with its milliseconds),
# read a page at a time
bench_tally() {
	local sid=$1 off n page
	page=$(mktemp /tmp/olv-bench-page.XXXXXX)
	for ((off = 0; ; off += 500)); do
		bench_get "/v1/m/sandbox/runs?scenario=$sid&limit=500&offset=$off" >"$page.one"
		n=$(jq '.runs | length' "$page.one")
		jq -c '.runs[] | {status, finished_at}' "$page.one" >>"$page"
		((n == 500)) || break
	done
	jq -rs '
		def epoch: (.[0:19] + "Z" | fromdate) + ((.[20:23] // "0") | tonumber) / 1000;
		[(map(select(.status == "completed")) | length),
		 (map(select(.status != "completed")) | length),
		 (map(.finished_at // empty | epoch) | max // 0)] | @tsv' "$page"
	rm -f "$page" "$page.one"
}

# bench_rate N T0 T1: N / (T1 - T0), one decimal ("n/a" when T1 <= T0)
bench_rate() {
	awk -v n="$1" -v a="$2" -v b="$3" 'BEGIN { if (b > a) printf "%.1f", n / (b - a); else print "n/a" }'
}
