#!/usr/bin/env bash
# Runs are jobs (docs/api.md "Runs are jobs"), through nginx with curl: a
# run is answered 202 at once with a Location, queued then running with
# its outputs appearing step by step (mocks with delay_ms make the steps
# slow), then completed with every step; Prefer: wait=N gives 201 when
# the run ends in time, 202 when not; a cancel stops a running run with
# the steps done and is a 409 once it has ended; a comparison is pending
# with its two runs, then decided; a tenant over max_active_runs gets 429
# and nothing is written; a backend no live executor offers fails at once.
. "$(dirname "$0")/lib.sh"
e2e_require
cd "$E2E_TMP" || exit 1

ED=$OLV_EDITOR_TOKEN
VW=$OLV_VIEWER_TOKEN
AD=$OLV_ADMIN_TOKEN
M=/v1/m/sandbox
HDRS=$E2E_TMP/headers
module_on "$AD" || exit 1
new_tenant_token "$(unique t0480-other)" admin >"$E2E_TMP/other-token"
OTHER=$(<"$E2E_TMP/other-token")
module_on "$OTHER" || exit 1

# post TOKEN PATH BODY [PREFER]: a POST without the suite's wait (or with
# PREFER as the Prefer header); headers in $HDRS
post() {
	local -a args=(-s -S -o "$BODY_FILE" -D "$HDRS" -w '%{http_code}' -X POST --max-time 90
		-H "Authorization: Bearer $1" -H 'Content-Type: application/json' --data-binary @-)
	if [[ -n ${4:-} ]]; then
		args+=(-H "Prefer: $4")
	fi
	STATUS=$(printf '%s' "$3" | curl "${args[@]}" "$OLIVARES_URL$2" 2>"$E2E_TMP/curl-err") ||
		STATUS=${STATUS:-000}
	read_body
}
header() { tr -d '\r' <"$HDRS" | sed -n "s/^$1: *//Ip"; }

# run_field ID FILTER: FILTER of the run's current record
run_field() {
	req "$VW" GET "$M/runs/$1"
	jqb "$2"
}
# wait_run ID CONDITION SECONDS: until the run's record satisfies the jq
# CONDITION (true), polling; 1 when it did not within SECONDS
wait_run() {
	local i
	for ((i = 0; i < $3 * 10; i++)); do
		[[ $(run_field "$1" "$2") == true ]] && return 0
		sleep 0.1
	done
	return 1
}

# six steps of 700 ms each (the mock's delay), a run of about 4 s
steps='[{"key":"s1","input":"tool:slow"},{"key":"s2","input":"tool:slow"},{"key":"s3","input":"tool:slow"},{"key":"s4","input":"tool:slow"},{"key":"s5","input":"tool:slow"},{"key":"s6","input":"tool:slow"}]'
req "$ED" POST $M/scenarios "{\"name\":\"t0480-slow\",\"steps\":$steps,\"mocks\":[{\"resource\":\"tool:slow\",\"response\":\"slow answer\",\"delay_ms\":700}]}"
is_status "a scenario whose six steps take 700 ms each" 201
SLOW=$(jqb .id)
req "$ED" POST $M/scenarios '{"name":"t0480-quick","steps":[{"key":"q","input":"tool:quick"}],"mocks":[{"resource":"tool:quick","response":"quick answer"}]}'
is_status "a quick scenario" 201
QUICK=$(jqb .id)

# --- 202, queued or running, then completed step by step
post "$ED" "$M/scenarios/$SLOW/runs" '{}'
is_status "a run without Prefer: 202 at once" 202
RID=$(jqb '.id // empty')
is_one_of "the 202's run is queued or running" "$(jqb .status)" queued running
is "the 202 has a Location naming the run" "/v1/m/sandbox/runs/$RID" "$(header Location)"
is "the queued record: steps_total, finished_at null, queued_at set" "6 null true" \
	"$(jqb '"\(.steps_total) \(.finished_at) \(.queued_at != null)"')"
if wait_run "$RID" '.status == "running" and .steps_done >= 1 and .steps_done < 6' 20; then
	ok "the run is seen running with some of its steps done"
else
	not_ok "the run is seen running with some of its steps done (last: $(short "$BODY"))"
fi
done_now=$(jqb .steps_done)
is "while running: an executor holds it, started_at is set" "true true" \
	"$(jqb '"\(.executor != null and .executor != "") \(.started_at != null)"')"
req "$VW" GET "$M/runs/$RID/outputs"
n=$(jqb '.outputs | length')
if ((n >= done_now && n < 6)); then
	ok "while running: the outputs so far ($n, steps_done was $done_now)"
else
	not_ok "while running: the outputs so far (got $n, steps_done was $done_now)"
fi
if wait_run "$RID" '.status == "completed"' 30; then
	ok "the run completes"
else
	not_ok "the run completes (last: $(short "$BODY"))"
fi
is "completed: six steps done and ok, finished_at set" "6 6 true" \
	"$(jqb '"\(.steps_done) \(.steps_ok) \(.finished_at != null)"')"
