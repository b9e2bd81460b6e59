#!/usr/bin/env bash
# Module enablement: off by default for a new tenant; off hides every
# sandbox route with 404 module_disabled (after auth, before the role check)
# and keeps the data; on again brings the same records back.
. "$(dirname "$0")/lib.sh"
e2e_require
module_on "$OLV_ADMIN_TOKEN" || exit 1
AD=$OLV_ADMIN_TOKEN
ED=$OLV_EDITOR_TOKEN
M=/v1/m/sandbox

# leave the module on for the next tests, whatever happens
trap 'req "$AD" PUT /v1/modules/sandbox "{\"enabled\":true}" >/dev/null; rm -rf "$E2E_TMP"' EXIT

req "$ED" POST $M/scenarios '{"name":"modules","steps":[{"input":"agent:user1@example.test"}],"mocks":[{"resource":"agent:user1@example.test","response":"first synthetic account"}]}'
is_status "create a scenario" 201
SID=$(jqb .id)
req "$ED" POST "$M/scenarios/$SID/runs" '{"variant":"candidate"}'
is_status "run it" 201
RID=$(jqb .id)
req "$AD" GET "$M/scenarios/$SID"
scen_before=$(jq -S . "$BODY_FILE")
req "$AD" GET "$M/runs/$RID"
run_before=$(jq -S . "$BODY_FILE")
req "$AD" GET "$M/runs/$RID/outputs"
outs_before=$(jq -S . "$BODY_FILE")
counts_before=$(state_counts "$AD")

cd "$E2E_TMP" || exit 1
if OLIVARES_TOKEN=$AD olivares modules off sandbox >out 2>err; then ok "olivares modules off sandbox"; else not_ok "olivares modules off sandbox ($(cat err))"; fi
req "$OLV_VIEWER_TOKEN" GET /v1/modules
is "GET /v1/modules: sandbox disabled" false "$(jqb '.modules[]|select(.name=="sandbox")|.enabled')"

req "$AD" GET $M/scenarios
is_error "off: list scenarios -> module_disabled" 404 module_disabled
is "off: the message says who turns it on, and how" \
	"the sandbox module is disabled for this tenant (an admin of the tenant turns it on: olivares modules on sandbox)" "$(jqb .error.message)"
req "$AD" GET "$M/scenarios/$SID"
is_error "off: get scenario -> module_disabled" 404 module_disabled
req "$AD" GET $M/runs
is_error "off: list runs -> module_disabled" 404 module_disabled
req "$AD" GET "$M/runs/$RID"
is_error "off: get run -> module_disabled" 404 module_disabled
req "$AD" GET "$M/runs/$RID/outputs"
is_error "off: outputs -> module_disabled" 404 module_disabled
req "$ED" POST $M/synthetic-data '{"count":1}'
is_error "off: generate -> module_disabled" 404 module_disabled
req "$ED" POST $M/scenarios '{"name":"while-off","steps":[{"input":"x"}]}'
is_error "off: create -> module_disabled" 404 module_disabled
req "$ED" POST "$M/scenarios/$SID/runs" '{}'
is_error "off: run -> module_disabled" 404 module_disabled
req "$ED" DELETE "$M/scenarios/$SID"
is_error "off: delete -> module_disabled" 404 module_disabled
req "$AD" GET "$M/audit"
is_error "off: audit -> module_disabled" 404 module_disabled
req "$OLV_VIEWER_TOKEN" POST $M/synthetic-data '{"count":1}'
is_error "off: a viewer's generate -> module_disabled (module before role)" 404 module_disabled
req "" GET $M/scenarios
is_error "off: no token is still 401 (auth first)" 401 unauthorized
if OLIVARES_TOKEN=$ED olivares sandbox scenarios list -o json >out 2>err; then
	not_ok "off: cli scenarios list fails"
else
	if [[ -s err ]]; then ok "off: cli scenarios list fails with a message"; else not_ok "off: cli scenarios list: message on stderr"; fi
fi

if OLIVARES_TOKEN=$AD olivares modules on sandbox >out 2>err; then ok "olivares modules on sandbox"; else not_ok "olivares modules on sandbox ($(cat err))"; fi
req "$AD" GET "$M/scenarios/$SID"
is "on: the same scenario" "$scen_before" "$(jq -S . "$BODY_FILE")"
req "$AD" GET "$M/runs/$RID"
is "on: the same run" "$run_before" "$(jq -S . "$BODY_FILE")"
req "$AD" GET "$M/runs/$RID/outputs"
is "on: the same outputs" "$outs_before" "$(jq -S . "$BODY_FILE")"
counts_after=$(state_counts "$AD")
# the two module switches are audited; nothing else was written while off
is "nothing written while off (scenarios, runs)" "${counts_before% audit=*}" "${counts_after% audit=*}"
is "audit: exactly the two switches were added meanwhile" "module.disable module.enable" "$(audit_since "$AD" "${counts_before##*/}")"

# PUT /v1/modules/sandbox is an admin act
req "$ED" PUT /v1/modules/sandbox '{"enabled":false}'
is_error "editor cannot switch the module" 403 forbidden
req "$AD" PUT /v1/modules/sandbox '{"enabled":true}'
is "admin switch answers the state" "sandbox true" "$(jqb '"\(.name) \(.enabled)"')"

# a new tenant starts with the module off
T2=$(unique modules)
tok=$(new_tenant_token "$T2" admin)
if [[ -n $tok ]]; then ok "olivares-admin: a second tenant and its admin token"; else not_ok "olivares-admin: a second tenant and its admin token"; fi
req "$tok" GET /v1/modules
is "new tenant: module off by default" false "$(jqb '.modules[]|select(.name=="sandbox")|.enabled')"
req "$tok" GET $M/scenarios
is_error "new tenant: sandbox routes module_disabled" 404 module_disabled
done_testing
