#!/usr/bin/env bash
# Idempotency-Key on the creates (docs/api.md "Idempotency-Key"), through
# nginx with curl, on every create route: scenarios, runs, sessions,
# replays, comparisons. For each: a retry with the same key and body gets
# the first answer back (same status, same body, "Idempotent-Replayed:
# true") and the tenant's counts (records and audit events) do not grow;
# the same key with another body is a 422; a second tenant's same key
# creates its own record. A malformed key is a 400 that writes nothing; a
# create without the header is unchanged. The CLI sends a key of its own.
. "$(dirname "$0")/lib.sh"
e2e_require
cd "$E2E_TMP" || exit 1

AD=$OLV_ADMIN_TOKEN
M=/v1/m/sandbox
HDRS=$E2E_TMP/headers

# ireq TOKEN PATH KEY BODY: POST BODY with "Idempotency-Key: KEY"; sets
# STATUS, BODY and the reply's headers in $HDRS
ireq() {
	local -a args=(-s -S -o "$BODY_FILE" -D "$HDRS" -w '%{http_code}' -X POST --max-time 60
		-H "Authorization: Bearer $1" -H "Idempotency-Key: $3"
		-H 'Content-Type: application/json' --data-binary @-)
	STATUS=$(printf '%s' "$4" | curl "${args[@]}" "$OLIVARES_URL$2" 2>"$E2E_TMP/curl-err") ||
		STATUS=${STATUS:-000}
	read_body
}
replayed() { grep -ci '^idempotent-replayed: true' "$HDRS"; }

# counts TOKEN: scenarios, runs, sessions, comparisons and audit events
counts() {
	printf 'scenarios=%s runs=%s sessions=%s comparisons=%s %s' \
		"$(count_all "$1" $M/scenarios scenarios)" "$(count_all "$1" $M/runs runs)" \
		"$(count_all "$1" $M/sessions sessions)" \
		"$(count_all "$1" $M/comparisons comparisons)" "$(state_counts "$1" | sed 's/.* audit=/audit=/')"
}

# settled KIND ID: wait until the run (KIND runs) has ended or the
# comparison (comparisons) has its verdict, so that what its executor
# records (a comparison's verdict event) comes before the counts are taken
settled() {
	local i
	for ((i = 0; i < 300; i++)); do
		req "$AD" GET "$M/$1/$2"
		case $1:$(jqb .status) in
		runs:queued | runs:running | comparisons:pending) sleep 0.1 ;;
		*) return 0 ;;
		esac
	done
	not_ok "$1 $2 ended within 30 s"
}

