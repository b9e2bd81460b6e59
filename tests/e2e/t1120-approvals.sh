#!/usr/bin/env bash
# Approvals: POST /v1/m/sandbox/comparisons/{id}/approval (admin) appends an
# audited decision on a settled comparison; GET of the comparison shows the
# newest ("approval") and the history ("approvals"); the CLI's approve and
# reject; `sandbox gate --require-approval`: 0 for an approved improved
# verdict of the scenario's current version, 4 while unapproved, 1 when
# rejected or regressed, 3 once the scenario is updated since. A comparison
# still pending is 409, another tenant's 404, a bad body 400; refusals
# write nothing.
#
# Needs the builtin scorer on tests/fixtures/suites (run.sh --fresh).
. "$(dirname "$0")/lib.sh"
e2e_require
cd "$E2E_TMP" || exit 1

AD=$OLV_ADMIN_TOKEN
ED=$OLV_EDITOR_TOKEN
VW=$OLV_VIEWER_TOKEN
SUITE=compare-steps
M=/v1/m/sandbox

if [[ -z ${OLV_SUITES_DIR:-} || ! -f ${OLV_SUITES_DIR}/$SUITE.json ]]; then
	echo "# skip - this stack was not started by run.sh --fresh with the builtin scorer on tests/fixtures/suites"
	ok "approvals: skipped (no builtin scorer with suite $SUITE on this stack)"
	done_testing
fi
module_on "$AD" || exit 1

# cli ARGS...: the olivares CLI as the admin; OUT, ERR, RC
cli() {
	RC=0
	OUT=$(OLIVARES_TOKEN=${CLI_TOKEN:-$AD} olivares "$@" 2>"$E2E_TMP/stderr") || RC=$?
	ERR=$(cat "$E2E_TMP/stderr")
	echo "# \$ olivares $* -> $RC"
	if [[ -n $ERR ]]; then printf '%s\n' "$ERR" | sed 's/^/#   stderr: /'; fi
}
approvals() {
	req "$VW" GET "$M/comparisons/$1"
	jqb '.approvals | length'
}

STEPS='[{"key":"s1","input":"q1"},{"key":"s2","input":"q2"},{"key":"s3","input":"q3"},{"key":"s4","input":"q4"}]'
MOCKS='[{"resource":"q1","response":"a1"},
 {"resource":"q2","response":"a2","variant":"base"},
 {"resource":"q2","response":"a2","variant":"up"},
 {"resource":"q3","response":"a3","variant":"up"}]'
req "$ED" POST $M/scenarios "{\"name\":\"approvals\",\"steps\":$STEPS,\"mocks\":$MOCKS}"
is_status "scenario created" 201
SID=$(jqb .id)
req "$AD" POST $M/comparisons "{\"scenario_id\":\"$SID\",\"baseline\":\"base\",\"candidate\":\"up\",\"suite\":\"$SUITE\"}"
is_status "comparison base -> up" 201
CID=$(jqb .id)
is "comparison: improved" improved "$(jqb .verdict)"
ADMIN_TID=$(jqb .decided_by)

req "$VW" GET "$M/comparisons/$CID"
is "before any decision: approval null, approvals []" "null []" "$(jqb '"\(.approval) \(.approvals|tojson)"')"

# ---- unapproved: the gate stays closed (4)
cli sandbox gate --scenario "$SID"
is "gate without --require-approval: improved opens it (0)" 0 "$RC"
cli sandbox gate --scenario "$SID" --require-approval
is "gate --require-approval, not approved yet: exit 4" 4 "$RC"
is "  stderr says it is not approved" 1 "$(grep -c 'not approved yet' <<<"$ERR")"