req "$VW" GET "$M/runs/$RID/outputs"
is "completed: the six outputs in order" "1 2 3 4 5 6" "$(jqb '[.outputs[].seq] | map(tostring) | join(" ")')"
is "completed: each output is the mock's answer" "slow answer" "$(jqb '[.outputs[].output] | unique | join(",")')"

# --- Prefer: wait=N
post "$ED" "$M/scenarios/$QUICK/runs" '{}' 'wait=30'
is_status "a quick run with Prefer: wait=30: 201" 201
is "the 201 is the completed run" completed "$(jqb .status)"
is "Preference-Applied: wait=30" "wait=30" "$(header Preference-Applied)"
# the run to cancel: nine steps of 1 s (inside the runs' 10 s wall clock),
# so that a loaded machine still has time to see it running and cancel it
steps9=$(jq -nc '[range(1;10) | {key: "c\(.)", input: "tool:slower"}]')
req "$ED" POST $M/scenarios "{\"name\":\"t0480-slower\",\"steps\":$steps9,\"mocks\":[{\"resource\":\"tool:slower\",\"response\":\"slower answer\",\"delay_ms\":1000}]}"
is_status "a scenario whose nine steps take 1 s each" 201
SLOWER=$(jqb .id)
post "$ED" "$M/scenarios/$SLOWER/runs" '{}' 'wait=1'
is_status "a slow run with Prefer: wait=1: 202 after the wait" 202
W1=$(jqb .id)
is_one_of "its record is queued or running" "$(jqb .status)" queued running

# --- cancel
if wait_run "$W1" '.status == "running" and .steps_done >= 1' 20; then
	ok "the run to cancel is running"
else
	not_ok "the run to cancel is running (last: $(short "$BODY"))"
fi
req "$VW" POST "$M/runs/$W1/cancel"
is_error "a viewer may not cancel" 403 forbidden
req "$OTHER" POST "$M/runs/$W1/cancel"
is_error "another tenant's run: 404" 404 not_found
req "$ED" POST "$M/runs/$W1/cancel"
is_status "cancel of a running run: 200" 200
is "the answer marks the cancel asked for" "true" "$(jqb .cancel_requested)"
if wait_run "$W1" '.status == "cancelled"' 20; then
	ok "the running run ends cancelled"
else
	not_ok "the running run ends cancelled (last: $(short "$BODY"))"
fi
k=$(jqb .steps_done)
is "cancelled: the reason says so, with the steps done" "cancelled while running ($k of 9 steps done)" "$(jqb .reason)"
if ((k >= 1 && k < 9)); then ok "cancelled before its last step ($k of 9)"; else not_ok "cancelled before its last step ($k of 9)"; fi
req "$VW" GET "$M/runs/$W1/outputs"
is "cancelled: its outputs are the steps done" "$k" "$(jqb '.outputs | length')"
req "$ED" POST "$M/runs/$W1/cancel"
is_error "cancel of a run that has ended: 409" 409 conflict
is "the 409 says how it ended" "run $W1 has already ended (cancelled): nothing to cancel" "$(jqb .error.message)"
req "$AD" GET "$M/audit?limit=50"
is "the cancel is audited" "1" "$(jq --arg id "$W1" '[.events[] | select(.action == "sandbox.run.cancel" and .target_id == $id)] | length' "$BODY_FILE")"

# --- a comparison is pending, then decided
post "$AD" $M/comparisons "{\"scenario_id\":\"$QUICK\",\"baseline\":\"a\",\"candidate\":\"b\",\"suite\":\"walkthrough\"}"
if [[ $STATUS == 202 ]]; then
	ok "a comparison without Prefer: 202"
	is "it is pending with its two runs" "pending null true true" \
		"$(jqb '"\(.status) \(.verdict) \(.baseline.run_id != null) \(.candidate.run_id != null)"')"
	CID=$(jqb .id)
	is "its Location" "/v1/m/sandbox/comparisons/$CID" "$(header Location)"
	for ((i = 0; i < 300; i++)); do
		req "$VW" GET "$M/comparisons/$CID"
		[[ $(jqb .status) == decided ]] && break
		sleep 0.1
	done
	is "the comparison gets its verdict" "decided true" "$(jqb '"\(.status) \(.verdict != null)"')"
elif [[ $STATUS == 201 ]]; then
	# the runs of a one-step scenario may end before the answer is written
	ok "a comparison without Prefer: decided before its answer (201)"
else
	not_ok "a comparison without Prefer: 202 (got HTTP $STATUS: $(short "$BODY"))"
fi

# --- a backend no live executor offers fails closed at once
if ! "$OLIVARES_BUILD/olivares-runner" --preflight firecracker >/dev/null 2>&1; then
	post "$AD" "$M/scenarios/$QUICK/runs" '{"backend":"firecracker"}'
	is_status "a run on a backend no executor offers: 201 at once" 201
	is "it failed, not isolated, no step" "failed false 0" "$(jqb '"\(.status) \(.isolated) \(.steps_total)"')"
	case $(jqb .reason) in
	"no live executor offers backend firecracker: "*) ok "the reason says no live executor offers it, and why" ;;
	*) not_ok "the reason says no live executor offers it, and why (got: $(jqb .reason))" ;;
	esac
else
	ok "firecracker passes preflight here: the fail-closed case is another host's"
fi

done_testing
