#!/usr/bin/env bash
# Suites in the store: POST/GET/PUT /v1/m/sandbox/suites and `olivares
# sandbox suites create|get|list|update`, on a stack with NO scorer
# configured ([scorer] adapter = none, a SQLite store of its own):
# a suite created through the CLI scores the page's walkthrough (0.75,
# passed, tests/fixtures/suites/walkthrough.json) and the run records
# suite and suite_version; an update makes version 2 while name@1 stays
# readable and still scores a run pinned to it; another tenant gets 404;
# a viewer cannot create (403); a malformed suite is refused (400) and
# nothing is written; a run naming a suite the store does not have is
# refused (422) and nothing is queued; a comparison scored by the store
# suite gives improved / regressed, not inconclusive.
# On PostgreSQL (OLIVARES_DSN set) the same runs on the stack under test,
# whose builtin adapter is configured: the store's suites come first, and
# the refusals that need "no adapter" are left out.
. "$(dirname "$0")/lib.sh"
# shellcheck source=../../scripts/lib/common.sh
. "$OLV_ROOT/scripts/lib/common.sh"
e2e_require
cd "$E2E_TMP" || exit 1

STACK=$OLV_ROOT/scripts/stack
FIX=$OLV_ROOT/tests/fixtures
DIR=$E2E_TMP/stack-nosc
mkdir -p "$DIR/data"
printf '[scorer]\nadapter = none\n' >"$DIR/olivares.conf"
cleanup() {
	env -u OLIVARES_DSN OLIVARES_DATA="$DIR/data" "$STACK" down >/dev/null 2>&1 || true
	rm -rf "$E2E_TMP"
}

# xadmin ARGS...: olivares-admin on the stack without a scorer
xadmin() {
	env -u OLIVARES_DSN OLIVARES_DATA="$DIR/data" OLIVARES_CONF="$DIR/olivares.conf" olivares-admin "$@"
}

shared=0
if [[ -n ${OLIVARES_DSN:-} ]]; then shared=1; fi
# on PostgreSQL: the stack under test and its olivares-admin
if ((shared)); then
	cleanup() { rm -rf "$E2E_TMP"; }
	xadmin() { admin_cli "$@"; }
fi
trap cleanup EXIT

# show CMD...: print the command and its output as comments; OUT, ERR, RC
show() {
	echo "# \$ $*"
	RC=0
	OUT=$("$@" 2>"$E2E_TMP/stderr") || RC=$?
	ERR=$(cat "$E2E_TMP/stderr")
	printf '%s\n' "$OUT" | head -n 30 | sed 's/^/#   /'
	if [[ -n $ERR ]]; then printf '%s\n' "$ERR" | sed 's/^/#   stderr: /'; fi
}

started=$shared
for _ in 1 2 3; do
	((!started)) || break
	port=$(olv_free_port)
	if env -u OLIVARES_DSN OLIVARES_DATA="$DIR/data" OLIVARES_PORT="$port" \
		OLIVARES_CONF="$DIR/olivares.conf" "$STACK" up >"$DIR/up.out" 2>&1; then
		started=1
		break
	fi
	env -u OLIVARES_DSN OLIVARES_DATA="$DIR/data" "$STACK" down >/dev/null 2>&1 || true
done
if ((!started)); then
	not_ok "stack without a scorer started ($(short "$(tail -n 5 "$DIR/up.out")"))"
	done_testing
fi
((shared)) || export OLIVARES_URL=http://127.0.0.1:$port
T1=$(unique suites-a)
T2=$(unique suites-b)
xadmin tenant create "$T1" >/dev/null 2>&1
xadmin tenant create "$T2" >/dev/null 2>&1
AD=$(xadmin token create --tenant "$T1" --role admin)
ED=$(xadmin token create --tenant "$T1" --role editor)
VW=$(xadmin token create --tenant "$T1" --role viewer)
OT=$(xadmin token create --tenant "$T2" --role admin)
isnt "tokens of two tenants made" "" "$AD$ED$VW$OT"
module_on "$AD" || exit 1
module_on "$OT" || exit 1
export OLIVARES_TOKEN=$ED

runs_count() { req "$AD" GET "/v1/m/sandbox/runs?limit=500"; jqb '.runs|length'; }
audit_count() { req "$AD" GET "/v1/m/sandbox/audit?limit=500"; jqb '[.events[]?|select(.action|startswith("sandbox.suite"))]|length'; }