# ---- approve through the CLI
req "$AD" GET "$M/audit?limit=1"
before_audit=$(jqb '.events[0].id')
cli sandbox approve "$CID" --reason "scores up on s3, reviewed"
is "approve: exit 0" 0 "$RC"
is "approve: table line" "approved comparison=$CID" "$(awk '{print $1, $2}' <<<"$OUT")"
req "$VW" GET "$M/comparisons/$CID"
is "approval: decision, reason, by the admin's token" \
	"approved|scores up on s3, reviewed|$ADMIN_TID" \
	"$(jqb '"\(.approval.decision)|\(.approval.reason)|\(.approval.decided_by)"')"
is "approvals: one, the same as approval" "1 true" "$(jqb '"\(.approvals|length) \(.approvals[0] == .approval)"')"
is "approval: exactly its keys" '["comparison_id","created_at","decided_by","decision","id","reason"]' "$(jqb '.approval|keys|tojson')"
is "audit: one sandbox.approval event" "sandbox.approval" "$(audit_since "$AD" "$before_audit")"
req "$AD" GET "$M/audit?limit=1"
is "audit event: target the comparison, detail decision and reason" \
	"$CID approved scores up on s3, reviewed" \
	"$(jqb '.events[0] | "\(.target_id) \(.detail.decision) \(.detail.reason)"')"
cli sandbox gate --scenario "$SID" --require-approval
is "gate --require-approval, approved improved: exit 0" 0 "$RC"

# ---- reject: a new row, the newest counts
cli sandbox reject "$CID" --reason "flaky mock on q3"
is "reject: exit 0" 0 "$RC"
req "$VW" GET "$M/comparisons/$CID"
is "after reject: approval rejected, history approved then rejected" "rejected approved,rejected" \
	"$(jqb '"\(.approval.decision) \([.approvals[].decision]|join(","))"')"
cli sandbox gate --scenario "$SID" --require-approval
is "gate --require-approval, rejected: exit 1" 1 "$RC"
is "  stderr names the rejection and its reason" 1 "$(grep -c 'rejected (flaky mock on q3)' <<<"$ERR")"
cli sandbox approve "$CID" --reason "re-run was clean" -o json
is "approve again (-o json): the approval object" "approved re-run was clean" "$(jq -r '"\(.decision) \(.reason)"' <<<"$OUT")"
cli sandbox gate --scenario "$SID" --require-approval
is "gate --require-approval, approved again: exit 0" 0 "$RC"
is "three decisions kept" 3 "$(approvals "$CID")"

# ---- the admin view: the decision that counts, the history, the form
hp() { curl -s -o page.html -w '%{http_code}' -H "Authorization: Bearer $1" "$OLIVARES_URL$2"; }
hx() { xmllint --html --xpath "$1" page.html 2>/dev/null; }
is "admin view: the comparison page answers 200" 200 "$(hp "$AD" "/admin/comparisons/$CID")"
is "admin view: the decision that counts, in its span" "approved 1" \
	"$(hx 'string(//p[@id="approval-decision"]/span)') $(hx 'count(//p[@id="approval-decision"]/span[@class="approval-approved"])')"
is "admin view: the history, oldest first" "approved,rejected,approved" \
	"$(hx '//table[@id="approvals"]//td[@class="decision"]/text()' | paste -sd, -)"
is "admin view: each reason as text" "re-run was clean" "$(hx 'string(//table[@id="approvals"]/tbody/tr[3]/td[@class="reason"])' | xargs)"
is "admin view: an admin gets the approval form" 1 "$(hx 'count(//form[@id="approval-form"])')"
is "admin view: a viewer sees the decision, not the form" "200 approved 0" \
	"$(hp "$VW" "/admin/comparisons/$CID") $(hx 'string(//p[@id="approval-decision"]/span)') $(hx 'count(//form[@id="approval-form"])')"
STATUS=$(curl -s -o page.html -D headers.txt -w '%{http_code}' -H "Authorization: Bearer $AD" \
	--data-urlencode decision=rejected --data-urlencode 'reason=<b>seen</b> in the view' \
	"$OLIVARES_URL/admin/comparisons/$CID/approval")
