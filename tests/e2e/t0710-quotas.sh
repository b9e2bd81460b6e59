#!/usr/bin/env bash
# Storage quotas (docs/operations.md "Quotas"): run.sh --fresh gives the
# tenant olv-quota a [tenant NAME] max_stored_mb of 1 (1048576 bytes);
# every other tenant has none.
#
# Under its quota, a scenario whose own bytes would take the tenant past
# it is 507 quota_exceeded. A run whose outputs (20 steps of a 64 KiB
# mock) pass the quota ends failed, its reason naming max_stored_mb, its
# outputs kept: the tenant is then over its quota, and every create
# (scenario create and update, session import, suite create and update,
# run, replay, comparison; through the API, the CLI and the admin view's
# run form) is 507 quota_exceeded with the figures in the message and in
# used_bytes, limit_bytes and request_bytes, and writes nothing (scenario,
# run, session and suite counts and the audit trail unchanged). Reads and
# a delete still work; another tenant still creates (201);
# `olivares-admin tenant usage` shows the figures the 507 gave.
. "$(dirname "$0")/lib.sh"
e2e_require
M=/v1/m/sandbox
SUITE=compare-steps

TQ=${OLV_QUOTA_TENANT:-}
if [[ -z $TQ ]]; then
	echo "# skip - this stack was not started by run.sh --fresh (no tenant with a quota)"
	ok "quotas: skipped (no max_stored_mb tenant on this stack)"
	done_testing
fi
Q=$(new_tenant_token "$TQ" admin)
module_on "$Q" || exit 1

# usage_of NAME FILTER: FILTER on NAME's object of `tenant usage --json`
if [[ $(usage_of "$TQ" .total_bytes) != 0 ]]; then
	echo "# skip - tenant $TQ already stores data (run.sh --fresh starts with none)"
	ok "quotas: skipped (the quota tenant is not new)"
	done_testing
fi
is "tenant usage: the quota tenant's quota is 1048576 bytes" 1048576 "$(usage_of "$TQ" .quota_bytes)"

# ---- under the quota ----------------------------------------------------------

req "$Q" POST $M/sessions '{"external_id":"quota-session","events":[]}'
is_status "session import under the quota: 201" 201
SESS=$(jqb .id)
req "$Q" POST $M/suites '{"name":"quota-suite","threshold":0.5,"expectations":[{"step":"*","not_mock_miss":true}]}'
is_status "suite create under the quota: 201" 201
SMALL='{"name":"quota small","steps":[{"key":"k","input":"tool:small"}],"mocks":[{"resource":"tool:small","response":"small answer"}]}'
req "$Q" POST $M/scenarios "$SMALL"
is_status "small scenario under the quota: 201" 201
SMALL_ID=$(jqb .id)
req "$Q" POST $M/scenarios "$SMALL"
SPARE_ID=$(jqb .id)

# a scenario of two 64 KiB mocks; then one of 15 (under the 1 MiB body
# limit): with what the tenant stores already, it would pass the quota by
# its own bytes
X64=$(repeat_char x 65536)
jq -cn --arg r "$X64" '{name:"quota two",steps:[{key:"k",input:"tool:m1"}],
	mocks:[range(1;3) | {resource:"tool:m\(.)", response:$r}]}' >"$E2E_TMP/two.json"
req_file "$Q" POST $M/scenarios "$E2E_TMP/two.json"
is_status "a scenario of two 64 KiB mocks under the quota: 201" 201
jq -cn --arg r "$X64" '{name:"quota fifteen",steps:[{key:"k",input:"tool:m1"}],
	mocks:[range(1;16) | {resource:"tool:m\(.)", response:$r}]}' >"$E2E_TMP/fifteen.json"
