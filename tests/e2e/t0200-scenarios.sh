#!/usr/bin/env bash
# Scenarios catalogue: create/list/get/update/delete through the API and the
# CLI, mocks with and without variant, ambiguous mocks refused, credential-
# looking content refused naming the field.
. "$(dirname "$0")/lib.sh"
e2e_require
module_on "$OLV_ADMIN_TOKEN" || exit 1
ED=$OLV_EDITOR_TOKEN
S=/v1/m/sandbox/scenarios

req "$ED" POST $S '{"name":"t0200","description":"a scenario","subject_kind":"bot","steps":[{"key":"hello","input":"bot:hi"},{"input":"bot:bye"}],"mocks":[{"resource":"bot:hi","response":"hello there"},{"resource":"bot:hi","response":"hi (v2)","variant":"v2"}]}'
is_status "create: 201" 201
created=$BODY
SID=$(jqb .id)
if [[ $SID =~ ^[0-9a-f]{32}$ ]]; then ok "create: id is 32 lowercase hex"; else not_ok "create: id is 32 lowercase hex (got $(short "$SID"))"; fi
is "create: name, description, subject" "t0200|a scenario|bot" "$(jqb '"\(.name)|\(.description)|\(.subject_kind)"')"
is "create: version 1" 1 "$(jqb .version)"
is "create: steps kept in order" "hello:bot:hi|bot:bye" "$(jqb '"\(.steps[0].key):\(.steps[0].input)|\(.steps[1].input)"')"
key2=$(jqb '.steps[1].key')
if [[ -n $key2 && $key2 != null && $key2 != hello ]]; then ok "create: a step without key gets one ($key2)"; else not_ok "create: a step without key gets a distinct key (got $(short "$key2"))"; fi
is "create: mock without variant has no variant field" false "$(jqb '.mocks[0]|has("variant")')"
is "create: mock with variant keeps it" v2 "$(jqb '.mocks[1].variant')"
if [[ $(jqb .digest) =~ ^[0-9a-f]{64}$ ]]; then ok "create: digest is a SHA-256"; else not_ok "create: digest is a SHA-256 (got $(jqb .digest))"; fi
if [[ $(jqb .created_at) =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z$ ]]; then ok "create: created_at ISO 8601 UTC"; else not_ok "create: created_at ISO 8601 UTC (got $(jqb .created_at))"; fi

req "$OLV_VIEWER_TOKEN" GET "$S/$SID"
is_status "get: 200 for a viewer" 200
is "get: the created scenario" "$(jq -S . <<<"$created")" "$(jq -S . "$BODY_FILE")"

req "$OLV_VIEWER_TOKEN" GET "$S?limit=100"
is_status "list: 200" 200
is "list: summary of the scenario" "t0200 2 2 1" "$(jq -r --arg id "$SID" '.scenarios[]|select(.id==$id)|"\(.name) \(.steps_count) \(.mocks_count) \(.version)"' "$BODY_FILE" 2>/dev/null)"

req "$ED" PUT "$S/$SID" '{"description":"changed"}'
is_status "update: 200" 200
is "update: version 2, description changed, name kept" "2|changed|t0200" "$(jqb '"\(.version)|\(.description)|\(.name)"')"

req "$ED" PUT "$S/$SID" '{"steps":[{"key":"only","input":"bot:hi"}]}'
is "update steps: version 3, one step" "3 1" "$(jqb '"\(.version) \(.steps|length)"')"
isnt "update steps: the digest changes" "$(jq -r .digest <<<"$created")" "$(jqb .digest)"

# a run records exactly what it ran
req "$ED" POST "$S/$SID/runs" '{"variant":"v2"}'
is_status "run on the updated scenario: 201" 201
is "run records scenario version 3 and its digest" "3 true" "$(jqb '"\(.scenario_version) \(.scenario_digest|test("^[0-9a-f]{64}$"))"')"
RID=$(jqb .id)
req "$ED" GET "/v1/m/sandbox/runs/$RID/outputs"
is "run with variant v2 resolves the v2 mock" "hi (v2)" "$(jqb '.outputs[0].output')"
req "$ED" POST "$S/$SID/runs" '{}'
RID0=$(jqb .id)
req "$ED" GET "/v1/m/sandbox/runs/$RID0/outputs"
is "run without variant resolves the mock without variant" "hello there" "$(jqb '.outputs[0].output')"