is "admin view: the form's decision -> 303 back to the comparison" "303 /admin/comparisons/$CID" \
	"$STATUS $(tr -d '\r' <headers.txt | sed -n 's/^[Ll]ocation: *//p' | sed "s|^${OLIVARES_URL%/}||")"
req "$VW" GET "$M/comparisons/$CID"
is "admin view: the decision was appended as the admin's" "rejected <b>seen</b> in the view $ADMIN_TID 4" \
	"$(jqb '"\(.approval.decision) \(.approval.reason) \(.approval.decided_by) \(.approvals|length)"')"
hp "$AD" "/admin/comparisons/$CID" >/dev/null
is "admin view: a reason with markup is text" "0 rejected" \
	"$(hx 'count(//table[@id="approvals"]//b)') $(hx 'string(//p[@id="approval-decision"]/span[@class="approval-rejected"])')"
STATUS=$(curl -s -o page.html -w '%{http_code}' -H "Authorization: Bearer $VW" \
	--data-urlencode decision=approved --data-urlencode reason=viewer "$OLIVARES_URL/admin/comparisons/$CID/approval")
is "admin view: a viewer's form post -> 403" 403 "$STATUS"
STATUS=$(curl -s -o page.html -w '%{http_code}' -H "Authorization: Bearer $AD" \
	--data-urlencode decision=maybe --data-urlencode reason=x "$OLIVARES_URL/admin/comparisons/$CID/approval")
is "admin view: a bad decision -> 400, the API's message" "400 1" "$STATUS $(grep -c 'decision' page.html | sed 's/^[1-9][0-9]*$/1/')"
cli sandbox approve "$CID" --reason "back to approved"
is "approve after the view's reject: exit 0" 0 "$RC"

# ---- refusals write nothing
before=$(state_counts "$AD")
for body in '{"decision":"maybe","reason":"x"}' '{"decision":"approved"}' '{"decision":"approved","reason":""}' \
	'{"decision":"approved","reason":"   "}' '{"decision":"approved","reason":7}' \
	'{"decision":"approved","reason":"ok","extra":1}' '[]'; do
	req "$AD" POST "$M/comparisons/$CID/approval" "$body"
	is_error "bad body $body -> 400" 400 malformed
done
for ctl in '\u001b[31mred' 'bell\u0007' 'del\u007f' 'c1\u009b2J' 'nul\u0000'; do
	req "$AD" POST "$M/comparisons/$CID/approval" "{\"decision\":\"approved\",\"reason\":\"ok $ctl\"}"
	is_error "a reason with a control character ($ctl) -> 400" 400 malformed
done
long=$(repeat_char a 1001)
req "$AD" POST "$M/comparisons/$CID/approval" "{\"decision\":\"approved\",\"reason\":\"$long\"}"
is_error "reason of 1001 characters -> 400" 400 malformed
req "$ED" POST "$M/comparisons/$CID/approval" '{"decision":"approved","reason":"editor"}'
is_error "editor -> 403" 403 forbidden
req "$VW" POST "$M/comparisons/$CID/approval" '{"decision":"approved","reason":"viewer"}'
is_error "viewer -> 403" 403 forbidden
req "$AD" POST "$M/comparisons/$(repeat_char 0 32)/approval" '{"decision":"approved","reason":"none"}'
is_error "unknown comparison -> 404" 404 not_found
OTHER=$(new_tenant_token "$(unique approvals-other)" admin)
module_on "$OTHER" || exit 1
req "$OTHER" POST "$M/comparisons/$CID/approval" '{"decision":"rejected","reason":"not mine"}'
is_error "another tenant's admin -> 404" 404 not_found
req "$OTHER" GET "$M/comparisons/$CID"
is_error "another tenant: GET -> 404" 404 not_found
req "$AD" PUT "$M/comparisons/$CID/approval" '{"decision":"approved","reason":"x"}'
is "PUT approval -> 405 (append-only)" 405 "$STATUS"
req "$AD" DELETE "$M/comparisons/$CID/approval"
is "DELETE approval -> 405 (append-only)" 405 "$STATUS"
is "refusals wrote nothing (scenarios, runs, audit)" "$before" "$(state_counts "$AD")"
is "still five decisions" 5 "$(approvals "$CID")"
req "$AD" POST "$M/comparisons/$CID/approval" '{"decision":"approved","reason":"line one\n\tline two"}'
is "a reason with a tab and a line break is text: 201" 201 "$STATUS"
cli sandbox approve "$CID"
is "approve without --reason: usage error (2)" 2 "$RC"
CLI_TOKEN=$ED cli sandbox approve "$CID" --reason "editor try"
is "approve as editor: exit 1" 1 "$RC"