BEFORE=$(state_counts "$Q")
req_file "$Q" POST $M/scenarios "$E2E_TMP/fifteen.json"
is_error "a scenario that would pass the quota by its own bytes: 507 quota_exceeded" 507 quota_exceeded
USED=$(jqb .error.used_bytes)
REQB=$(jqb .error.request_bytes)
if [[ $USED =~ ^[0-9]+$ && $REQB =~ ^[0-9]+$ ]] && ((USED < 1048576 && USED + REQB > 1048576 && REQB > 15 * 65536)); then
	ok "its figures: used $USED (under the quota) + request $REQB > 1048576"
else
	not_ok "its figures: used + request past 1048576, used under it (got $(short "$BODY"))"
fi
is "its limit_bytes is the quota" 1048576 "$(jqb .error.limit_bytes)"
MSG=$(jqb .error.message)
if [[ $MSG == *"$USED"* && $MSG == *1048576* && $MSG == *"$REQB"* && $MSG == *"max_stored_mb = 1"* ]]; then
	ok "its message names the figures and max_stored_mb"
else
	not_ok "its message names the figures and max_stored_mb (got $(short "$MSG"))"
fi
is "nothing was written (scenarios, runs, audit)" "$BEFORE" "$(state_counts "$Q")"

# ---- a run whose outputs pass the quota ---------------------------------------

jq -cn --arg r "$X64" '{name:"quota big outputs",steps:[range(1;21) | {key:"s\(.)",input:"tool:big"}],
	mocks:[{resource:"tool:big", response:$r}]}' >"$E2E_TMP/big.json"
req_file "$Q" POST $M/scenarios "$E2E_TMP/big.json"
is_status "a scenario of 20 steps on a 64 KiB mock: 201" 201
BIG_ID=$(jqb .id)
req "$Q" POST "$M/scenarios/$BIG_ID/runs" '{}'
RID=$(jqb .id)
for _ in $(seq 1 120); do
	[[ $(jqb .status) == queued || $(jqb .status) == running ]] || break
	sleep 0.5
	req "$Q" GET "$M/runs/$RID"
done
is "the run whose outputs pass the quota ends failed" failed "$(jqb .status)"
REASON=$(jqb .reason)
if [[ $REASON == *"storage quota"* && $REASON == *max_stored_mb* && $REASON == *"1048576 bytes"* ]]; then
	ok "its reason names the quota: $(short "$REASON")"
else
	not_ok "its reason names the quota (got $(short "$REASON"))"
fi
req "$Q" GET "$M/runs/$RID/outputs"
is_status "its outputs read over the quota: 200" 200
NOUT=$(jqb '.outputs | length')
if [[ $NOUT =~ ^[0-9]+$ ]] && ((NOUT >= 1 && NOUT < 20)); then
	ok "its outputs up to the step that passed the quota are kept ($NOUT of 20)"
else
	not_ok "its outputs up to the step that passed the quota are kept (got $NOUT)"
fi
TOTAL=$(usage_of "$TQ" .total_bytes)
if [[ $TOTAL =~ ^[0-9]+$ ]] && ((TOTAL > 1048576)); then
	ok "the tenant is now over its quota ($TOTAL bytes)"
else
	not_ok "the tenant is now over its quota (tenant usage says $TOTAL)"
fi

# ---- over the quota: every create is 507 and writes nothing --------------------

# signed in to the admin view first: a sign-in is audited
curl -s -S -o "$E2E_TMP/login.html" -D "$E2E_TMP/login.hdr" -X POST --data-urlencode "token=$Q" \
	"$OLIVARES_URL/admin/login" 2>/dev/null || true
