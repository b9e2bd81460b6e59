#!/usr/bin/env bash
# Malformed input is a 400 JSON error, never a 5xx, and writes nothing:
# broken JSON, wrong types, unknown fields, invalid UTF-8, NUL, unpaired
# surrogates, duplicate keys. Ids that are not ids are 404. Transport: a
# chunked request body reaches the app complete; a response larger than one
# FastCGI record (64 KiB) comes back whole.
. "$(dirname "$0")/lib.sh"
e2e_require
T=$(unique malformed)
TK=$(new_tenant_token "$T" admin)
if [[ -n $TK ]]; then ok "a tenant for the malformed-input tests"; else not_ok "a tenant for the malformed-input tests"; exit 1; fi
module_on "$TK" || exit 1
M=/v1/m/sandbox
G=$M/synthetic-data
S=$M/scenarios
F=$E2E_TMP/body

req "$TK" POST $S '{"name":"target","steps":[{"input":"agent:user1@example.test"}],"mocks":[{"resource":"agent:user1@example.test","response":"first synthetic account"}]}'
is_status "a scenario to aim at" 201
SID=$(jqb .id)
req "$TK" POST "$S/$SID/runs" '{}'
RID=$(jqb .id)
MARK=$(state_counts "$TK")

# bad DESC PATH METHOD: send $F, expect 400 with a JSON error
bad() {
	req_file "$TK" "$3" "$2" "$F"
	is_client_error "$1" 400
}
# body TEXT: $F holds TEXT (printf %b: \xNN escapes are raw bytes)
body() { printf '%b' "$1" >"$F"; }