# ---- pending: 409 (a mock that answers after 4 s keeps both runs busy)
SLOW='[{"resource":"q1","response":"a1","delay_ms":4000}]'
req "$ED" POST $M/scenarios "{\"name\":\"approvals-slow\",\"steps\":[{\"key\":\"s1\",\"input\":\"q1\"}],\"mocks\":$SLOW}"
SLOW_SID=$(jqb .id)
STATUS=$(curl -s -o "$BODY_FILE" -w '%{http_code}' -X POST -H "Authorization: Bearer $AD" -H 'Prefer: wait=0' \
	-H 'Content-Type: application/json' \
	--data-binary "{\"scenario_id\":\"$SLOW_SID\",\"baseline\":\"base\",\"candidate\":\"up\",\"suite\":\"$SUITE\"}" \
	"$OLIVARES_URL$M/comparisons")
read_body
is "slow comparison: 202 pending" "202 pending" "$STATUS $(jqb .status)"
PCID=$(jqb .id)
req "$AD" POST "$M/comparisons/$PCID/approval" '{"decision":"approved","reason":"too early"}'
is_error "approval of a pending comparison -> 409" 409 conflict
for _ in $(seq 1 60); do
	req "$VW" GET "$M/comparisons/$PCID"
	[[ $(jqb .status) == decided ]] && break
	sleep 0.5
done
is "the slow comparison settles, with no approval" "decided 0" "$(jqb '"\(.status) \(.approvals|length)"')"

# ---- approved, then the scenario updated: the approval no longer opens the gate
req "$ED" PUT "$M/scenarios/$SID" "{\"name\":\"approvals\",\"description\":\"updated\",\"steps\":$STEPS,\"mocks\":$MOCKS}"
is "scenario updated (version 2, same steps and mocks)" "200 2" "$STATUS $(jqb .version)"
cli sandbox gate --scenario "$SID"
is "gate without --require-approval: same content still opens it (0)" 0 "$RC"
cli sandbox gate --scenario "$SID" --require-approval
is "gate --require-approval, approved but of version 1: exit 3" 3 "$RC"
is "  stderr names both versions" 1 "$(grep -c 'version 1, the scenario is at version 2' <<<"$ERR")"

# ---- an approved regression stays closed
req "$AD" POST $M/comparisons "{\"scenario_id\":\"$SID\",\"baseline\":\"up\",\"candidate\":\"base\",\"suite\":\"$SUITE\"}"
is "comparison up -> base: regressed" "201 regressed" "$STATUS $(jqb .verdict)"
RCID=$(jqb .id)
cli sandbox approve "$RCID" --reason "accepting the drop"
cli sandbox gate --scenario "$SID" --require-approval
is "gate --require-approval, approved regressed: exit 1" 1 "$RC"

