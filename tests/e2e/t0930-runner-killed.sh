#!/usr/bin/env bash
# t0930: a runner killed in the middle of its run fails that run at once.
# Runs of the "slow" agent on namespaces (a step answered after
# OLV_SLOW_SECONDS); the test finds the stack's runner (a child of an
# executor slot's "olivares-runner --serve" that leads its own process group) and
# kills it with SIGKILL at different moments: as soon as it is seen (it may
# not have said "started" yet), and 100 to 900 ms later; then a few kills of
# the fork server itself. Every time the POST (with Prefer: wait=60)
# answers within 3 s of the kill (a generous bound for a loaded machine:
# the stall this replaces was a 5 s wait for a STARTED), the run is recorded failed, not
# isolated, with the reason naming the kill, and the next run completes.
. "$(dirname "$0")/lib.sh"
e2e_require
M=/v1/m/sandbox
KILLS=${OLV_RUNNER_KILLS:-20}
SERVER_KILLS=4
BOUND_MS=3000

if [[ -z ${OLV_SLOW_SECONDS:-} || ! -x ${OLV_AGENTS_DIR:-}/slow ]]; then
	echo "# skip - this stack was not started by run.sh --fresh (no slow agent)"
	ok "killed runners: skipped (no slow agent on this stack)"
	done_testing
fi
if [[ $(uname -s) != Linux ]] || ! "$OLIVARES_BUILD/olivares-runner" --preflight namespaces >/dev/null 2>&1; then
	echo "# skip - the namespaces backend's preflight fails on this host"
	ok "killed runners: skipped (no namespaces backend)"
	done_testing
fi
MASTERS=$(cat "$OLIVARES_DATA"/run/olivares-executor-*.pid 2>/dev/null)
if [[ -z $MASTERS ]]; then
	not_ok "the executors' pids ($OLIVARES_DATA/run/olivares-executor-*.pid)"
	done_testing
fi
AD=$OLV_ADMIN_TOKEN
module_on "$AD" || exit 1
req "$AD" POST $M/scenarios '{"name":"killed-runner","steps":[{"key":"k","input":"agent:user1@example.test"}],"mocks":[{"resource":"agent:user1@example.test","response":"first synthetic account"}]}'
is_status "a scenario to run" 201
SID=$(jqb .id)

children() { cat /proc/"$1"/task/*/children 2>/dev/null; }
pgid_of() { local s; s=$(cat /proc/"$1"/stat 2>/dev/null) && set -- ${s##*) } && echo "$3"; }
# the fork servers of the executors' slots
servers() {
	local m w s
	for w in $(for m in $MASTERS; do children "$m"; done); do
		for s in $(children "$w"); do
			tr '\0' ' ' <"/proc/$s/cmdline" 2>/dev/null | grep -q -- '--serve' && echo "$s"
		done
	done
}
# RUNNER and SERVER: a runner of the stack (a server's child leading its
# own process group) and its server, waiting at most 10 s
find_runner() {
	local give_up=$((SECONDS + 10)) s c
	RUNNER= SERVER=
	while ((SECONDS < give_up)); do
		for s in $(servers); do
			for c in $(children "$s"); do
				if [[ $(pgid_of "$c") == "$c" ]]; then
					RUNNER=$c SERVER=$s
					return 0
				fi
			done
		done
	done
	return 1
}
now_ms() { local t=${EPOCHREALTIME/./}; echo $((t / 1000)); }

slow_run() {
	curl -s -o "$E2E_TMP/run.body" -w '%{http_code}' -X POST --max-time 60 \
		-H "Authorization: Bearer $AD" -H 'Content-Type: application/json' -H 'Prefer: wait=60' \
		--data '{"variant":"slow","backend":"namespaces"}' \
		"$OLIVARES_URL$M/scenarios/$SID/runs" >"$E2E_TMP/run.status" 2>/dev/null &
	RUN_PID=$!
}

# kill_once N WHAT DELAY_MS: one run, its runner (WHAT=runner) or its fork
# server (WHAT=server) killed DELAY_MS after the runner is seen
declare -a LATE=()
kill_once() {
	local n=$1 what=$2 delay=$3 t_kill took status reason isolated victim
	slow_run
	if ! find_runner; then
		not_ok "kill $n: a runner of the stack found"
		wait "$RUN_PID"
		return
	fi
	((delay > 0)) && sleep "$(printf '0.%03d' "$delay")"
	victim=$RUNNER
	[[ $what == server ]] && victim=$SERVER
	kill -KILL "$victim" 2>/dev/null
	t_kill=$(now_ms)
	wait "$RUN_PID"
	took=$(($(now_ms) - t_kill))
	status=$(jq -r .status "$E2E_TMP/run.body" 2>/dev/null)
	reason=$(jq -r .reason "$E2E_TMP/run.body" 2>/dev/null)
	isolated=$(jq -r .isolated "$E2E_TMP/run.body" 2>/dev/null)
	echo "# kill $n ($what, ${delay} ms after the runner was seen): answered ${took} ms after the kill: HTTP $(cat "$E2E_TMP/run.status") $status: $reason"
	if ((took >= BOUND_MS)); then
		LATE+=("kill $n ($what, +${delay} ms): ${took} ms")
	fi
	case $what in
	runner) want="runner killed by SIGKILL" ;;
	server) want="runner exit status lost: " ;;
	esac
	if [[ $status == failed && $isolated == false && $reason == "$want"* ]]; then
		ok "kill $n ($what, +${delay} ms): the run is failed, not isolated, \"$want…\""
	else
		not_ok "kill $n ($what, +${delay} ms): the run is failed, not isolated, \"$want…\" (got $status, isolated $isolated, $(short "$reason"))"
	fi
	req "$AD" GET "$M/runs/$(jq -r .id "$E2E_TMP/run.body" 2>/dev/null)"
	is "kill $n: the stored run says the same" "failed $reason" "$(jqb '"\(.status) \(.reason)"')"
}

delays=(0 0 100 300 600 900)
for ((i = 1; i <= KILLS; i++)); do
	kill_once "$i" runner "${delays[$(((i - 1) % ${#delays[@]}))]}"
done
for ((i = 1; i <= SERVER_KILLS; i++)); do
	kill_once "s$i" server "${delays[$(((i - 1) % ${#delays[@]}))]}"
done
if ((${#LATE[@]} == 0)); then
	ok "every one of $((KILLS + SERVER_KILLS)) kills failed its run within $BOUND_MS ms"
else
	not_ok "every kill failed its run within $BOUND_MS ms (late: ${LATE[*]})"
fi

# the next run works (the mock agent: no slow step)
req "$AD" POST "$M/scenarios/$SID/runs" '{"backend":"namespaces"}'
is "the run after the kills completes" "completed" "$(jqb .status)"

done_testing