for target in "$G POST" "$S POST" "$S/$SID PUT" "$S/$SID/runs POST" "/v1/modules/sandbox PUT"; do
	path=${target% *}
	method=${target##* }
	w="$method ${path/$SID/ID}"
	body '{'; bad "$w: truncated JSON -> 400" "$path" "$method"
	body 'nope'; bad "$w: not JSON -> 400" "$path" "$method"
	body '[]'; bad "$w: an array instead of an object -> 400" "$path" "$method"
	body '"str"'; bad "$w: a string instead of an object -> 400" "$path" "$method"
	body '{} x'; bad "$w: trailing garbage -> 400" "$path" "$method"
	body '{"bogus_field":1}'; bad "$w: unknown field -> 400" "$path" "$method"
	body '{"name":"\xff\xfe"}'; bad "$w: invalid UTF-8 bytes -> 400" "$path" "$method"
	body '{"name":"a\\u0000b"}'; bad "$w: \\u0000 in a string -> 400" "$path" "$method"
	body "$(printf '%.0s[' $(seq 5000))"; bad "$w: 5000 nested arrays -> 400" "$path" "$method"
done

# generate: wrong types, duplicates, encodings
body '{"count":"2"}'; bad "generate: count as a string -> 400" $G POST
body '{"count":2.5}'; bad "generate: count as a float -> 400" $G POST
body '{"count":true}'; bad "generate: count as a boolean -> 400" $G POST
body '{"count":null}'; bad "generate: count null -> 400" $G POST
body '{"seed":5}'; bad "generate: seed as a number -> 400" $G POST
body '{"subject_kind":["agent"]}'; bad "generate: subject as an array -> 400" $G POST
body '{"count":2,"count":3}'; bad "generate: duplicate key -> 400" $G POST
body '{"seed":"\xff"}'; bad "generate: invalid UTF-8 in the template -> 400" $G POST
body '{"seed":"\xc0\xaf"}'; bad "generate: overlong UTF-8 encoding -> 400" $G POST
body '{"seed":"\xed\xa0\x80"}'; bad "generate: UTF-8-encoded surrogate -> 400" $G POST
body '{"seed":"a\\u0000{{index}}"}'; bad "generate: \\u0000 in the template -> 400" $G POST
body '{"seed":"\\ud800"}'; bad "generate: unpaired high surrogate -> 400" $G POST
body '{"subject_kind":"\\udc00x"}'; bad "generate: unpaired low surrogate -> 400" $G POST
body '{"seed":"a\x00b"}'; bad "generate: raw NUL byte in the body -> 400" $G POST
body '{"seed":"a\nb"}'; bad "generate: raw control character in a string -> 400" $G POST

# scenarios: wrong shapes
body ''; bad "create: empty body -> 400" $S POST
body '{"name":"x","steps":"a"}'; bad "create: steps as a string -> 400" $S POST
body '{"name":5,"steps":[{"input":"a"}]}'; bad "create: name as a number -> 400" $S POST
body '{"name":"x","steps":[{"input":1}]}'; bad "create: step input as a number -> 400" $S POST
body '{"name":"x","steps":["a"]}'; bad "create: step as a string -> 400" $S POST
body '{"name":"x","steps":[{"input":"a","extra":1}]}'; bad "create: unknown field in a step -> 400" $S POST
body '{"name":"x","steps":[{"input":"a"}],"mocks":[{"resource":"a","response":"b","oops":1}]}'; bad "create: unknown field in a mock -> 400" $S POST
body '{"name":"x","steps":[{"input":"a"}],"mocks":{"resource":"a"}}'; bad "create: mocks as an object -> 400" $S POST
body '{"name":"x","name":"y","steps":[{"input":"a"}]}'; bad "create: duplicate key -> 400" $S POST
body '{"name":"x","steps":[{"input":"a","input":"b"}]}'; bad "create: duplicate key in a step -> 400" $S POST
body '{"name":"x","steps":[{"input":"\\ud83d"}]}'; bad "create: unpaired surrogate in a step -> 400" $S POST
body '{"variant":5}'; bad "run: variant as a number -> 400" "$S/$SID/runs" POST
body '{"variant":"a","runner":"other"}'; bad "run: unknown field -> 400" "$S/$SID/runs" POST
body '{"enabled":"yes"}'; bad "module switch: enabled as a string -> 400" /v1/modules/sandbox PUT
req "$TK" POST $S '{"name":"x"}'
is_one_of "create without steps: 400 or 422" "$STATUS" 400 422
req "$TK" POST $S '{"steps":[{"input":"a"}]}'
is_one_of "create without a name: 400 or 422" "$STATUS" 400 422
req "$TK" POST $S '{"name":"x","steps":[{"key":"a"}]}'
is_one_of "create with a step without input: 400 or 422" "$STATUS" 400 422
is "malformed requests wrote nothing (scenarios, runs, audit)" "$MARK" "$(state_counts "$TK")"
req "$TK" GET "$S/$SID"
is "the scenario aimed at is unchanged" "1 target" "$(jqb '"\(.version) \(.name)"')"

# ids that are not ids: 404 (or 400), never 5xx, never another record.
# The app routes on the path as sent (REQUEST_URI): %2e%2e is no id there
# (404); nginx refuses %00 itself (400). t0810 checks every id route.
long=$(repeat_char a 5000)
for id in nope 0 "$(repeat_char A 32)" "${SID^^}" "${SID:0:31}" "${SID}0" "${SID}%00" "%00" \
	"..%2f..%2fetc%2fpasswd" "%2e%2e" "$long" "'%20OR%201=1--" "$(repeat_char 0 32)" "$(repeat_char f 32)"; do
	for p in "$S/$id" "$M/runs/$id" "$M/runs/$id/outputs"; do
		req "$TK" GET "$p"
		is_one_of "GET ${p:0:60}: 404 or 400" "$STATUS" 404 400
		no_5xx "GET ${p:0:60}: no 5xx"
	done
	req "$TK" POST "$S/$id/runs" '{}'
	is_one_of "POST run on id ${id:0:40}: 404, 400 (or 405 for a dot segment)" "$STATUS" 404 400 405
	req "$TK" DELETE "$S/$id"
	is_one_of "DELETE id ${id:0:40}: 404 or 400" "$STATUS" 404 400
done
req "$TK" GET "$M/runs/$SID"
is_error "a scenario id is not a run id: 404" 404 not_found
is "a scenario id is not a run id: the message names the run" "run not found" "$(jqb .error.message)"
req "$TK" GET "$M/runs/NOT-AN-ID/outputs"
is "a malformed run id: 404, the message names the run" "404 run not found" "$STATUS $(jqb .error.message)"
req "$TK" GET "$S/zz"
is "a malformed scenario id: 404, the message names the scenario" "404 scenario not found" "$STATUS $(jqb .error.message)"
req "$TK" GET "$S/$RID"
is_error "a run id is not a scenario id: 404" 404 not_found
req "$TK" GET /v1/nope
is_client_error "unknown route: 404" 404
req "$TK" PATCH $S '{}'
is_one_of "PATCH on the collection: 405 (or 404)" "$STATUS" 405 404
req "$TK" GET "$S?limit=abc&offset=-5"
no_5xx "bad paging parameters: no 5xx"
is "nothing written by the bad ids" "$MARK" "$(state_counts "$TK")"

# a chunked request body reaches the app complete
jq -nc '{name:"chunked",steps:[range(1;301)|{key:"c\(.)",input:("chunk-\(.)-" + ("x" * 600))}]}' >"$F"
size=$(stat -c %s "$F")
req_file "$TK" POST $S "$F" -H 'Transfer-Encoding: chunked'
is_status "chunked body of $size bytes: 201" 201
is "chunked body: all 300 steps arrived, the last one whole" "300 chunk-300-$(repeat_char x 600)" "$(jqb '"\(.steps|length) \(.steps[299].input)"')"
CH=$(jqb .id)

# a response larger than one FastCGI record (64 KiB) comes back whole
big=$(repeat_char r 60000)
jq -nc --arg r "$big" '{name:"big-response",steps:[range(1;5)|{key:"b\(.)",input:"res-\(.)"}],mocks:[range(1;5)|{resource:"res-\(.)",response:("\(.):" + $r)}]}' >"$F"
req_file "$TK" POST $S "$F"
is_status "a scenario with 4 mocks of 60 KB: 201" 201
BID=$(jqb .id)
req "$TK" GET "$S/$BID"
n=$(stat -c %s "$BODY_FILE")
if ((n > 240000)); then ok "GET scenario: a $n-byte response"; else not_ok "GET scenario: a response above 240000 bytes (got $n)"; fi
is "GET scenario: every mock whole" "60002 60002 60002 60002" "$(jqb '[.mocks[].response|length]|map(tostring)|join(" ")')"
req "$TK" POST "$S/$BID/runs" '{}'
is "run with 60 KB outputs: completed, 4 ok" "completed 4" "$(jqb '"\(.status) \(.steps_ok)"')"
BR=$(jqb .id)
req "$TK" GET "$M/runs/$BR/outputs"
n=$(stat -c %s "$BODY_FILE")
if ((n > 240000)); then ok "GET outputs: a $n-byte response"; else not_ok "GET outputs: a response above 240000 bytes (got $n)"; fi
is "GET outputs: every output whole" "true" "$(jq --arg r "$big" '[.outputs[]|.output == ("\(.seq):" + $r)]|all' "$BODY_FILE" 2>/dev/null)"
req "$TK" GET "$S/$CH"
is "chunked scenario reads back whole" 300 "$(jqb '.steps|length')"
# query names and values are decoded as an HTML form's GET query is ('+' is
# a space, then %XX), so a client that escapes every byte gets what it asked
req "$TK" GET "$S?limit=%32"
is "limit=%32 is limit 2" "200 2" "$STATUS $(jqb '.scenarios|length')"
second=$(jqb '.scenarios[1].id')
req "$TK" GET "$S?%6Cimit=%31&offset=%31"
is "an escaped name: %6Cimit=%31&offset=%31 is the second scenario alone" "200 1 $second" \
	"$STATUS $(jqb '.scenarios|length') $(jqb '.scenarios[0].id')"
req "$TK" GET "$M/runs?scenario=$BID&status=comp%6Ceted"
is "runs?status=comp%6Ceted filters on completed" "200 $BR" "$STATUS $(jqb '[.runs[].id]|join(" ")')"
req "$TK" GET "$M/runs?scenario=$BID&status=completed+"
is_error "status=completed+ is \"completed \", not a status: 400" 400 malformed
MARK=$(state_counts "$TK")
req "$TK" GET "$S?limit=%00"
is_error "limit=%00: 400 malformed" 400 malformed
req "$TK" GET "$S?limit=1&x=%FF"
is_error "a parameter that is not UTF-8 (%FF): 400 malformed" 400 malformed
req "$TK" POST "$S/$BID/runs?x=%00" '{}'
is_error "POST with %00 in its query: 400, nothing run" 400 malformed
is "nothing written by the bad queries" "$MARK" "$(state_counts "$TK")"

# the CLI sends an id that is not an id as "-": a "/" or ".." in it, escaped
# or not, would be resolved by nginx into another route
cli_err() { OLIVARES_TOKEN=$TK olivares "$@" >"$E2E_TMP/cli-out" 2>"$E2E_TMP/cli-err" && echo 0 || echo $?; }
is "CLI runs get ../../../modules: exit 1, a 404, nothing printed as a run" "1 0" \
	"$(cli_err sandbox runs get ../../../modules) $(wc -c <"$E2E_TMP/cli-out")"
if grep -q "HTTP 404" "$E2E_TMP/cli-err"; then ok "CLI runs get ../../../modules: the server's 404"; else not_ok "CLI runs get ../../../modules: the server's 404 (got $(short "$(cat "$E2E_TMP/cli-err")"))"; fi
is "CLI scenarios get zzz/../ID: exit 1, not the scenario ID" "1 0" \
	"$(cli_err sandbox scenarios get "zzz/../$SID") $(wc -c <"$E2E_TMP/cli-out")"
is "CLI modules off ../modules/sandbox: refused before a request (exit 2), the module stays on" "2 true" \
	"$(cli_err modules off ../modules/sandbox) $(req "$TK" GET /v1/modules >/dev/null; jqb '.modules[]|select(.name=="sandbox")|.enabled')"
done_testing