COOKIE=$(tr -d '\r' <"$E2E_TMP/login.hdr" | sed -n 's/^[Ss]et-[Cc]ookie: olivares_session=\([^;]*\).*/\1/p' | head -n 1)
curl -s -S -o "$E2E_TMP/overview.html" -H "Cookie: olivares_session=$COOKIE" "$OLIVARES_URL/admin/" 2>/dev/null || true
CSRF=$(xmllint --html --xpath 'string(//form[@id="signout"]//input[@name="csrf"]/@value)' "$E2E_TMP/overview.html" 2>/dev/null)
count_of() { count_all "$Q" "$M/$1" "$1"; }
BEFORE="$(state_counts "$Q") sessions=$(count_of sessions) suites=$(count_of suites)"
req "$Q" POST $M/scenarios "$SMALL"
is_error "over the quota: scenario create 507 quota_exceeded" 507 quota_exceeded
is "its used_bytes is what tenant usage says" "$TOTAL" "$(jqb .error.used_bytes)"
is "its request_bytes is the scenario's" 1 "$(jqb 'if .error.request_bytes > 0 then 1 else 0 end')"
req "$Q" PUT "$M/scenarios/$SMALL_ID" "$SMALL"
is_error "over the quota: scenario update 507" 507 quota_exceeded
req "$Q" POST $M/sessions '{"external_id":"quota-session-2","events":[]}'
is_error "over the quota: session import 507" 507 quota_exceeded
req "$Q" POST $M/suites '{"name":"quota-suite-2","threshold":0.5,"expectations":[{"step":"*","not_mock_miss":true}]}'
is_error "over the quota: suite create 507" 507 quota_exceeded
req "$Q" PUT $M/suites/quota-suite '{"threshold":0.7,"expectations":[{"step":"*","not_mock_miss":true}]}'
is_error "over the quota: suite update 507" 507 quota_exceeded
req "$Q" POST "$M/scenarios/$SMALL_ID/runs" '{}'
is_error "over the quota: run create 507" 507 quota_exceeded
is "its request_bytes is 0 (a run's outputs come later)" 0 "$(jqb .error.request_bytes)"
req "$Q" POST $M/replays "{\"session_id\":\"$SESS\"}"
is_error "over the quota: replay create 507" 507 quota_exceeded
req "$Q" POST $M/comparisons "{\"scenario_id\":\"$SMALL_ID\",\"baseline\":\"a\",\"candidate\":\"b\",\"suite\":\"$SUITE\"}"
is_error "over the quota: comparison create 507" 507 quota_exceeded

# the CLI says it as other API errors, and exits 1
printf '[{"key":"k","input":"tool:small"}]' >"$E2E_TMP/steps.json"
printf '[{"resource":"tool:small","response":"small answer"}]' >"$E2E_TMP/mocks.json"
rc=0
OLIVARES_TOKEN=$Q olivares sandbox scenarios create --name cli-over --steps-file "$E2E_TMP/steps.json" \
	--mocks-file "$E2E_TMP/mocks.json" >"$E2E_TMP/cli.out" 2>"$E2E_TMP/cli.err" || rc=$?
is "CLI scenario create over the quota: exit 1" 1 "$rc"
if grep -q '(quota_exceeded, HTTP 507)' "$E2E_TMP/cli.err" && grep -q 'max_stored_mb = 1' "$E2E_TMP/cli.err"; then
	ok "the CLI prints the message, quota_exceeded and HTTP 507"
else
	not_ok "the CLI prints the message, quota_exceeded and HTTP 507 (got $(short "$(cat "$E2E_TMP/cli.err")"))"
fi

# the admin view's run form gets the same refusal
VST=$(curl -s -S -o "$E2E_TMP/form.html" -w '%{http_code}' -X POST -H "Cookie: olivares_session=$COOKIE" \
	--data "variant=&backend=&csrf=$CSRF" "$OLIVARES_URL/admin/scenarios/$SMALL_ID/runs" 2>/dev/null) || true
is "admin view run form over the quota: 507" 507 "$VST"
VERR=$(xmllint --html --xpath 'string(//*[@id="error"])' "$E2E_TMP/form.html" 2>/dev/null)
if [[ $VERR == *"storage quota"* ]]; then
	ok "its page's #error names the storage quota"