# a mock's delay_ms: stored with the scenario (left out at 0, its default),
# waited by the runner before it answers, inside the step's duration
req "$ED" POST $S '{"name":"t0200-delay","steps":[{"key":"slow","input":"tool:slow"},{"key":"quick","input":"tool:quick"}],"mocks":[{"resource":"tool:slow","response":"slow answer","delay_ms":300},{"resource":"tool:quick","response":"quick answer","delay_ms":0}]}'
is_status "create with delay_ms: 201" 201
DSID=$(jqb .id)
is "create with delay_ms: kept above 0, left out at 0" "300 false" "$(jqb '"\(.mocks[0].delay_ms) \(.mocks[1]|has("delay_ms"))"')"
req "$OLV_VIEWER_TOKEN" GET "$S/$DSID"
is "get: the stored delay_ms" 300 "$(jqb '.mocks[0].delay_ms')"
req "$ED" POST "$S/$DSID/runs" '{}'
is_status "run with a delayed mock: 201" 201
is "run with a delayed mock: completed, 2 ok" "completed 2" "$(jqb '"\(.status) \(.steps_ok)"')"
req "$ED" GET "/v1/m/sandbox/runs/$(jqb .id)/outputs"
is "run with a delayed mock: the slow step's answer" "slow answer" "$(jqb '.outputs[0].output')"
# a lower bound only: the machine may be loaded
is "run with a delayed mock: the slow step lasts at least its 300 ms delay ($(jqb '.outputs[0].duration_ms') ms)" \
	true "$(jqb '.outputs[0].duration_ms >= 300')"
for bad in -1 60001 1.5 '"300"' null; do
	req "$ED" POST $S "{\"name\":\"bad-delay\",\"steps\":[{\"input\":\"a\"}],\"mocks\":[{\"resource\":\"a\",\"response\":\"A\"},{\"resource\":\"b\",\"response\":\"B\",\"delay_ms\":$bad}]}"
	if [[ $bad == 60001 ]]; then
		is_error "delay_ms $bad: 422 over its limit" 422 limit_exceeded
	else
		is_error "delay_ms $bad: 400 malformed" 400 malformed
	fi
	if [[ $(jqb .error.message) == *"mocks[1].delay_ms"* ]]; then ok "delay_ms $bad: the message names mocks[1].delay_ms"; else not_ok "delay_ms $bad: the message names mocks[1].delay_ms (got $(short "$BODY"))"; fi
done
# two mocks for the same resource and variant: ambiguous, refused
req "$ED" POST $S '{"name":"dup","steps":[{"input":"a"}],"mocks":[{"resource":"a","response":"1"},{"resource":"a","response":"2"}]}'
is_client_error "same resource twice, no variant: 422" 422
req "$ED" POST $S '{"name":"dup","steps":[{"input":"a"}],"mocks":[{"resource":"a","response":"1","variant":"x"},{"resource":"a","response":"2","variant":"x"}]}'
is_client_error "same resource and variant twice: 422" 422

# credential-looking content is refused, naming the field
req "$ED" POST $S '{"name":"secret","steps":[{"input":"-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----"}]}'
is_client_error "private key block in a step: 422" 422
if [[ $(jqb '(.error.field // "") + " " + .error.message') == *steps* ]]; then ok "private key block: the error names the field"; else not_ok "private key block: the error names the field (got $(short "$BODY"))"; fi
req "$ED" POST $S '{"name":"secret","steps":[{"input":"a"}],"mocks":[{"resource":"a","response":"AKIAIOSFODNN7EXAMPLE"}]}'
is_client_error "cloud access key id in a mock response: 422" 422
if [[ $(jqb '(.error.field // "") + " " + .error.message') == *mocks* ]]; then ok "cloud key: the error names the field"; else not_ok "cloud key: the error names the field (got $(short "$BODY"))"; fi
fake=olv_$(repeat_char a 64)
req "$ED" POST $S "{\"name\":\"secret\",\"description\":\"Bearer $fake\",\"steps\":[{\"input\":\"a\"}]}"
is_client_error "a token of this service in the description: 422" 422

# the CLI
cd "$E2E_TMP" || exit 1
export OLIVARES_TOKEN=$ED
printf '%s\n' '[{"key":"a","input":"x"},{"key":"b","input":"y"}]' >steps.json
printf '%s\n' '[{"resource":"x","response":"X"}]' >mocks.json
if out=$(olivares sandbox scenarios create --name cli-made --steps-file steps.json --mocks-file mocks.json -o json 2>err); then
	CID=$(jq -r .id <<<"$out")
	is "cli create: steps and mocks" "x y|X" "$(jq -r '"\([.steps[].input]|join(" "))|\(.mocks[0].response)"' <<<"$out")"
else
	CID=
	not_ok "cli create exited non-zero: $(cat err)"
