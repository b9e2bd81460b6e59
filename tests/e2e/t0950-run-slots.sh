#!/usr/bin/env bash
# Run slots (fcgi/run/, docs/isolation.md): runs on an OS-level backend in progress at
# once are bounded per tenant and per server, so that one tenant's slow
# agents cannot hold every worker. run.sh --fresh sets [runner] max_runs =
# 2 and max_runs_per_tenant = 1, and provisions "slow", an agent whose
# step is a sleep of OLV_SLOW_SECONDS (at most 8 s, a length no other
# stack's agent has): this test counts those sleeps to see its slow runs
# in progress, and ends one (kills its sleep: the agent then answers)
# when it has seen what it needs, not after a fixed time. While a tenant's slow run is
# in progress: its next namespaces run is a 429 busy with Retry-After and
# writes nothing (API, CLI, admin view form); its inproc-mock runs go on;
# /healthz answers; another tenant may run. With both server slots taken,
# a third tenant is refused with the server's limit. Once the slow runs
# end, every one of them is recorded, completed, and runs go again.
. "$(dirname "$0")/lib.sh"
e2e_require
SLOW_SECONDS=${OLV_SLOW_SECONDS:-}
M=/v1/m/sandbox

if [[ -z ${OLV_SLOTS_TENANTS:-} || -z $SLOW_SECONDS || ! -x ${OLV_AGENTS_DIR:-}/slow ]]; then
	echo "# skip - this stack was not started by run.sh --fresh (no run slot limits, no slow agent)"
	ok "run slots: skipped (no slow agent on this stack)"
	done_testing
fi
if [[ $(uname -s) != Linux ]] || ! "$OLIVARES_BUILD/olivares-runner" --preflight namespaces >/dev/null 2>&1; then
	echo "# skip - the namespaces backend's preflight fails on this host"
	ok "run slots: skipped (no namespaces backend)"
	done_testing
fi

read -r TB TC <<<"$OLV_SLOTS_TENANTS"
A=$OLV_EDITOR_TOKEN
B=$(new_tenant_token "$TB" admin)
C=$(new_tenant_token "$TC" admin)
module_on "$OLV_ADMIN_TOKEN" || exit 1
module_on "$B" || exit 1
module_on "$C" || exit 1

# scenario TOKEN: a one-step scenario of that tenant, its id in SID
scenario() {
	req "$1" POST $M/scenarios '{"name":"slots","steps":[{"key":"k","input":"agent:user1@example.test"}],"mocks":[{"resource":"agent:user1@example.test","response":"first synthetic account"}]}'
	is_status "a scenario of the tenant" 201
	SID=$(jqb '.id // empty')
}
scenario "$A"
SA=$SID
scenario "$B"
SB=$SID
scenario "$C"
SC=$SID

