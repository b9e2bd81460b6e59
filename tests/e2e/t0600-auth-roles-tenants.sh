#!/usr/bin/env bash
# Auth, roles and tenants: no token or a wrong token is 401; a viewer reads
# but cannot generate, create, update, delete or run (403); another tenant
# gets 404 for every id of the first; refusals write nothing.
. "$(dirname "$0")/lib.sh"
e2e_require
module_on "$OLV_ADMIN_TOKEN" || exit 1
AD=$OLV_ADMIN_TOKEN
ED=$OLV_EDITOR_TOKEN
VW=$OLV_VIEWER_TOKEN
M=/v1/m/sandbox

req "$ED" POST $M/scenarios '{"name":"auth","steps":[{"input":"agent:user1@example.test"}],"mocks":[{"resource":"agent:user1@example.test","response":"first synthetic account"}]}'
is_status "editor creates a scenario" 201
SID=$(jqb .id)
req "$ED" POST "$M/scenarios/$SID/runs" '{"variant":"candidate"}'
is_status "editor runs it" 201
RID=$(jqb .id)
before=$(state_counts "$AD")

# --- 401
for path in /v1/modules $M/scenarios "$M/scenarios/$SID" "$M/runs/$RID" "$M/runs/$RID/outputs"; do
	req "" GET "$path"
	is_error "no token: GET $path -> 401" 401 unauthorized
done
req "" POST $M/synthetic-data '{"count":1}'
is_error "no token: generate -> 401" 401 unauthorized
req "olv_$(repeat_char 0 64)" GET $M/scenarios
is_error "well-formed unknown token -> 401" 401 unauthorized
req "${ED%?}x" GET $M/scenarios
is_error "editor token with its last character changed -> 401" 401 unauthorized
req "${ED}0" GET $M/scenarios
is_error "editor token with one more character -> 401" 401 unauthorized
req "not-a-token" POST $M/scenarios '{"name":"x","steps":[{"input":"a"}]}'
is_error "garbage token on create -> 401" 401 unauthorized
st=$(curl -s -o "$BODY_FILE" -w '%{http_code}' -H "Authorization: Basic $(printf 'a:b' | base64)" "$OLIVARES_URL$M/scenarios")
STATUS=$st BODY=$(cat "$BODY_FILE")
is_error "Basic auth -> 401" 401 unauthorized
st=$(curl -s -o "$BODY_FILE" -w '%{http_code}' -H "Authorization: bearer$ED" "$OLIVARES_URL$M/scenarios")
STATUS=$st BODY=$(cat "$BODY_FILE")
is_error "malformed Authorization header -> 401" 401 unauthorized
if (unset OLIVARES_TOKEN; olivares sandbox scenarios list -o json >"$E2E_TMP/out" 2>"$E2E_TMP/err"); then
	not_ok "cli without OLIVARES_TOKEN fails"
else
	ok "cli without OLIVARES_TOKEN fails"
fi

# --- viewer: reads
for path in /v1/modules $M/scenarios "$M/scenarios/$SID" $M/runs "$M/runs/$RID" "$M/runs/$RID/outputs"; do
	req "$VW" GET "$path"
	is_status "viewer: GET $path -> 200" 200
done
# --- viewer: no writes
req "$VW" POST $M/synthetic-data '{"count":1}'
is_error "viewer: generate -> 403" 403 forbidden
req "$VW" POST $M/scenarios '{"name":"viewer","steps":[{"input":"a"}]}'
is_error "viewer: create -> 403" 403 forbidden
req "$VW" POST "$M/scenarios/$SID/runs" '{"variant":"candidate"}'
is_error "viewer: run -> 403" 403 forbidden
req "$VW" PUT "$M/scenarios/$SID" '{"description":"viewer was here"}'
is_error "viewer: update -> 403" 403 forbidden
req "$VW" DELETE "$M/scenarios/$SID"
is_error "viewer: delete -> 403" 403 forbidden
req "$VW" PUT /v1/modules/sandbox '{"enabled":false}'
is_error "viewer: module switch -> 403" 403 forbidden
req "$VW" GET $M/audit
is_error "viewer: audit -> 403" 403 forbidden
req "$ED" GET $M/audit
is_error "editor: audit -> 403 (admin only)" 403 forbidden
if OLIVARES_TOKEN=$VW olivares sandbox generate --count 2 -o json >"$E2E_TMP/out" 2>"$E2E_TMP/err"; then
	not_ok "cli generate as viewer fails"
else
	if [[ -s $E2E_TMP/err && ! -s $E2E_TMP/out ]]; then ok "cli generate as viewer: exit non-zero, message on stderr"; else not_ok "cli generate as viewer: message on stderr only"; fi
fi
after=$(state_counts "$AD")
is "refused requests wrote nothing (scenarios, runs, audit)" "$before" "$after"
req "$VW" GET "$M/scenarios/$SID"
is "scenario unchanged by the viewer" "1 auth" "$(jqb '"\(.version) \(.name)"')"

# --- another tenant
T2=$(unique other)
OT=$(new_tenant_token "$T2" admin)
if [[ -n $OT ]]; then ok "second tenant and its admin token"; else not_ok "second tenant and its admin token"; fi
module_on "$OT"
req "$OT" GET "$M/scenarios/$SID"
is_error "other tenant: get scenario -> 404" 404 not_found
req "$OT" PUT "$M/scenarios/$SID" '{"description":"mine now"}'
is_error "other tenant: update scenario -> 404" 404 not_found
req "$OT" POST "$M/scenarios/$SID/runs" '{}'
is_error "other tenant: run scenario -> 404" 404 not_found
req "$OT" DELETE "$M/scenarios/$SID"
is_error "other tenant: delete scenario -> 404" 404 not_found
req "$OT" GET "$M/runs/$RID"
is_error "other tenant: get run -> 404" 404 not_found
req "$OT" GET "$M/runs/$RID/outputs"
is_error "other tenant: outputs -> 404" 404 not_found
req "$OT" GET "$M/runs?scenario=$SID"
is "other tenant: runs filtered by the first tenant's scenario: none" 0 "$(jqb '.runs|length')"
req "$OT" GET "$M/scenarios?limit=100"
is "other tenant: sees none of the first tenant's scenarios" false "$(jq --arg id "$SID" 'any(.scenarios[]; .id==$id)' "$BODY_FILE")"
req "$OT" GET "$M/runs?limit=100"
is "other tenant: sees none of the first tenant's runs" false "$(jq --arg id "$RID" 'any(.runs[]; .id==$id)' "$BODY_FILE")"
req "$OT" GET "$M/audit?limit=500"
if grep -q "$SID\|$RID" "$BODY_FILE"; then not_ok "other tenant: audit holds none of the first tenant's ids"; else ok "other tenant: audit holds none of the first tenant's ids"; fi
req "$ED" GET "$M/scenarios/$SID"
is "first tenant's scenario intact after the other's attempts" "1 auth" "$(jqb '"\(.version) \(.name)"')"
req "$ED" GET "$M/runs/$RID/outputs"
is "first tenant's outputs intact" "first synthetic account" "$(jqb '.outputs[0].output')"
done_testing
