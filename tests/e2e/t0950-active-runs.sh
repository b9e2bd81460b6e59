#!/usr/bin/env bash
# A tenant's active runs (docs/api.md "Runs are jobs", docs/isolation.md
# "What bounds runs"): a tenant may have [runner] max_active_runs runs
# queued or running at once, or its [tenant NAME] section's own. run.sh
# --fresh gives tenants olv-slots-b and olv-slots-c a limit of 1 and
# olv-slots-d one of 2.
#
# A slow run (four steps, each answered by a mock after delay_ms 60000,
# asked without Prefer: the POST answers 202 at once) keeps its tenant
# active until this test cancels it: the test restarts the stack with a
# [runner] timeout_ms of 180 s for it (and back at the end), so that the
# run outlasts the checks however loaded the host is, rather than the
# default 10 s wall clock ending it midway. Meanwhile: the tenant's next run is
# 429 busy with Retry-After: 1 and the limit's message, and writes nothing
# (counts and audit unchanged), through the API, the CLI and the admin
# view's run form; another tenant runs; a comparison (two runs) of the
# tenant with one run active of its two is refused, a single run is not;
# /healthz answers. Once the slow runs have ended, runs go again. Nothing
# waits for time to pass: the test polls the runs' states (each poll with
# a generous bound, named in its message).
. "$(dirname "$0")/lib.sh"
e2e_require
M=/v1/m/sandbox
SUITE=compare-steps
STACK=$OLV_ROOT/scripts/stack

read -r TB TC TD <<<"${OLV_SLOTS_TENANTS:-}"
if [[ -z ${TD:-} ]]; then
	echo "# skip - this stack was not started by run.sh --fresh (no tenants with a max_active_runs of their own)"
	ok "active runs: skipped (no max_active_runs tenants on this stack)"
	done_testing
fi

# the stack on a long wall clock; its own configuration again at the end,
# however the test ends
awk -v extra="timeout_ms = 180000" '{ print } /^[[:space:]]*\[runner\]/ { print extra }' \
	"$OLIVARES_CONF" >"$E2E_TMP/long.conf"
# shellcheck disable=SC2317 # called by the EXIT trap
restore() {
	if "$STACK" restart >"$E2E_TMP/restore.out" 2>&1; then
		ok "the stack is back on its own configuration"
	else
		not_ok "the stack is back on its own configuration ($(short "$(cat "$E2E_TMP/restore.out")"))"
	fi
}
trap 'restore; rm -rf "$E2E_TMP"' EXIT
rc=0
OLIVARES_CONF=$E2E_TMP/long.conf "$STACK" restart >"$E2E_TMP/long.out" 2>&1 || rc=$?
is "the stack restarts with [runner] timeout_ms = 180000" 0 "$rc"
((rc == 0)) || done_testing

B=$(new_tenant_token "$TB" admin)
C=$(new_tenant_token "$TC" admin)
D=$(new_tenant_token "$TD" admin)
module_on "$B" || exit 1
module_on "$C" || exit 1
module_on "$D" || exit 1

SLOW='{"name":"active-runs slow","steps":[{"key":"s1","input":"tool:slow"},{"key":"s2","input":"tool:slow"},{"key":"s3","input":"tool:slow"},{"key":"s4","input":"tool:slow"}],"mocks":[{"resource":"tool:slow","response":"slow answer","delay_ms":60000}]}'
QUICK='{"name":"active-runs quick","steps":[{"key":"k","input":"tool:quick"}],"mocks":[{"resource":"tool:quick","response":"quick answer"}]}'

# scenario TOKEN BODY: a scenario of the token's tenant, its id in SID
scenario() {
	req "$1" POST $M/scenarios "$2"
	is_status "a scenario of the tenant ($(jq -r .name <<<"$2"))" 201
	SID=$(jqb '.id // empty')
}
scenario "$B" "$SLOW"
SB_SLOW=$SID
scenario "$B" "$QUICK"
SB=$SID
scenario "$C" "$QUICK"
SC=$SID
scenario "$D" "$SLOW"
SD_SLOW=$SID
scenario "$D" "$QUICK"
SD=$SID