# slow_run TOKEN SID NAME: a slow namespaces run in the background, its
# status and body in $E2E_TMP/NAME.{status,body}; its pid in SLOW_PID
slow_run() {
	curl -s -o "$E2E_TMP/$3.body" -w '%{http_code}' -X POST --max-time 60 \
		-H "Authorization: Bearer $1" -H 'Content-Type: application/json' \
		--data '{"variant":"slow","backend":"namespaces"}' \
		"$OLIVARES_URL$M/scenarios/$2/runs" >"$E2E_TMP/$3.status" 2>/dev/null &
	SLOW_PID=$!
}
# slow_agents: how many of this stack's slow agents are sleeping right now
slow_agents() { pgrep -fc "^sleep $SLOW_SECONDS\$" || true; }
# slow_pids: their sleeps' pids
slow_pids() { pgrep -f "^sleep $SLOW_SECONDS\$" || true; }
# release PID...: end those sleeps, so that their agents answer their step
release() { [[ $# == 0 ]] || kill "$@" 2>/dev/null || true; }
# wait_agents N: until N slow agents sleep (10 s at most)
wait_agents() {
	local i
	for ((i = 0; i < 200; i++)); do
		(($(slow_agents) >= $1)) && return 0
		sleep 0.05
	done
	return 1
}
# busy DESC MESSAGE: the last answer is a 429 busy with Retry-After and MESSAGE
busy() {
	is "$1: 429 busy" "429 busy" "$STATUS $(jqb .error.code)"
	is "$1: the message names the limit" "$2" "$(jqb .error.message)"
	is "$1: Retry-After: 1" "1" "$(tr -d '\r' <"$E2E_TMP/hdr" | sed -n 's/^retry-after: *//Ip')"
}
# post_run TOKEN SID BODY: POST a run (as req does), headers in $E2E_TMP/hdr
post_run() {
	STATUS=$(curl -s -o "$BODY_FILE" -D "$E2E_TMP/hdr" -w '%{http_code}' -X POST --max-time 60 \
		-H "Authorization: Bearer $1" -H 'Content-Type: application/json' --data "$3" \
		"$OLIVARES_URL$M/scenarios/$2/runs" 2>/dev/null) || STATUS=${STATUS:-000}
	BODY=$(cat "$BODY_FILE" 2>/dev/null)
}

TENANT_MSG="this tenant has 1 run on OS-level backends in progress already ([runner] max_runs_per_tenant = 1): try again when one has ended"
SERVER_MSG="2 runs on OS-level backends are in progress on this server ([runner] max_runs = 2): try again when one has ended"

# ---- a tenant's slow run holds its one slot ---------------------------------
is "no slow agent before" 0 "$(slow_agents)"
slow_run "$A" "$SA" a
PA=$SLOW_PID
if wait_agents 1; then ok "tenant A's slow run is in progress (its agent sleeps)"; else not_ok "tenant A's slow run is in progress (no sleeping agent after 10 s)"; fi
A_SLEEP=$(slow_pids)
before=$(state_counts "$OLV_ADMIN_TOKEN")
post_run "$A" "$SA" '{"variant":"candidate","backend":"namespaces"}'
busy "tenant A's second namespaces run" "$TENANT_MSG"
is "the refused runs wrote nothing" "$before" "$(state_counts "$OLV_ADMIN_TOKEN")"
OUT=$(OLIVARES_BUSY_WAIT=0 olivares sandbox scenarios run "$SA" --variant candidate --backend namespaces --token "$A" 2>"$E2E_TMP/cli-err") && RC=0 || RC=$?
if [[ $RC == 1 && $(cat "$E2E_TMP/cli-err") == *"(busy, HTTP 429)"* ]]; then
	ok "CLI with OLIVARES_BUSY_WAIT=0: the 429 is reported, exit 1"
else
	not_ok "CLI with OLIVARES_BUSY_WAIT=0: the 429 is reported, exit 1 (exit $RC: $(short "$(cat "$E2E_TMP/cli-err")"))"
fi
OUT=$(OLIVARES_BUSY_WAIT=1 olivares sandbox scenarios run "$SA" --variant candidate --backend namespaces --token "$A" 2>"$E2E_TMP/cli-err") && RC=0 || RC=$?
if [[ $RC == 1 ]] && grep -q '^olivares: still busy after 1 s of trying (OLIVARES_BUSY_WAIT=1): gave up$' "$E2E_TMP/cli-err"; then
	ok "CLI with OLIVARES_BUSY_WAIT=1: tries for 1 s, then says it gave up, exit 1"
else
	not_ok "CLI with OLIVARES_BUSY_WAIT=1: tries for 1 s, then says it gave up, exit 1 (exit $RC: $(short "$(cat "$E2E_TMP/cli-err")"))"
fi
page_status=$(curl -s -o "$E2E_TMP/page.html" -D "$E2E_TMP/page.hdr" -w '%{http_code}' -X POST --max-time 60 \
	-H "Authorization: Bearer $A" --data 'variant=candidate&backend=namespaces' "$OLIVARES_URL/admin/scenarios/$SA/runs")
is "admin view: the run form comes back busy, its input kept, Retry-After: 1" "429|namespaces|$TENANT_MSG|1" \
	"$page_status|$(xmllint --html --xpath 'string(//form[@id="run-form"]//option[@selected]/@value)' "$E2E_TMP/page.html" 2>/dev/null)|$(xmllint --html --xpath 'string(//form[@id="run-form"]/p[@id="error"])' "$E2E_TMP/page.html" 2>/dev/null)|$(tr -d '\r' <"$E2E_TMP/page.hdr" | sed -n 's/^retry-after: *//Ip')"
req "$A" POST "$M/scenarios/$SA/runs" '{"variant":"candidate","backend":"inproc-mock"}'
is "tenant A's inproc-mock run goes on (no agent program, no slot)" "201 completed" "$STATUS $(jqb .status)"
req "" GET /healthz
is_status "/healthz answers meanwhile" 200

# A's slow run is ended here and another started with B's: each slow run
# needs to last only as long as the checks of its part, well inside its
# sleep's 8 s on a loaded host
# shellcheck disable=SC2086 # one pid, or none when it has ended already
release $A_SLEEP
wait "$PA" || true
is "slow run a: 201, completed, isolated" "201 completed true" \
	"$(cat "$E2E_TMP/a.status") $(jq -r '"\(.status) \(.isolated)"' "$E2E_TMP/a.body" 2>/dev/null)"
is "no slow agent left once it ended" 0 "$(slow_agents)"
slow_run "$A" "$SA" a2
PA=$SLOW_PID
if wait_agents 1; then ok "tenant A's second slow run is in progress"; else not_ok "tenant A's second slow run is in progress (no sleeping agent after 10 s)"; fi
A_SLEEP=$(slow_pids)

# ---- another tenant takes the server's second slot; a third finds none ------
slow_run "$B" "$SB" b
PB=$SLOW_PID
if wait_agents 2; then ok "tenant B's slow run is in progress too"; else not_ok "tenant B's slow run is in progress too (agents: $(slow_agents))"; fi
n_agents=$(slow_agents)
before=$(state_counts "$C")
post_run "$C" "$SC" '{"variant":"candidate","backend":"namespaces"}'
if ((n_agents >= 2)); then
	busy "tenant C's namespaces run with both server slots taken" "$SERVER_MSG"
	is "tenant C's refused run wrote nothing" "$before" "$(state_counts "$C")"
else
	not_ok "both slow runs were still in progress when tenant C asked (agents: $n_agents)"
fi

# ---- the CLI, by default, waits for a slot (a 429 ran and wrote nothing):
# once it has said it waits, tenant A's slow run is ended, and it runs
olivares sandbox scenarios run "$SA" --variant candidate --backend namespaces --token "$A" -o json \
	>"$E2E_TMP/cli-wait-out" 2>"$E2E_TMP/cli-wait-err" &
CLI_PID=$!
for ((i = 0; i < 400; i++)); do
	grep -q 'trying again in 1 s$' "$E2E_TMP/cli-wait-err" 2>/dev/null && break
	sleep 0.05
done
# shellcheck disable=SC2086 # one pid, or none when it has ended already
release $A_SLEEP
wait "$CLI_PID" && RC=0 || RC=$?
OUT=$(cat "$E2E_TMP/cli-wait-out")
is "CLI (default OLIVARES_BUSY_WAIT): waits until tenant A's slot is free, then runs" "0 completed" \
	"$RC $(jq -r .status <<<"$OUT" 2>/dev/null)"
if grep -q "^olivares: busy (HTTP 429: this tenant has 1 run on OS-level backends in progress already .*); trying again in 1 s$" "$E2E_TMP/cli-wait-err"; then
	ok "CLI: each wait says so on stderr"
else
	not_ok "CLI: each wait says so on stderr (got $(short "$(cat "$E2E_TMP/cli-wait-err")"))"
fi

# ---- the slow runs end, recorded; slots free again -----------------------------
# shellcheck disable=SC2046 # the pids, one a word
release $(slow_pids)
wait "$PA" "$PB" || true
for n in a2 b; do
	is "slow run $n: 201, completed, isolated" "201 completed true" \
		"$(cat "$E2E_TMP/$n.status") $(jq -r '"\(.status) \(.isolated)"' "$E2E_TMP/$n.body" 2>/dev/null)"
done
rid=$(jq -r .id "$E2E_TMP/a.body" 2>/dev/null)
req "$A" GET "$M/runs/$rid/outputs"
is "slow run a: its step's output is the slow agent's" "slow" "$(jqb '.outputs[0].output')"
is "no slow agent left" 0 "$(slow_agents)"
req "$C" POST "$M/scenarios/$SC/runs" '{"variant":"candidate","backend":"namespaces"}'
is "tenant C runs once the slots are free" "201 completed" "$STATUS $(jqb .status)"
req "$A" POST "$M/scenarios/$SA/runs" '{"variant":"candidate","backend":"namespaces"}'
is "tenant A runs again" "201 completed" "$STATUS $(jqb .status)"

done_testing