# ---- create through the CLI, score with no configuration ------------------------
show olivares sandbox suites create "$FIX/suites/walkthrough.json"
is "suites create walkthrough.json: exit 0" 0 "$RC"
is "suites create prints version 1, threshold 0.5, 2 expectations" "1 0.5 2" \
	"$(printf '%s\n' "$OUT" | awk '$1 == "version" || $1 == "threshold" || $1 == "expectations" { printf "%s%s", sep, $2; sep = " " }')"
show olivares -o json sandbox suites get walkthrough
is "suites get: the stored document is the file's" "$(jq -cS . "$FIX/suites/walkthrough.json")" "$(printf '%s' "$OUT" | jq -cS .document)"
is "suites get: name, version 1" "walkthrough 1" "$(printf '%s' "$OUT" | jq -r '"\(.name) \(.version)"')"

STEPS='[{"key":"step-1","input":"agent:user1@example.test"},{"key":"step-2","input":"agent:user2@example.test"}]'
MOCKS='[{"resource":"agent:user1@example.test","response":"first synthetic account"},{"resource":"agent:user2@example.test","response":"second","variant":"v2"}]'
req "$ED" POST /v1/m/sandbox/scenarios "{\"name\":\"walk\",\"steps\":$STEPS,\"mocks\":$MOCKS}"
is_status "walkthrough scenario created" 201
SID=$(jqb .id)

req "$ED" POST "/v1/m/sandbox/scenarios/$SID/runs" '{"variant":"candidate","suite":"walkthrough"}'
is_status "run with suite walkthrough: 201" 201
RID1=$(jqb .id)
is "scored by the store suite (no adapter on SQLite): completed, 0.75, passed" \
	"completed scored=true score=0.75 passed=true" "$(jqb '"\(.status) scored=\(.scored) score=\(.score) passed=\(.passed)"')"
is "the run records suite and suite_version" "walkthrough 1" "$(jqb '"\(.suite) \(.suite_version)"')"
is "score_details: step-2's mock miss is the one failure" "step-2" "$(jqb '[.score_details[]|select(.passed==false)|.key]|join(",")')"
show olivares sandbox runs get "$RID1"
is "runs get shows suite and suite_version" "walkthrough 1" \
	"$(printf '%s\n' "$OUT" | awk '$1 == "suite" || $1 == "suite_version" { printf "%s%s", sep, $2; sep = " " }')"

curl -s -H "Authorization: Bearer $ED" -o run.html "$OLIVARES_URL/admin/runs/$RID1"
dd() { xmllint --html --xpath "string(//dl[@id=\"run-summary\"]//dd[@id=\"$1\"])" run.html 2>/dev/null | xargs; }
is "admin run page: suite, suite version, score" "walkthrough 1 0.7500 passed" \
	"$(dd run-suite) $(dd run-suite-version) $(dd run-score)"

# ---- update: version 2, @1 still readable and still scores --------------------
jq '.threshold = 1.0 | del(.name)' "$FIX/suites/walkthrough.json" >strict.json
show olivares sandbox suites update walkthrough strict.json
is "suites update: exit 0" 0 "$RC"
req "$VW" GET /v1/m/sandbox/suites/walkthrough
is "GET walkthrough (viewer): version 2, threshold 1, name filled from the path" "200 2 1 walkthrough" \
	"$STATUS $(jqb '"\(.version) \(.document.threshold) \(.document.name)"')"
req "$VW" GET /v1/m/sandbox/suites/walkthrough@1
is "GET walkthrough@1: version 1, threshold 0.5" "200 1 0.5" "$STATUS $(jqb '"\(.version) \(.document.threshold)"')"
show olivares -o json sandbox suites get walkthrough@1
is "suites get walkthrough@1: version 1" 1 "$(printf '%s' "$OUT" | jq -r .version)"
req "$VW" GET /v1/m/sandbox/suites/walkthrough@3
is_error "GET walkthrough@3: 404" 404 not_found
req "$VW" GET /v1/m/sandbox/suites
is "list: one suite, its latest version" '[{"name":"walkthrough","version":2}]' "$(jqb '[.suites[]|{name,version}]|tojson')"
show olivares sandbox suites list
is "suites list: one row, walkthrough at version 2" "walkthrough 2" "$(printf '%s\n' "$OUT" | awk 'NR > 1 { print $1, $2 }')"

req "$ED" POST "/v1/m/sandbox/scenarios/$SID/runs" '{"variant":"candidate","suite":"walkthrough"}'
is "run on the latest (v2, threshold 1): 0.75, not passed, suite_version 2" \
	"0.75 false walkthrough 2" "$(jqb '"\(.score) \(.passed) \(.suite) \(.suite_version)"')"