# slow_start TOKEN SID NAME: the slow run, queued without waiting (202);
# its id in RID
slow_start() {
	E2E_NO_WAIT=1 req "$1" POST "$M/scenarios/$2/runs" '{"variant":"candidate"}'
	is "$3: 202 and a queued (or already running) run" "202 ok" \
		"$STATUS $(jqb 'if .status == "queued" or .status == "running" then "ok" else .status end')"
	RID=$(jqb '.id // empty')
}
# state TOKEN RID: the run's status now
state() {
	req "$1" GET "$M/runs/$2"
	jqb '.status // "none"'
}
# wait_ended TOKEN RID: until the run is no longer queued or running (at
# most 60 s; a cancel is seen within a second); its last status in ENDED
wait_ended() {
	local i
	for ((i = 0; i < 1200; i++)); do
		ENDED=$(state "$1" "$2")
		[[ $ENDED == queued || $ENDED == running ]] || return 0
		sleep 0.05
	done
	return 1
}
# post TOKEN PATH BODY: POST (no Prefer), headers in $E2E_TMP/hdr
post() {
	STATUS=$(curl -s -o "$BODY_FILE" -D "$E2E_TMP/hdr" -w '%{http_code}' -X POST --max-time 60 \
		-H "Authorization: Bearer $1" -H 'Content-Type: application/json' --data "$3" \
		"$OLIVARES_URL$2" 2>/dev/null) || STATUS=${STATUS:-000}
	read_body
}
# retry_after FILE: the Retry-After of the headers in FILE
retry_after() { tr -d '\r' <"$1" | sed -n 's/^retry-after: *//Ip'; }
# busy DESC MESSAGE: the last answer is a 429 busy, Retry-After: 1, MESSAGE
busy() {
	is "$1: 429 busy" "429 busy" "$STATUS $(jqb .error.code)"
	is "$1: the message names the limit" "$2" "$(jqb .error.message)"
	is "$1: Retry-After: 1" "1" "$(retry_after "$E2E_TMP/hdr")"
}

MSG="the tenant has as many runs queued or running as its limit allows (max_active_runs = 1): nothing was queued; try again when one has ended"
CMP_MSG="a comparison (2 runs) would take the tenant over its limit of runs queued or running (max_active_runs = 2): nothing was queued; try again when one has ended"

# ---- tenant B (limit 1): its slow run is active, its next run is refused --
slow_start "$B" "$SB_SLOW" "tenant B's slow run"
RB=$RID
before=$(state_counts "$B")
post "$B" "$M/scenarios/$SB/runs" '{"variant":"candidate"}'
busy "tenant B's next run (API)" "$MSG"
post "$B" "$M/scenarios/$SB_SLOW/runs" '{"variant":"baseline"}'
busy "tenant B's next run of another scenario (API)" "$MSG"
is "the refused API runs wrote nothing (scenarios, runs, audit)" "$before" "$(state_counts "$B")"
OUT=$(OLIVARES_BUSY_WAIT=0 olivares sandbox scenarios run "$SB" --variant candidate --token "$B" 2>"$E2E_TMP/cli-err") && RC=0 || RC=$?
is "CLI with OLIVARES_BUSY_WAIT=0: the 429 and its message on stderr, nothing on stdout, exit 1" \
	"1|olivares: $MSG (busy, HTTP 429)|" "$RC|$(cat "$E2E_TMP/cli-err")|$OUT"
page_status=$(curl -s -o "$E2E_TMP/page.html" -D "$E2E_TMP/page.hdr" -w '%{http_code}' -X POST --max-time 60 \
	-H "Authorization: Bearer $B" --data 'variant=candidate&backend=inproc-mock' "$OLIVARES_URL/admin/scenarios/$SB/runs")
is "admin view: the run form comes back 429, its input kept, the message shown, Retry-After: 1" \
	"429|inproc-mock|$MSG|1" \
	"$page_status|$(xmllint --html --xpath 'string(//form[@id="run-form"]//option[@selected]/@value)' "$E2E_TMP/page.html" 2>/dev/null)|$(xmllint --html --xpath 'string(//form[@id="run-form"]/p[@id="error"])' "$E2E_TMP/page.html" 2>/dev/null)|$(retry_after "$E2E_TMP/page.hdr")"
is "the refused CLI and admin view runs wrote nothing (scenarios, runs, audit)" "$before" "$(state_counts "$B")"
req "" GET /healthz
is_status "/healthz answers while tenant B is at its limit" 200

# ---- another tenant runs meanwhile ------------------------------------------
req "$C" POST "$M/scenarios/$SC/runs" '{"variant":"candidate"}'
is "tenant C (limit 1, nothing active) runs meanwhile" "201 completed" "$STATUS $(jqb .status)"