else
	not_ok "its page's #error names the storage quota (got $(short "$VERR"))"
fi

is "nothing was written by the refused creates (scenarios, runs, audit, sessions, suites)" "$BEFORE" \
	"$(state_counts "$Q") sessions=$(count_of sessions) suites=$(count_of suites)"

# ---- reads and deletes still work; another tenant is unaffected -----------------

req "$Q" GET "$M/scenarios/$BIG_ID"
is_status "over the quota: GET a scenario 200" 200
req "$Q" GET "$M/runs/$RID"
is_status "over the quota: GET a run 200" 200
req "$Q" GET "$M/runs?limit=5"
is_status "over the quota: list runs 200" 200
req "$Q" DELETE "$M/scenarios/$SPARE_ID"
is_status "over the quota: DELETE a scenario 200" 200
req "$Q" GET "$M/scenarios/$SPARE_ID"
is_status "the deleted scenario is gone: 404" 404

module_on "$OLV_ADMIN_TOKEN" || exit 1
req "$OLV_EDITOR_TOKEN" POST $M/scenarios "$SMALL"
is_status "another tenant (no quota): scenario create 201" 201
OTHER=$(jqb .id)
req "$OLV_EDITOR_TOKEN" POST "$M/scenarios/$OTHER/runs" '{}'
is_status "another tenant: its run 201" 201
is "another tenant: its run completed" completed "$(jqb .status)"
req "$OLV_EDITOR_TOKEN" DELETE "$M/scenarios/$OTHER"

# ---- olivares-admin tenant usage ---------------------------------------------------

rc=0
admin_cli tenant usage >"$E2E_TMP/usage.txt" 2>"$E2E_TMP/usage.err" || rc=$?
is "olivares-admin tenant usage: exit 0" 0 "$rc"
is "its header" "name	scenarios_mib	outputs_mib	logs_mib	sessions_mib	suites_mib	total_mib	quota	runs	state" \
	"$(head -n 1 "$E2E_TMP/usage.txt")"
LINE=$(awk -F'\t' -v n="$TQ" '$1 == n' "$E2E_TMP/usage.txt")
IFS=$'\t' read -r _ _ OUTMIB _ _ _ TOTMIB QUOTA RUNS STATE <<<"$LINE"
is "the quota tenant's line: quota 1 MiB, 1 run, OVER" "1 MiB|1|OVER" "$QUOTA|$RUNS|$STATE"
TOTAL=$(usage_of "$TQ" .total_bytes)
is "its total in MiB is the JSON's total_bytes / 1048576" "$(awk -v b="$TOTAL" 'BEGIN { printf "%.2f", b / 1048576 }')" "$TOTMIB"
is "its outputs in MiB are the JSON's" "$(awk -v b="$(usage_of "$TQ" .outputs_bytes)" 'BEGIN { printf "%.2f", b / 1048576 }')" "$OUTMIB"
is "the JSON's figures add up" "$TOTAL" "$(usage_of "$TQ" '.scenarios_bytes + .outputs_bytes + .logs_bytes + .sessions_bytes + .suites_bytes')"
is "the JSON says over_quota" true "$(usage_of "$TQ" .over_quota)"
req "$Q" POST $M/scenarios "$SMALL"
is "the next 507's used_bytes is tenant usage's total" "$TOTAL" "$(jqb .error.used_bytes)"
DEMO=$(awk -F'\t' '$1 == "demo" { print $8 }' "$E2E_TMP/usage.txt")
is "a tenant without a quota says none" none "$DEMO"

# A 507 is the tenant's state, not the server's fault: its access lines
# are warnings, never errors (alerts on error lines stay quiet)
is "the access lines of the 507s are at level warning" "warning" \
	"$(jq -r 'select(.msg == "request" and .status == 507) | .level' \
		"$OLIVARES_DATA/log/olivares-fcgi.log" 2>/dev/null | sort -u | paste -sd' ')"

done_testing