req "$ED" POST "/v1/m/sandbox/scenarios/$SID/runs" '{"variant":"candidate","suite":"walkthrough@1"}'
is "run pinned to walkthrough@1: 0.75, passed, suite_version 1" \
	"0.75 true walkthrough 1" "$(jqb '"\(.score) \(.passed) \(.suite) \(.suite_version)"')"
req "$AD" GET "/v1/m/sandbox/runs/$RID1"
is "the first run still reads suite_version 1" "1 0.75" "$(jqb '"\(.suite_version) \(.score)"')"

# ---- a replay pins its suite too ---------------------------------------------------
show olivares sandbox sessions import --file "$FIX/sessions/replayable.json"
RS=$(cut -d' ' -f1 <<<"$OUT")
req "$ED" POST /v1/m/sandbox/replays "{\"session_id\":\"$RS\",\"suite\":\"walkthrough@1\"}"
is "replay with suite walkthrough@1: scored against the store's version 1" \
	"201 replay walkthrough 1 true" "$STATUS $(jqb '"\(.kind) \(.suite) \(.suite_version) \(.scored)"')"
req "$ED" POST /v1/m/sandbox/replays "{\"session_id\":\"$RS\",\"suite\":\"walkthrough@9\"}"
is_error "replay naming a version the store does not have: 422" 422 invalid

# ---- refusals: nothing written -------------------------------------------------
n_audit=$(audit_count)
req "$AD" GET "/v1/m/sandbox/audit?limit=500"
is "the create and the update were audited" "sandbox.suite.create:1 sandbox.suite.update:2" \
	"$(jqb '[.events[]?|select(.action|startswith("sandbox.suite"))|"\(.action):\(.detail.version)"]|sort|join(" ")')"
req "$ED" POST /v1/m/sandbox/suites "$(cat "$FIX/suites/walkthrough.json")"
is_error "POST an existing name: 409" 409 conflict
req "$VW" POST /v1/m/sandbox/suites '{"name":"viewer-made","expectations":[{"step":"*","not_mock_miss":true}]}'
is_error "viewer POST: 403" 403 forbidden
req "$VW" PUT /v1/m/sandbox/suites/walkthrough '{"expectations":[{"step":"*","not_mock_miss":true}]}'
is_error "viewer PUT: 403" 403 forbidden
req "$ED" POST /v1/m/sandbox/suites '{"name":"bad","expectations":"not-a-list"}'
is_error "malformed suite: 400" 400 malformed
req "$ED" POST /v1/m/sandbox/suites '{"name":"bad","expectations":[{"key":"step-1","equals":"x","bogus":1}]}'
is_error "suite with an unknown field: 400" 400 malformed
req "$ED" PUT /v1/m/sandbox/suites/walkthrough '{"name":"walkthrough","expectations":[]}'
is_client_error "PUT of a malformed document: refused" 422
req "$ED" PUT /v1/m/sandbox/suites/walkthrough '{"name":"other","expectations":[{"step":"*","not_mock_miss":true}]}'
is_error "PUT with another name in the document: 422" 422 invalid
req "$ED" PUT /v1/m/sandbox/suites/nosuch '{"expectations":[{"step":"*","not_mock_miss":true}]}'
is_error "PUT of a suite that does not exist: 404" 404 not_found
req "$ED" POST /v1/m/sandbox/suites '{"name":"bad name!","expectations":[{"step":"*","not_mock_miss":true}]}'
is_error "a name outside [A-Za-z0-9._-]: 422" 422 invalid
show olivares sandbox suites create - <<<'{"name":"bad","threshold":2,"expectations":[{"step":"*","not_mock_miss":true}]}'
is "CLI create of a suite out of bounds: exit 1" 1 "$RC"
show olivares sandbox suites get 'bad name'
is "CLI get of a name that is no suite name: usage error (exit 2)" 2 "$RC"
show olivares sandbox suites update walkthrough@1 strict.json
is "CLI update of NAME@N: usage error (exit 2)" 2 "$RC"
show olivares sandbox suites update walkthrough
is "CLI update without a FILE: usage error (exit 2)" 2 "$RC"
show olivares sandbox suites create a.json b.json
is "CLI create with two files: usage error (exit 2)" 2 "$RC"
req "$VW" GET /v1/m/sandbox/suites/bad
is_error "nothing named bad was stored" 404 not_found
req "$VW" GET /v1/m/sandbox/suites/viewer-made
is_error "nothing named viewer-made was stored" 404 not_found
req "$VW" GET /v1/m/sandbox/suites/walkthrough
is "walkthrough is still version 2" 2 "$(jqb .version)"
is "no suite audit event for the refusals" "$n_audit" "$(audit_count)"