# ---- tenant D (limit 2) with one active: no comparison, one more run -------
slow_start "$D" "$SD_SLOW" "tenant D's slow run"
RD=$RID
before=$(state_counts "$D")
post "$D" "$M/comparisons" "{\"scenario_id\":\"$SD\",\"baseline\":\"base\",\"candidate\":\"up\",\"suite\":\"$SUITE\"}"
busy "tenant D's comparison (two runs) with one of its two active" "$CMP_MSG"
is "the refused comparison wrote nothing (scenarios, runs, audit)" "$before" "$(state_counts "$D")"
req "$D" POST "$M/scenarios/$SD/runs" '{"variant":"candidate"}'
is "tenant D's single run fits its limit of 2" "201 completed" "$STATUS $(jqb .status)"
req "" GET /healthz
is_status "/healthz answers meanwhile" 200

# Every refusal above needs the slow runs active when it was asked; a run
# only goes forward (queued, running, ended), so still active now means
# active throughout.
is "tenant B's slow run was active throughout (still queued or running)" "ok" \
	"$(s=$(state "$B" "$RB") && [[ $s == queued || $s == running ]] && echo ok || echo "$s")"
is "tenant D's slow run was active throughout (still queued or running)" "ok" \
	"$(s=$(state "$D" "$RD") && [[ $s == queued || $s == running ]] && echo ok || echo "$s")"

# ---- the CLI, by default, tries again while busy: once it has said so,
# tenant B's slow run is cancelled, and the CLI's run goes
olivares sandbox scenarios run "$SB" --variant candidate --token "$B" -o json \
	>"$E2E_TMP/cli-wait-out" 2>"$E2E_TMP/cli-wait-err" &
CLI_PID=$!
said=0
for ((i = 0; i < 600; i++)); do
	if grep -q 'trying again in 1 s$' "$E2E_TMP/cli-wait-err" 2>/dev/null; then
		said=1
		break
	fi
	sleep 0.05
done
is "CLI (default OLIVARES_BUSY_WAIT): says it is busy and tries again (within 30 s)" 1 "$said"
is "CLI: the wait's line names the limit" \
	"olivares: busy (HTTP 429: $MSG); trying again in 1 s" "$(head -n 1 "$E2E_TMP/cli-wait-err")"
post "$B" "$M/runs/$RB/cancel" ''
is_status "tenant B's slow run: cancel asked" 200
if wait_ended "$B" "$RB"; then
	is "tenant B's slow run has ended, cancelled (within 60 s of the cancel)" cancelled "$ENDED"
else
	not_ok "tenant B's slow run has ended (still $ENDED 60 s after the cancel)"
fi
wait "$CLI_PID" && RC=0 || RC=$?
CLI_RID=$(jq -r '.id // empty' "$E2E_TMP/cli-wait-out" 2>/dev/null)
is "CLI: once the slow run has ended, its run is accepted (exit 0, a run id)" "0 yes" \
	"$RC $([[ -n $CLI_RID ]] && echo yes || echo no)"
if wait_ended "$B" "$CLI_RID"; then
	is "the CLI's run completes" completed "$ENDED"
else
	not_ok "the CLI's run completes (still $ENDED after 60 s)"
fi

# ---- the slow runs ended: runs go again ---------------------------------------
req "$B" POST "$M/scenarios/$SB/runs" '{"variant":"candidate"}'
is "tenant B runs again (API)" "201 completed" "$STATUS $(jqb .status)"
page_status=$(curl -s -o "$E2E_TMP/page.html" -w '%{http_code}' -X POST --max-time 60 \
	-H "Authorization: Bearer $B" --data 'variant=candidate&backend=inproc-mock' "$OLIVARES_URL/admin/scenarios/$SB/runs")
isnt "tenant B runs again (admin view's run form: not busy)" 429 "$page_status"
post "$D" "$M/runs/$RD/cancel" ''
is_status "tenant D's slow run: cancel asked" 200
if wait_ended "$D" "$RD"; then
	is "tenant D's slow run has ended, cancelled (within 60 s of the cancel)" cancelled "$ENDED"
else
	not_ok "tenant D's slow run has ended (still $ENDED 60 s after the cancel)"
fi
E2E_NO_WAIT=1 req "$D" POST "$M/comparisons" "{\"scenario_id\":\"$SD\",\"baseline\":\"base\",\"candidate\":\"up\",\"suite\":\"$SUITE\"}"
is "tenant D's comparison is accepted once its slow run has ended (202, two runs)" "202 2" \
	"$STATUS $(jqb '[.baseline.run_id, .candidate.run_id] | map(select(. != null and . != "")) | length')"
req "" GET /healthz
is_status "/healthz answers at the end" 200

done_testing