# ---- scoped tokens: a CI token compares, reads and gates, and nothing else
ST=$(unique approvals-scopes)
FULL=$(new_tenant_token "$ST" admin)
module_on "$FULL" || exit 1
req "$FULL" POST $M/scenarios "{\"name\":\"scoped\",\"steps\":$STEPS,\"mocks\":$MOCKS}"
is "scopes: a scenario by the tenant's full admin" 201 "$STATUS"
SSID=$(jqb .id)
CI_TOK=$(admin_cli token create --tenant "$ST" --role admin --label ci --scopes compare,read 2>"$E2E_TMP/stderr")
is "scopes: token create --scopes compare,read prints a token; stderr names its scopes" "1 1" \
	"$([[ $CI_TOK == olv_* ]] && echo 1 || echo 0) $(grep -c 'scopes=read,compare' "$E2E_TMP/stderr")"
is "scopes: token list shows them" 1 "$(admin_cli token list --tenant "$ST" 2>/dev/null | grep -c 'read,compare')"
RC=0
admin_cli token create --tenant "$ST" --role admin --scopes compare,deploy >/dev/null 2>"$E2E_TMP/stderr" || RC=$?
is "scopes: an unknown scope is a usage error (2), naming the list" "2 1" "$RC $(grep -c 'read, run, compare, write, approve, admin' "$E2E_TMP/stderr")"
req "$CI_TOK" POST $M/comparisons "{\"scenario_id\":\"$SSID\",\"baseline\":\"base\",\"candidate\":\"up\",\"suite\":\"$SUITE\"}"
is "scopes: the CI token compares (201 improved)" "201 improved" "$STATUS $(jqb .verdict)"
SCID=$(jqb .id)
req "$CI_TOK" GET "$M/comparisons/$SCID"
is "scopes: and reads" 200 "$STATUS"
CLI_TOKEN=$CI_TOK cli sandbox gate --scenario "$SSID"
is "scopes: and gates (0)" 0 "$RC"
before=$(state_counts "$FULL")
req "$CI_TOK" PUT /v1/modules/sandbox '{"enabled":false}'
is_error "scopes: the module switch -> 403" 403 forbidden
is "scopes: the 403 names the token's scopes and the one needed" 1 \
	"$(jqb '.error.message' | grep -c 'scopes (read, compare) do not include admin')"
req "$CI_TOK" POST $M/scenarios "{\"name\":\"nope\",\"steps\":$STEPS,\"mocks\":$MOCKS}"
is_error "scopes: a scenario write -> 403" 403 forbidden
req "$CI_TOK" PUT "$M/scenarios/$SSID" "{\"name\":\"nope\",\"steps\":$STEPS,\"mocks\":$MOCKS}"
is_error "scopes: a scenario update -> 403" 403 forbidden
req "$CI_TOK" DELETE "$M/scenarios/$SSID"
is_error "scopes: a scenario delete -> 403" 403 forbidden
req "$CI_TOK" POST "$M/suites" '{"name":"ci-suite","expectations":[{"step":"*","not_mock_miss":true}]}'
is_error "scopes: a suite write -> 403" 403 forbidden
req "$CI_TOK" GET "$M/suites"
is "scopes: suites are read (200)" 200 "$STATUS"
req "$CI_TOK" POST "$M/comparisons/$SCID/approval" '{"decision":"approved","reason":"self-approve"}'
is_error "scopes: an approval -> 403" 403 forbidden
req "$CI_TOK" POST "$M/scenarios/$SSID/runs" '{"variant":"base"}'
is_error "scopes: a lone run (scope run) -> 403" 403 forbidden
req "$CI_TOK" GET "$M/audit"
is_error "scopes: the audit (admin) -> 403" 403 forbidden
is "scopes: the refusals wrote nothing" "$before" "$(state_counts "$FULL")"
req "$FULL" GET /v1/modules
is "scopes: the module is still on" true "$(jqb '[.modules[] | select(.name == "sandbox")][0].enabled')"
STATUS=$(curl -s -o page.html -w '%{http_code}' --data-urlencode "token=$CI_TOK" "$OLIVARES_URL/admin/login")
is "scopes: the admin view does not sign the CI token in (403)" "403 1" "$STATUS $(grep -c 'do not include admin' page.html | sed 's/^[1-9][0-9]*$/1/')"

done_testing