fi
# the mocks table shows each mock's delay (0 when it has none)
out=$(olivares sandbox scenarios get "$DSID" 2>err)
is "cli get: the mocks table's header" "RESOURCE    VARIANT  DELAY_MS  RESPONSE" "$(grep '^RESOURCE' <<<"$out")"
is "cli get: the delayed mock's row shows 300, the other 0" "300 0" "$(awk '$1 ~ /^tool:/ {printf "%s%s", sep, $3; sep=" "}' <<<"$out")"
out=$(olivares sandbox scenarios list -o json 2>err)
is "cli list holds it" "cli-made" "$(jq -r --arg id "$CID" '(if type=="array" then . else .scenarios end)[]|select(.id==$id)|.name' <<<"$out" 2>/dev/null)"
out=$(olivares sandbox scenarios get "$CID" -o json 2>err)
is "cli get" "cli-made 2" "$(jq -r '"\(.name) \(.steps|length)"' <<<"$out" 2>/dev/null)"
out=$(olivares sandbox scenarios list -o table 2>err)
if [[ $out == *"$CID"* || $out == *cli-made* ]]; then ok "cli list -o table shows it"; else not_ok "cli list -o table shows it (got $(short "$out"))"; fi
# cli update: only what is given changes; the version goes up by one
before=$(olivares sandbox scenarios get "$CID" -o json 2>err)
out=$(olivares sandbox scenarios update "$CID" --name cli-renamed -o json 2>err)
is "cli update --name: renamed, version 2, same steps, mocks and digest" \
	"cli-renamed 2 $(jq -c '[.steps, .mocks, .digest]' <<<"$before")" \
	"$(jq -r '"\(.name) \(.version)"' <<<"$out" 2>/dev/null) $(jq -c '[.steps, .mocks, .digest]' <<<"$out" 2>/dev/null)"
printf '%s\n' '[{"resource":"x","response":"X2"}]' >mocks2.json
out=$(olivares sandbox scenarios update "$CID" --mocks-file mocks2.json -o json 2>err)
is "cli update --mocks-file: mocks replaced, version 3, name kept" "X2 3 cli-renamed" \
	"$(jq -r '"\(.mocks[0].response) \(.version) \(.name)"' <<<"$out" 2>/dev/null)"
isnt "cli update --mocks-file: the digest changes" "$(jq -r .digest <<<"$before")" "$(jq -r .digest <<<"$out" 2>/dev/null)"
rc=0
olivares sandbox scenarios update "$CID" >out 2>err || rc=$?
is "cli update with nothing to change: exit 2, says so, version unchanged" "2 yes 3" \
	"$rc $(grep -q 'nothing to change' err && echo yes) $(olivares sandbox scenarios get "$CID" -o json 2>/dev/null | jq -r .version)"
# a name that would reorder the line (U+202E) or hide (U+200B) in a terminal
req "$ED" POST "$S" '{"name":"rtl-\u202eevil\u200b","steps":[{"key":"k","input":"x"}]}'
is_status "a scenario named with a bidi override" 201
BIDI_SID=$(jqb .id)
out=$(olivares sandbox scenarios list -o table 2>err)
is "cli table: the bidi override and the zero-width space written out, not sent raw" 'rtl-\u202Eevil\u200B|0' \
	"$(grep -o 'rtl-[^ ]*' <<<"$out" | head -n 1)|$(grep -c $'\u202e' <<<"$out")"
req "$ED" DELETE "$S/$BIDI_SID"
if olivares sandbox scenarios delete "$CID" >out 2>err; then ok "cli delete: exit 0"; else not_ok "cli delete: exit 0 ($(cat err))"; fi
if olivares sandbox scenarios get "$CID" -o json >out 2>err; then
	not_ok "cli get after delete fails"
else
	if [[ -s err ]]; then ok "cli get after delete: exit non-zero with a message"; else not_ok "cli get after delete: a message on stderr"; fi
fi
req "$ED" GET "$S/$CID"
is_error "get after delete: 404 not_found" 404 not_found
req "$ED" DELETE "$S/$CID"
is_error "delete twice: 404 not_found" 404 not_found
if olivares sandbox scenarios create --name nofile --steps-file does-not-exist.json >out 2>err; then
	not_ok "cli create with a missing steps file fails"
else
	if [[ -s err ]]; then ok "cli create with a missing steps file: exit non-zero with a message"; else not_ok "cli create with a missing steps file: message on stderr"; fi
fi

# the API delete
req "$ED" DELETE "$S/$SID"
is_status "delete: 200" 200
is "delete: body" "$SID true" "$(jqb '"\(.id) \(.deleted)"')"
req "$ED" GET "$S/$SID"
is_error "get after API delete: 404" 404 not_found
done_testing