# check_route NAME PATH BODY OTHER-BODY [STATUS]: the four checks of one
# create route for the admin token of tenant demo; the first answer's id in
# FIRST_ID. STATUS: the create's status, 201, or 202 for the routes that
# queue runs (their retry answers the first answer, the queued record)
check_route() {
	local name=$1 path=$2 body=$3 other=$4 want=${5:-201} key first before kind
	key=$(unique "t0470-$name")
	ireq "$AD" "$path" "$key" "$body"
	is_status "$name: first POST with a key creates ($want)" "$want"
	first=$(jq -cS . "$BODY_FILE" 2>/dev/null)
	FIRST_ID=$(jqb '.id // empty')
	isnt "$name: the answer has an id" "" "$FIRST_ID"
	is "$name: the first answer is not marked replayed" 0 "$(replayed)"
	if [[ $want == 202 ]]; then
		kind=runs
		[[ $name == comparisons ]] && kind=comparisons
		settled "$kind" "$FIRST_ID"
	fi
	before=$(counts "$AD")
	ireq "$AD" "$path" "$key" "$body"
	is_status "$name: the retry answers the first status" "$want"
	is "$name: the retry answers the first body (same id)" "$first" "$(jq -cS . "$BODY_FILE" 2>/dev/null)"
	is "$name: the retry is marked Idempotent-Replayed" 1 "$(replayed)"
	is "$name: the retry wrote nothing (counts and audit unchanged)" "$before" "$(counts "$AD")"
	ireq "$AD" "$path" "$key" "$other"
	is_error "$name: the same key with another body is a 422" 422 idempotency_key_reused
	is "$name: the 422 names the header" Idempotency-Key "$(jqb '.error.field // empty')"
	is "$name: the 422 wrote nothing" "$before" "$(counts "$AD")"
	# another tenant's same key is another key
	local obody=${body//$SID/$OSID}
	ireq "$OTHER" "${path//$SID/$OSID}" "$key" "${obody//$SESSION_ID/$OSESSION}"
	is_status "$name: another tenant's same key creates ($want)" "$want"
	isnt "$name: another tenant's record is its own" "$FIRST_ID" "$(jqb '.id // empty')"
	is "$name: another tenant's create is not a replay" 0 "$(replayed)"
}

OTHER_TENANT=$(unique t0470-other)
OTHER=$(new_tenant_token "$OTHER_TENANT" admin)
if [[ -z $OTHER ]]; then
	not_ok "olivares-admin made a token for a second tenant"
	done_testing
fi
module_on "$AD" || done_testing
module_on "$OTHER" || done_testing
SID=none OSID=none SESSION_ID=none OSESSION=none

SC='{"name":"t0470","steps":[{"key":"a","input":"bot:hi"}],"mocks":[{"resource":"bot:hi","response":"hello"}]}'
SC2='{"name":"t0470-other","steps":[{"key":"a","input":"bot:hi"}],"mocks":[{"resource":"bot:hi","response":"hello"}]}'
check_route scenarios $M/scenarios "$SC" "$SC2"
SID=$FIRST_ID
req "$OTHER" POST $M/scenarios "$SC"
OSID=$(jqb '.id // empty')

# the same object with its members in another order and other spacing is
# the same request (its canonical JSON is compared)
KEY=$(unique t0470-order)
ireq "$AD" $M/scenarios "$KEY" "$SC"
FIRST=$(jqb .id)
ireq "$AD" $M/scenarios "$KEY" "$(jq -c '{mocks, steps, name}' <<<"$SC" | sed 's/,/, /g')"
is "scenarios: a retry with reordered members is the same request" "201 $FIRST 1" \
	"$STATUS $(jqb .id) $(replayed)"

check_route runs "$M/scenarios/$SID/runs" '{"variant":"a"}' '{"variant":"b"}' 202
RID=$FIRST_ID
req "$AD" GET "$M/runs?scenario=$SID&limit=500"
is "runs: the retried run was not run again (one run of the scenario)" 1 "$(jqb '.runs | length')"
# the same key on another scenario's path is another request
req "$AD" POST $M/scenarios "$SC"
SID2=$(jqb .id)
KEY=$(unique t0470-path)
ireq "$AD" "$M/scenarios/$SID/runs" "$KEY" '{}'
ireq "$AD" "$M/scenarios/$SID2/runs" "$KEY" '{}'
is_error "runs: the same key on another path is a 422" 422 idempotency_key_reused

# the same key sent four times at once: whichever commits first keeps the
# key, the others answer its answer; one run is recorded
KEY=$(unique t0470-race)
req "$AD" GET "$M/runs?scenario=$SID2&limit=500"
n0=$(jqb '.runs | length')
for i in 1 2 3 4; do
	curl -s -o "$E2E_TMP/race-$i" -w '%{http_code}\n' -X POST --max-time 120 \
		-H "Authorization: Bearer $AD" -H "Idempotency-Key: $KEY" \
		-H 'Content-Type: application/json' --data-binary '{"variant":"race"}' \
		"$OLIVARES_URL$M/scenarios/$SID2/runs" >"$E2E_TMP/race-$i.status" &
done
wait
is "runs, four at once with one key: four 202s" "202 202 202 202" \
	"$(cat "$E2E_TMP"/race-{1,2,3,4}.status | tr '\n' ' ' | sed 's/ $//')"
is "runs, four at once with one key: one id" 1 \
	"$(jq -r .id "$E2E_TMP"/race-{1,2,3,4} 2>/dev/null | sort -u | wc -l)"
req "$AD" GET "$M/runs?scenario=$SID2&limit=500"
is "runs, four at once with one key: one run recorded" "$((n0 + 1))" "$(jqb '.runs | length')"

SESS='{"external_id":"t0470-chat","events":[{"seq":1,"kind":"input","text":"bot:hi"},{"seq":2,"kind":"output","text":"hello"}]}'
SESS2='{"external_id":"t0470-chat-2","events":[{"seq":1,"kind":"input","text":"bot:hi"}]}'
check_route sessions $M/sessions "$SESS" "$SESS2"
SESSION_ID=$FIRST_ID
req "$OTHER" POST $M/sessions "$SESS"
OSESSION=$(jqb '.id // empty')

check_route replays $M/replays "{\"session_id\":\"$SESSION_ID\"}" \
	"{\"session_id\":\"$SESSION_ID\",\"variant\":\"b\"}" 202

check_route comparisons $M/comparisons \
	"{\"scenario_id\":\"$SID\",\"baseline\":\"a\",\"candidate\":\"b\",\"suite\":\"t0470-none\"}" \
	"{\"scenario_id\":\"$SID\",\"baseline\":\"a\",\"candidate\":\"c\",\"suite\":\"t0470-none\"}" 202

# ---- malformed keys: 400, nothing written ---------------------------------
before=$(counts "$AD")
for bad in "has space" 'semi;colon' "$(printf 'k%.0s' $(seq 1 256))" '""' $'caf\xc3\xa9'; do
	ireq "$AD" $M/scenarios "$bad" "$SC"
	is_error "a malformed key ($(short "$bad")) is a 400" 400 malformed
done
ireq "$AD" $M/scenarios "$(printf 'k%.0s' $(seq 1 255))" "$SC"
is_status "a key of 255 characters is accepted" 201
ireq "$AD" $M/scenarios '"quoted-key-1"' "$SC"
is_status "a key in double quotes (structured-field string) is accepted" 201
QUOTED=$(jqb .id)
ireq "$AD" $M/scenarios 'quoted-key-1' "$SC"
is "the quoted key and the bare key are the same key" "201 $QUOTED 1" "$STATUS $(jqb .id) $(replayed)"
is "400s wrote nothing (two scenarios from the valid keys)" \
	"$(count_all "$AD" $M/scenarios scenarios)" \
	"$(($(sed 's/scenarios=\([0-9]*\).*/\1/' <<<"$before") + 2))"

# ---- without the header nothing changes: two POSTs, two records -----------
req "$AD" POST $M/scenarios "$SC"
A=$(jqb .id)
req "$AD" POST $M/scenarios "$SC"
isnt "without a key, the same POST twice creates two scenarios" "$A" "$(jqb .id)"

# ---- the CLI sends a key of its own (one per command) ---------------------
printf '%s' '[{"key":"a","input":"bot:hi"}]' >"$E2E_TMP/steps.json"
cli_create() {
	OLIVARES_TOKEN=$AD olivares sandbox scenarios create --name t0470-cli \
		--steps-file "$E2E_TMP/steps.json" -o json "$@" 2>"$E2E_TMP/cli-err"
}
n0=$(count_all "$AD" $M/scenarios scenarios)
cli_create >"$E2E_TMP/c1"
cli_create >"$E2E_TMP/c2"
isnt "two CLI commands, two keys: two scenarios" "$(jq -r .id "$E2E_TMP/c1" 2>/dev/null)" \
	"$(jq -r .id "$E2E_TMP/c2" 2>/dev/null)"
is "two CLI commands: two scenarios more" "$((n0 + 2))" "$(count_all "$AD" $M/scenarios scenarios)"
KEY=$(unique t0470-cli)
cli_create --idempotency-key "$KEY" >"$E2E_TMP/c3"
cli_create --idempotency-key "$KEY" >"$E2E_TMP/c4"
isnt "--idempotency-key: the first command created a scenario" "" "$(jq -r '.id // empty' "$E2E_TMP/c3" 2>/dev/null)"
is "--idempotency-key twice: the same scenario" "$(jq -r .id "$E2E_TMP/c3" 2>/dev/null)" \
	"$(jq -r .id "$E2E_TMP/c4" 2>/dev/null)"
is "--idempotency-key twice: one scenario more" "$((n0 + 3))" "$(count_all "$AD" $M/scenarios scenarios)"
cli_create --idempotency-key 'bad key' >/dev/null
is "--idempotency-key with a space is a usage error (exit 2)" 2 "$?"

done_testing
