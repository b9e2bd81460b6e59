#!/usr/bin/env bash
# Records survive an engine restart: scenarios, runs and outputs are all
# still there after `scripts/stack down` and `scripts/stack up`, and so are
# the tokens.
. "$(dirname "$0")/lib.sh"
# shellcheck source=../../scripts/lib/common.sh
. "$OLV_ROOT/scripts/lib/common.sh"
e2e_require
module_on "$OLV_ADMIN_TOKEN" || exit 1
ED=$OLV_EDITOR_TOKEN
STACK=$OLV_ROOT/scripts/stack

# whatever happens below, leave the stack up for the next test
trap '"$STACK" status >/dev/null 2>&1 || "$STACK" up >/dev/null 2>&1; rm -rf "$E2E_TMP"' EXIT

req "$ED" POST /v1/m/sandbox/scenarios '{"name":"persist","steps":[{"key":"a","input":"agent:user1@example.test"},{"key":"b","input":"agent:user2@example.test"}],"mocks":[{"resource":"agent:user1@example.test","response":"first synthetic account"}]}'
is_status "create a scenario" 201
SID=$(jqb .id)
req "$ED" POST "/v1/m/sandbox/scenarios/$SID/runs" '{"variant":"candidate"}'
is_status "run it" 201
RID=$(jqb .id)

snapshot() {
	req "$OLV_VIEWER_TOKEN" GET "/v1/m/sandbox/scenarios/$SID"
	jq -S . "$BODY_FILE" >"$1.scenario" 2>/dev/null || echo "HTTP $STATUS" >"$1.scenario"
	req "$OLV_VIEWER_TOKEN" GET "/v1/m/sandbox/runs/$RID"
	jq -S . "$BODY_FILE" >"$1.run" 2>/dev/null || echo "HTTP $STATUS" >"$1.run"
	req "$OLV_VIEWER_TOKEN" GET "/v1/m/sandbox/runs/$RID/outputs"
	jq -S . "$BODY_FILE" >"$1.outputs" 2>/dev/null || echo "HTTP $STATUS" >"$1.outputs"
	count_all "$OLV_VIEWER_TOKEN" /v1/m/sandbox/scenarios scenarios >"$1.nscen"
	count_all "$OLV_VIEWER_TOKEN" /v1/m/sandbox/runs runs >"$1.nruns"
}
B=$E2E_TMP/before
A=$E2E_TMP/after
snapshot "$B"
is "before restart: outputs recorded" 2 "$(jq '.outputs|length' "$B.outputs")"
token_before=$(<"$OLIVARES_DATA/admin_token")
fcgi_pid=$(cat "$OLIVARES_DATA/run/olivares-fcgi.pid" 2>/dev/null)

if "$STACK" down >"$E2E_TMP/down.out" 2>&1; then ok "scripts/stack down"; else not_ok "scripts/stack down ($(cat "$E2E_TMP/down.out"))"; fi
rc=0
"$STACK" status >/dev/null 2>&1 || rc=$?
is "scripts/stack status after down: exit 3" 3 "$rc"
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$OLIVARES_URL/healthz" || true)
is "nothing answers after down" 000 "$code"
# gone: exited, a zombie included (init reaps it when it gets to it;
# scripts/stack down does not wait for that)
if [[ -n $fcgi_pid ]] && olv_proc_gone "$fcgi_pid"; then
	ok "the FastCGI master is gone after down"
else
	not_ok "the FastCGI master is gone after down (pid ${fcgi_pid:-unknown})"
fi

if "$STACK" up >"$E2E_TMP/up.out" 2>&1; then ok "scripts/stack up again"; else not_ok "scripts/stack up again ($(tail -n 20 "$E2E_TMP/up.out"))"; fi
is "up prints the same url" "url=$OLIVARES_URL" "$(grep '^url=' "$E2E_TMP/up.out")"
is "up prints the same admin token (bootstrap happens once)" "admin_token=$token_before" "$(grep '^admin_token=' "$E2E_TMP/up.out")"
rc=0
"$STACK" status >/dev/null 2>&1 || rc=$?
is "scripts/stack status after up: exit 0" 0 "$rc"
if "$STACK" up >"$E2E_TMP/up2.out" 2>&1; then ok "scripts/stack up twice is fine"; else not_ok "scripts/stack up twice is fine ($(tail -n 5 "$E2E_TMP/up2.out"))"; fi

snapshot "$A"
is "scenario unchanged after restart" "$(cat "$B.scenario")" "$(cat "$A.scenario")"
is "run unchanged after restart" "$(cat "$B.run")" "$(cat "$A.run")"
is "outputs unchanged after restart" "$(cat "$B.outputs")" "$(cat "$A.outputs")"
is "as many scenarios after restart" "$(cat "$B.nscen")" "$(cat "$A.nscen")"
is "as many runs after restart" "$(cat "$B.nruns")" "$(cat "$A.nruns")"
is "the run is still the page's values" "completed 2 1 1 true true" "$(jq -r '"\(.status) \(.steps_total) \(.steps_ok) \(.steps_error) \(.isolated) \(.destroyed)"' "$A.run")"
req "$ED" GET /v1/modules
is_status "tokens created before the restart still work" 200
done_testing