n_runs=$(runs_count)
if ((!shared)); then
	req "$ED" POST "/v1/m/sandbox/scenarios/$SID/runs" '{"variant":"candidate","suite":"nosuch"}'
	is_error "run naming a suite the store does not have, no adapter: 422" 422 invalid
fi
req "$ED" POST "/v1/m/sandbox/scenarios/$SID/runs" '{"variant":"candidate","suite":"walkthrough@9"}'
is_error "run naming a version the store does not have: 422" 422 invalid
if ((!shared)); then
	req "$AD" POST /v1/m/sandbox/comparisons "{\"scenario_id\":\"$SID\",\"baseline\":\"candidate\",\"candidate\":\"v2\",\"suite\":\"nosuch\"}"
	is_error "comparison naming a missing suite: 422" 422 invalid
fi
req "$AD" POST /v1/m/sandbox/comparisons "{\"scenario_id\":\"$SID\",\"baseline\":\"candidate\",\"candidate\":\"v2\",\"suite\":\"walkthrough@9\"}"
is_error "comparison naming a version the store does not have: 422" 422 invalid
is "nothing was queued for the refused runs" "$n_runs" "$(runs_count)"

# ---- tenants -------------------------------------------------------------------
req "$OT" GET /v1/m/sandbox/suites/walkthrough
is_error "another tenant: GET walkthrough is 404" 404 not_found
req "$OT" GET /v1/m/sandbox/suites/walkthrough@1
is_error "another tenant: GET walkthrough@1 is 404" 404 not_found
req "$OT" GET /v1/m/sandbox/suites
is "another tenant lists no suite" 0 "$(jqb '.suites|length')"
req "$OT" PUT /v1/m/sandbox/suites/walkthrough '{"expectations":[{"step":"*","not_mock_miss":true}]}'
is_error "another tenant: PUT walkthrough is 404" 404 not_found
req "$OT" POST /v1/m/sandbox/suites "$(cat "$FIX/suites/walkthrough.json")"
is "another tenant may have its own walkthrough, version 1" "201 1" "$STATUS $(jqb .version)"
req "$VW" GET /v1/m/sandbox/suites/walkthrough
is "... which leaves the first tenant's at version 2" 2 "$(jqb .version)"

# ---- comparisons scored by the store suite --------------------------------------
req "$AD" POST /v1/m/sandbox/comparisons "{\"scenario_id\":\"$SID\",\"baseline\":\"candidate\",\"candidate\":\"v2\",\"suite\":\"walkthrough@1\"}"
is "comparison candidate -> v2 on walkthrough@1: improved 0.75 -> 1" \
	"201 improved 0.75 1 0.25" "$STATUS $(jqb '"\(.verdict) \(.baseline.score) \(.candidate.score) \(.delta)"')"
CID=$(jqb .id)
B=$(jqb .baseline.run_id)
K=$(jqb .candidate.run_id)
req "$AD" GET "/v1/m/sandbox/runs/$B"
b=$(jqb '"\(.suite)@\(.suite_version)"')
req "$AD" GET "/v1/m/sandbox/runs/$K"
is "both sides were scored against one pinned version" "walkthrough@1 walkthrough@1" "$b $(jqb '"\(.suite)@\(.suite_version)"')"
req "$AD" POST /v1/m/sandbox/comparisons "{\"scenario_id\":\"$SID\",\"baseline\":\"v2\",\"candidate\":\"candidate\",\"suite\":\"walkthrough\"}"
is "comparison v2 -> candidate on the latest: regressed" "201 regressed" "$STATUS $(jqb .verdict)"
isnt "comparison id recorded" "" "$CID"
OLIVARES_TOKEN=$AD show olivares sandbox gate --scenario "$SID"
is "gate on the newest comparison (regressed): exit 1" 1 "$RC"
OLIVARES_TOKEN=$AD show olivares sandbox compare --scenario "$SID" --baseline candidate --candidate v2 --suite walkthrough
is "CLI compare on the store suite: exit 0, delta 0.25, improved" "0 0.25 improved" \
	"$RC $(printf '%s\n' "$OUT" | awk '($1 == "verdict" || $1 == "delta") && !seen[$1]++ { printf " %s", $2 }' | sed 's/^ //')"
OLIVARES_TOKEN=$AD show olivares sandbox gate --scenario "$SID"
is "gate on it: exit 0, verdict=improved" "0 verdict=improved delta=0.25" "$RC $(cut -d' ' -f1,2 <<<"$OUT")"

done_testing
