#!/usr/bin/env bash
# Comparisons: POST /v1/m/sandbox/comparisons runs a baseline and a
# candidate variant, scores both against a suite and appends the verdict.
# Each verdict is reproduced on inproc-mock with mocks tagged by variant, so
# the two sides see different data:
#   scenario steps s1..s4 (inputs q1..q4), suite compare-steps
#   (tests/fixtures/suites/compare-steps.json: one not_mock_miss per step,
#   score = resolved steps / 4, threshold 0.5):
#     base  resolves q1 q2       -> 0.5
#     up    resolves q1 q2 q3    -> 0.75   (base -> up: improved, +0.25)
#     down  resolves q1          -> 0.25   (base -> down: regressed, -0.25)
#     same  resolves q1 q2, q2 with another text -> 0.5 (unchanged, one
#           differing step)
# Inconclusive: an unknown suite (neither side scored), a backend that fails
# closed (firecracker here). Then: delta = candidate - baseline exactly, the
# tolerance, the same comparison twice, roles (editor 403, viewer reads),
# append-only (PUT/DELETE 405, nothing changed), tenants (404), latest=true,
# bad input (nothing changed), and the CLI: compare, comparisons list|get,
# and `sandbox gate`'s exit status 0/1/3.
#
# Needs the builtin scorer on tests/fixtures/suites (tests/e2e/run.sh
# --fresh sets it and exports OLV_SUITES_DIR).
. "$(dirname "$0")/lib.sh"
e2e_require
cd "$E2E_TMP" || exit 1

AD=$OLV_ADMIN_TOKEN
ED=$OLV_EDITOR_TOKEN
VW=$OLV_VIEWER_TOKEN
SUITE=compare-steps

# show CMD...: print the command and its output as comments; OUT, ERR, RC
show() {
	echo "# \$ $*"
	RC=0
	OUT=$("$@" 2>"$E2E_TMP/stderr") || RC=$?
	ERR=$(cat "$E2E_TMP/stderr")
	printf '%s\n' "$OUT" | head -n 30 | sed 's/^/#   /'
	if [[ -n $ERR ]]; then printf '%s\n' "$ERR" | sed 's/^/#   stderr: /'; fi
}

if [[ -z ${OLV_SUITES_DIR:-} || ! -f ${OLV_SUITES_DIR}/$SUITE.json ]]; then
	echo "# skip - this stack was not started by run.sh --fresh with the builtin scorer on tests/fixtures/suites"
	ok "comparisons: skipped (no builtin scorer with suite $SUITE on this stack)"
	done_testing
fi

module_on "$AD" || exit 1

STEPS='[{"key":"s1","input":"q1"},{"key":"s2","input":"q2"},{"key":"s3","input":"q3"},{"key":"s4","input":"q4"}]'
MOCKS='[{"resource":"q1","response":"a1"},
 {"resource":"q2","response":"a2","variant":"base"},
 {"resource":"q2","response":"a2","variant":"up"},
 {"resource":"q3","response":"a3","variant":"up"},
 {"resource":"q2","response":"a2-same","variant":"same"}]'

# new_scenario NAME: create the scenario above as the editor; its id in NEW_SID
new_scenario() {
	req "$ED" POST /v1/m/sandbox/scenarios "{\"name\":\"$1\",\"steps\":$STEPS,\"mocks\":$MOCKS}"
	is_status "scenario $1 created" 201
	NEW_SID=$(jqb '.id // empty')
}

# compare TOKEN SID BASE CAND [EXTRA]: POST a comparison; EXTRA is appended
# to the body's members (",\"tolerance\":0.2"). The answer is kept in
# cmp-N.json (N counting from 1) and its name in LAST.
NCMP=0
compare() {
	req "$1" POST /v1/m/sandbox/comparisons \
		"{\"scenario_id\":\"$2\",\"baseline\":\"$3\",\"candidate\":\"$4\",\"suite\":\"$SUITE\"${5:-}}"
	NCMP=$((NCMP + 1))
	LAST=$E2E_TMP/cmp-$NCMP.json
	cp "$BODY_FILE" "$LAST"
}
jl() { jq -r "$1" "$LAST" 2>/dev/null; }
jlc() { jq -cS "$1" "$LAST" 2>/dev/null; }

new_scenario cmp-verdicts
SID=$NEW_SID
[[ -n $SID ]] || done_testing

# ---- improved: base -> up --------------------------------------------------
req "$AD" GET '/v1/m/sandbox/audit?limit=1'
before_audit=$(jqb '.events[0].id')
compare "$AD" "$SID" base up
is_status "POST comparison base -> up (admin): 201" 201
CID_IMPROVED=$(jl .id)
is "improved: verdict" improved "$(jl .verdict)"
is "improved: scores 0.5 -> 0.75, delta 0.25" "0.5 0.75 0.25" "$(jl '"\(.baseline.score) \(.candidate.score) \(.delta)"')"
is "improved: delta is exactly candidate - baseline" true "$(jl '.delta == (.candidate.score - .baseline.score)')"
is "improved: both sides completed and scored" "completed true completed true" \
	"$(jl '"\(.baseline.status) \(.baseline.scored) \(.candidate.status) \(.candidate.scored)"')"
is "improved: variants recorded" "base up" "$(jl '"\(.baseline.variant) \(.candidate.variant)"')"
is "improved: scenario, version, suite, tolerance 0, no reason" "$SID 1 $SUITE 0 null" \
	"$(jl '"\(.scenario_id) \(.scenario_version) \(.suite) \(.tolerance) \(.reason)"')"
is "improved: differing_steps is step s3 (miss on base, a3 on up)" \
	'[{"baseline_output":"[[mock-miss:q3]]","candidate_output":"a3","key":"s3","seq":3}]' \
	"$(jlc .differing_steps)"
isnt "improved: decided_by names the admin's token" "" "$(jl '.decided_by // ""')"
isnt "improved: created_at set" "" "$(jl '.created_at // ""')"
is "improved: the response has exactly the contract's keys" \
	'["baseline","candidate","created_at","decided_by","delta","differing_steps","flaky_steps","id","pass_k","reason","repeats","runs","same_agent","scenario_id","scenario_version","stats","status","suite","tolerance","verdict"]' \
	"$(jlc 'keys')"
is "improved: each side has exactly {variant,run_id,status,scored,score,shutdown,agent}" \
	'["agent","run_id","score","scored","shutdown","status","variant"]|["agent","run_id","score","scored","shutdown","status","variant"]' \
	"$(jl '(.baseline|keys|tojson) + "|" + (.candidate|keys|tojson)')"
is "improved: no agent process on inproc-mock, each side's shutdown is null" "null null" \
	"$(jl '"\(.baseline.shutdown) \(.candidate.shutdown)"')"
BRUN=$(jl .baseline.run_id)
CRUN=$(jl .candidate.run_id)
isnt "the two runs are distinct" "$BRUN" "$CRUN"
req "$VW" GET "/v1/m/sandbox/runs/$BRUN"
is_status "baseline run recorded (viewer GET)" 200
is "baseline run: kind comparison, variant base, suite, scored, 0.5, passed (threshold 0.5)" \
	"comparison base $SUITE true 0.5 true completed" \
	"$(jqb '"\(.kind) \(.variant) \(.suite) \(.scored) \(.score) \(.passed) \(.status)"')"
req "$VW" GET "/v1/m/sandbox/runs/$CRUN"
is "candidate run: kind comparison, variant up, scored 0.75, passed" \
	"comparison up $SUITE true 0.75 true completed" \
	"$(jqb '"\(.kind) \(.variant) \(.suite) \(.scored) \(.score) \(.passed) \(.status)"')"
req "$VW" GET "/v1/m/sandbox/runs/$CRUN/outputs"
is "candidate run outputs: a1 a2 a3 and a miss on q4" "a1|a2|a3|[[mock-miss:q4]]" \
	"$(jqb '[.outputs[].output]|join("|")')"
is "the comparison is audited once as sandbox.compare" 1 \
	"$(audit_since "$AD" "$before_audit" | tr ' ' '\n' | grep -c '^sandbox.compare$')"
req "$VW" GET "/v1/m/sandbox/comparisons/$CID_IMPROVED"
is_status "viewer GET /comparisons/ID: 200" 200
is "GET /comparisons/ID is the POST's answer, with its approvals" "$(jq -cS '. + {approval: null, approvals: []}' "$LAST")" "$(jq -cS . "$BODY_FILE")"

# ---- regressed: base -> down -----------------------------------------------
compare "$AD" "$SID" base down
is_status "POST comparison base -> down: 201" 201
is "regressed: verdict, scores 0.5 -> 0.25, delta -0.25" "regressed 0.5 0.25 -0.25" \
	"$(jl '"\(.verdict) \(.baseline.score) \(.candidate.score) \(.delta)"')"
is "regressed: delta is exactly candidate - baseline" true "$(jl '.delta == (.candidate.score - .baseline.score)')"
is "regressed: differing_steps is step s2 (a2 on base, miss on down)" \
	'[{"baseline_output":"a2","candidate_output":"[[mock-miss:q2]]","key":"s2","seq":2}]' \
	"$(jlc .differing_steps)"
req "$VW" GET "/v1/m/sandbox/runs/$(jl .candidate.run_id)"
is "regressed: the candidate run is below the threshold: passed false" "0.25 false" "$(jqb '"\(.score) \(.passed)"')"

# ---- unchanged: base -> same (same score, one different output) -------------
compare "$AD" "$SID" base same
is_status "POST comparison base -> same: 201" 201
is "unchanged: verdict, scores 0.5 -> 0.5, delta 0" "unchanged 0.5 0.5 0" \
	"$(jl '"\(.verdict) \(.baseline.score) \(.candidate.score) \(.delta)"')"
is "unchanged: the differing output is still recorded (s2: a2 vs a2-same)" \
	'[{"baseline_output":"a2","candidate_output":"a2-same","key":"s2","seq":2}]' \
	"$(jlc .differing_steps)"
compare "$AD" "$SID" base base
is "base -> base: unchanged, delta 0, no differing step" "unchanged 0 []" \
	"$(jl '"\(.verdict) \(.delta) \(.differing_steps|tojson)"')"

# ---- tolerance --------------------------------------------------------------
compare "$AD" "$SID" base up ',"tolerance":0.25'
is "tolerance 0.25, delta +0.25: unchanged (improved needs delta > tolerance)" "201 unchanged 0.25 0.25" \
	"$STATUS $(jl '"\(.verdict) \(.delta) \(.tolerance)"')"
compare "$AD" "$SID" base up ',"tolerance":0.2'
is "tolerance 0.2, delta +0.25: improved" "201 improved 0.25" "$STATUS $(jl '"\(.verdict) \(.delta)"')"
compare "$AD" "$SID" base down ',"tolerance":0.25'
is "tolerance 0.25, delta -0.25: unchanged" "201 unchanged -0.25" "$STATUS $(jl '"\(.verdict) \(.delta)"')"
compare "$AD" "$SID" base down ',"tolerance":1'
is "tolerance 1 (the bound) accepted: unchanged" "201 unchanged 1" "$STATUS $(jl '"\(.verdict) \(.tolerance)"')"
compare "$AD" "$SID" base up ',"tolerance":0.2499999999'
is "tolerance 0.2499999999 is recorded to 9 decimals (0.25), as the delta: unchanged" "201 unchanged 0.25 0.25" \
	"$STATUS $(jl '"\(.verdict) \(.delta) \(.tolerance)"')"

# ---- the same comparison twice: same verdict, delta and differing steps -----
compare "$AD" "$SID" base up
A=$LAST
compare "$AD" "$SID" base up
B=$LAST
is "twice: same verdict, delta, scores and differing steps" \
	"$(jq -cS '[.verdict,.delta,.baseline.score,.candidate.score,.differing_steps]' "$A")" \
	"$(jq -cS '[.verdict,.delta,.baseline.score,.candidate.score,.differing_steps]' "$B")"
is "twice: the verdict is improved both times" "improved improved" "$(jq -r .verdict "$A") $(jq -r .verdict "$B")"
isnt "twice: two comparisons (append-only), not one rewritten" "$(jq -r .id "$A")" "$(jq -r .id "$B")"
isnt "twice: new runs each time" "$(jq -r .candidate.run_id "$A")" "$(jq -r .candidate.run_id "$B")"

# ---- inconclusive: unknown suite (neither side scored) ----------------------
SUITE=no-such-suite compare "$AD" "$SID" base up
req_status=$STATUS
is "unknown suite: 201 (both runs executed, not scored)" 201 "$req_status"
is "unknown suite: inconclusive, no delta" "inconclusive null" "$(jl '"\(.verdict) \(.delta)"')"
is "unknown suite: both sides completed, not scored, no score" "completed false null completed false null" \
	"$(jl '"\(.baseline.status) \(.baseline.scored) \(.baseline.score) \(.candidate.status) \(.candidate.scored) \(.candidate.score)"')"
reason=$(jl '.reason // ""')
if [[ $reason =~ (baseline|candidate)\ run\ not\ scored ]]; then
	ok "unknown suite: the reason names the side and the cause ($reason)"
else
	not_ok "unknown suite: the reason names the side and the cause (expected '<side> run not scored: …', got $(short "$reason"))"
fi
req "$VW" GET "/v1/m/sandbox/runs/$(jl .baseline.run_id)"
if [[ $(jqb .scored) == false && $(jqb .passed) == null && $(jqb '.reason // ""') == "executed, not scored: "* ]]; then
	ok "unknown suite: the baseline run is recorded executed, not scored ($(jqb .reason))"
else
	not_ok "unknown suite: the baseline run is recorded executed, not scored (got $(short "$BODY"))"
fi

# ---- inconclusive: a backend that fails closed ------------------------------
req "$VW" GET /v1/m/sandbox/backends
fc=$(jqb '.backends[]|select(.name=="firecracker")|"\(.allowed) \(.preflight.ok)"')
if [[ $fc == "true false" ]]; then
	compare "$AD" "$SID" base up ',"backend":"firecracker"'
	is "firecracker (fails closed here): 201" 201 "$STATUS"
	is "firecracker: inconclusive, no delta" "inconclusive null" "$(jl '"\(.verdict) \(.delta)"')"
	is "firecracker: both runs failed, not scored" "failed false failed false" \
		"$(jl '"\(.baseline.status) \(.baseline.scored) \(.candidate.status) \(.candidate.scored)"')"
	reason=$(jl '.reason // ""')
	if [[ $reason =~ (baseline|candidate)\ run\ failed ]]; then
		ok "firecracker: the reason names the failed run ($reason)"
	else
		not_ok "firecracker: the reason names the failed run (expected '<side> run failed: …', got $(short "$reason"))"
	fi
	req "$VW" GET "/v1/m/sandbox/runs/$(jl .candidate.run_id)"
	is "firecracker: the candidate run is recorded failed, isolated false, not scored" "failed false false firecracker" \
		"$(jqb '"\(.status) \(.isolated) \(.scored) \(.backend)"')"
else
	echo "# skip - firecracker inconclusive case: firecracker is '$fc' (allowed, preflight) on this stack"
fi

# ---- roles -------------------------------------------------------------------
before=$(state_counts "$AD")
compare "$ED" "$SID" base up
is_error "editor POST comparison: 403 forbidden" 403 forbidden
compare "$VW" "$SID" base up
is_error "viewer POST comparison: 403 forbidden" 403 forbidden
compare "" "$SID" base up
is_status "no token: 401" 401
is "refused comparisons change nothing (scenarios, runs, audit)" "$before" "$(state_counts "$AD")"
req "$VW" GET "/v1/m/sandbox/comparisons?scenario=$SID"
is_status "viewer lists comparisons: 200" 200

# ---- append-only: no PUT, no DELETE -----------------------------------------
before=$(state_counts "$AD")
is_append_only "$AD" "$VW" /v1/m/sandbox/comparisons "$CID_IMPROVED" comparison \
	'{"verdict":"regressed","delta":-1}' '{"verdict":"regressed"}'
is "nothing else changed either (scenarios, runs, audit)" "$before" "$(state_counts "$AD")"

# ---- tenants -----------------------------------------------------------------
OT=$(new_tenant_token "$(unique cmp-other)" admin)
if [[ -z $OT ]]; then
	not_ok "another tenant's admin token created"
else
	module_on "$OT" || true
	req "$OT" GET "/v1/m/sandbox/comparisons/$CID_IMPROVED"
	is_error "another tenant GET /comparisons/ID: 404" 404 not_found
	before=$(state_counts "$AD")
	req "$OT" POST /v1/m/sandbox/comparisons "{\"scenario_id\":\"$SID\",\"baseline\":\"base\",\"candidate\":\"up\",\"suite\":\"$SUITE\"}"
	is_error "another tenant POST comparison on our scenario: 404" 404 not_found
	is "another tenant POST comparison: the message and field name the scenario, as for one that never was" \
		"scenario not found scenario_id" "$(jqb '"\(.error.message) \(.error.field)"')"
	is "and nothing changed in ours" "$before" "$(state_counts "$AD")"
	req "$OT" GET "/v1/m/sandbox/comparisons"
	is "another tenant lists none of ours" "200 0" "$STATUS $(jqb '[.comparisons[]|select(.scenario_id=="'"$SID"'")]|length')"
	req "$OT" GET "/v1/m/sandbox/comparisons?scenario=$SID&latest=true"
	is "another tenant: latest for our scenario is not ours" "" \
		"$(jqb '.comparisons[]?.id' | grep -Fx "$CID_IMPROVED")"
fi

# ---- latest=true and the order of the list ----------------------------------
compare "$AD" "$SID" base same
NEWEST=$(jl .id)
req "$VW" GET "/v1/m/sandbox/comparisons?scenario=$SID&latest=true"
is_status "latest=true: 200" 200
is "latest=true: exactly one, the newest" "1 $NEWEST unchanged" "$(jqb '"\(.comparisons|length) \(.comparisons[0].id) \(.comparisons[0].verdict)"')"
req "$VW" GET "/v1/m/sandbox/comparisons?scenario=$SID&limit=500"
is "the list: newest first" "$NEWEST" "$(jqb '.comparisons[0].id')"
is "the list: every comparison posted on the scenario" "$(jq -r --arg s "$SID" 'select(.id and .scenario_id==$s)|.id' "$E2E_TMP"/cmp-*.json 2>/dev/null | sort | tr '\n' ' ')" \
	"$(jqb '.comparisons[].id' | sort | tr '\n' ' ')"
is "the list: every item belongs to the scenario" "$SID" "$(jqb '[.comparisons[].scenario_id]|unique|join(",")')"
req "$VW" GET "/v1/m/sandbox/comparisons?scenario=$SID&limit=2"
is "limit=2: two items" 2 "$(jqb '.comparisons|length')"
req "$VW" GET "/v1/m/sandbox/comparisons?latest=true"
if [[ $STATUS == 400 || $STATUS == 422 ]] && [[ -n $(jqb '.error.code // empty') ]]; then
	ok "latest=true without scenario: refused ($STATUS $(jqb .error.code))"
else
	not_ok "latest=true without scenario: refused (expected HTTP 400 or 422 with a JSON error, got HTTP $STATUS: $(short "$BODY"))"
fi
req "$VW" GET "/v1/m/sandbox/comparisons/cmp-does-not-exist"
is_error "unknown comparison id: 404" 404 not_found

# ---- bad input changes nothing ----------------------------------------------
before=$(state_counts "$AD")
bad() {
	local desc=$1 st=$2 body=$3
	req "$AD" POST /v1/m/sandbox/comparisons "$body"
	is_client_error "$desc: $st" "$st"
}
base="\"scenario_id\":\"$SID\",\"baseline\":\"base\",\"candidate\":\"up\""
bad "tolerance 1.5" 422 "{$base,\"suite\":\"$SUITE\",\"tolerance\":1.5}"
bad "tolerance -0.1" 422 "{$base,\"suite\":\"$SUITE\",\"tolerance\":-0.1}"
req "$AD" POST /v1/m/sandbox/comparisons "{$base,\"suite\":\"$SUITE\",\"tolerance\":\"0.1\"}"
is "tolerance as a string: 400 (wrong type)" 400 "$STATUS"
bad "suite ../etc (malformed name)" 422 "{$base,\"suite\":\"../etc\"}"
bad "suite with a space" 422 "{$base,\"suite\":\"a b\"}"
bad "suite of 129 bytes" 422 "{$base,\"suite\":\"$(repeat_char s 129)\"}"
bad "unknown field" 400 "{$base,\"suite\":\"$SUITE\",\"verdict\":\"improved\"}"
bad "not JSON" 400 "{$base"
req "$AD" POST /v1/m/sandbox/comparisons "{\"baseline\":\"base\",\"candidate\":\"up\",\"suite\":\"$SUITE\"}"
is_one_of "scenario_id missing: 400 or 422" "$STATUS" 400 422
req "$AD" POST /v1/m/sandbox/comparisons "{\"scenario_id\":\"$SID\",\"candidate\":\"up\",\"suite\":\"$SUITE\"}"
is_one_of "baseline missing: 400 or 422" "$STATUS" 400 422
req "$AD" POST /v1/m/sandbox/comparisons "{$base}"
is_one_of "suite missing: 400 or 422" "$STATUS" 400 422
req "$AD" POST /v1/m/sandbox/comparisons "{\"scenario_id\":\"scn-does-not-exist\",\"baseline\":\"base\",\"candidate\":\"up\",\"suite\":\"$SUITE\"}"
is_error "unknown scenario: 404" 404 not_found
req "$AD" POST /v1/m/sandbox/comparisons "{$base,\"suite\":\"$SUITE\",\"backend\":\"no-such-backend\"}"
is_one_of "unknown backend: 400 or 422" "$STATUS" 400 422
is "bad input changed nothing (scenarios, runs, audit)" "$before" "$(state_counts "$AD")"

# ---- CLI: compare, comparisons list|get, gate ---------------------------------
new_scenario cmp-gate
SID2=$NEW_SID
export OLIVARES_TOKEN=$AD
show olivares sandbox gate --scenario "$SID2"
is "gate on a scenario without comparison: exit 3" 3 "$RC"
is "gate without comparison: nothing on stdout" "" "$OUT"
if [[ $ERR == *"no comparison"* ]]; then ok "gate without comparison: stderr says so"; else not_ok "gate without comparison: stderr says so (got $(short "$ERR"))"; fi

show olivares sandbox compare --scenario "$SID2" --baseline base --candidate up --suite "$SUITE" -o json
is "olivares sandbox compare (admin): exit 0" 0 "$RC"
is "olivares sandbox compare: no shutdown note, nothing on stderr" "" "$ERR"
G1=$(jq -r .id <<<"$OUT" 2>/dev/null)
is "olivares sandbox compare -o json: improved, delta 0.25" "improved 0.25" "$(jq -r '"\(.verdict) \(.delta)"' <<<"$OUT" 2>/dev/null)"
show olivares sandbox gate --scenario "$SID2"
is "gate after improved: exit 0" 0 "$RC"
is "gate prints verdict, delta and comparison" "verdict=improved delta=0.25 comparison=$G1" "$OUT"
is "gate after improved, no shutdown note: nothing on stderr" "" "$ERR"
show olivares sandbox gate --scenario "$SID2" -o json
is "gate -o json: the comparison, exit 0" "0 $G1 improved" "$RC $(jq -r '"\(.id) \(.verdict)"' <<<"$OUT" 2>/dev/null)"

show olivares sandbox compare --scenario "$SID2" --baseline base --candidate down --suite "$SUITE"
is "olivares sandbox compare (table): exit 0" 0 "$RC"
if grep -Eq '^verdict +regressed$' <<<"$OUT" && grep -Eq '^delta +-0\.25$' <<<"$OUT"; then
	ok "compare table: verdict regressed, delta -0.25"
else
	not_ok "compare table: verdict regressed, delta -0.25 (got $(short "$OUT"))"
fi
if grep -Eq '^candidate +down +[^ ]+ +completed +true +0\.25$' <<<"$OUT"; then
	ok "compare table: the candidate row (SIDE VARIANT RUN STATUS SCORED SCORE)"
else
	not_ok "compare table: the candidate row (got $(short "$OUT"))"
fi
if grep -Eq '^2 +s2 +a2 +\[\[mock-miss:q2\]\]$' <<<"$OUT"; then
	ok "compare table: the differing step row"
else
	not_ok "compare table: the differing step row (got $(short "$OUT"))"
fi
show olivares sandbox gate --scenario "$SID2"
is "gate after regressed: exit 1" 1 "$RC"
G2=$(olivares sandbox comparisons list --scenario "$SID2" --limit 1 -o json | jq -r '.comparisons[0].id')
is "gate prints the regression" "verdict=regressed delta=-0.25 comparison=$G2" "$OUT"
if [[ $ERR == *regressed* ]]; then ok "gate after regressed: stderr says why the gate is closed"; else not_ok "gate after regressed: stderr says why (got $(short "$ERR"))"; fi

show olivares sandbox compare --scenario "$SID2" --baseline base --candidate up --suite no-such-suite
is "compare with an unknown suite: exit 0 (recorded, inconclusive)" 0 "$RC"
show olivares sandbox gate --scenario "$SID2"
is "gate after inconclusive: exit 1" 1 "$RC"
if [[ $OUT =~ ^verdict=inconclusive\ delta=null\ comparison=[^\ ]+$ ]]; then ok "gate prints inconclusive with delta=null"; else not_ok "gate prints inconclusive with delta=null (got $(short "$OUT"))"; fi

show olivares sandbox compare --scenario "$SID2" --baseline base --candidate same --suite "$SUITE"
show olivares sandbox gate --scenario "$SID2"
is "gate after unchanged: exit 0" 0 "$RC"
if [[ $OUT =~ ^verdict=unchanged\ delta=0\ comparison= ]]; then ok "gate prints unchanged, delta=0"; else not_ok "gate prints unchanged, delta=0 (got $(short "$OUT"))"; fi

show olivares sandbox compare --scenario "$SID2" --baseline base --candidate up --suite "$SUITE" --token "$ED"
is "olivares sandbox compare as an editor: exit 1" 1 "$RC"
if [[ $ERR == *"HTTP 403"* ]]; then ok "editor compare: the CLI reports the 403"; else not_ok "editor compare: the CLI reports the 403 (got $(short "$ERR"))"; fi
show olivares sandbox gate --scenario "$SID2" --token "$VW"
is "gate as a viewer still reads the latest (unchanged): exit 0" 0 "$RC"
show olivares sandbox compare --scenario "$SID2" --baseline base --candidate up
is "compare without --suite: usage error, exit 2" 2 "$RC"
show olivares sandbox compare --scenario "$SID2" --baseline base --candidate up --suite "$SUITE" --tolerance x
is "compare --tolerance x: usage error, exit 2" 2 "$RC"
show olivares sandbox compare --scenario "$SID2" --baseline base --candidate up --suite "$SUITE" --tolerance 2
is "compare --tolerance 2: the server refuses, exit 1" 1 "$RC"
show olivares sandbox gate
is "gate without --scenario: usage error, exit 2" 2 "$RC"
show olivares sandbox gate --scenario "$SID2" --url http://127.0.0.1:1
is "gate when the server cannot be reached: exit 1" 1 "$RC"

show olivares sandbox comparisons list --scenario "$SID2" -o json
is "comparisons list -o json: exit 0, the four comparisons of the scenario" "0 4" "$RC $(jq '.comparisons|length' <<<"$OUT" 2>/dev/null)"
show olivares sandbox comparisons list --scenario "$SID2"
is "comparisons list table header" "ID SCENARIO SUITE BASELINE CANDIDATE VERDICT DELTA CREATED_AT" "$(head -n 1 <<<"$OUT" | tr -s ' ')"
is "comparisons list table: verdicts newest first" "unchanged inconclusive regressed improved" \
	"$(tail -n +2 <<<"$OUT" | awk '{print $6}' | tr '\n' ' ' | sed 's/ $//')"
show olivares sandbox comparisons get "$G1" -o json
req "$VW" GET "/v1/m/sandbox/comparisons/$G1"
is "comparisons get -o json is the API's answer" "$(jq -cS . "$BODY_FILE")" "$(jq -cS . <<<"$OUT" 2>/dev/null)"
show olivares sandbox comparisons get does-not-exist
is "comparisons get of an unknown id: exit 1" 1 "$RC"
# a new version with the same steps and mocks (a new description): the
# evidence still holds
req "$ED" PUT "/v1/m/sandbox/scenarios/$SID2" "{\"name\":\"cmp-gate\",\"description\":\"updated\",\"steps\":$STEPS,\"mocks\":$MOCKS}"
is "scenario re-described: version 2" "200 2" "$STATUS $(jqb .version)"
show olivares sandbox gate --scenario "$SID2"
is "gate after a change that leaves steps and mocks alone: still open (exit 0)" 0 "$RC"
# other mocks: evidence about the old ones is none about these
req "$ED" PUT "/v1/m/sandbox/scenarios/$SID2" "{\"name\":\"cmp-gate\",\"steps\":$STEPS,\"mocks\":[{\"resource\":\"q1\",\"response\":\"changed\"}]}"
is "scenario's mocks changed: version 3" "200 3" "$STATUS $(jqb .version)"
show olivares sandbox gate --scenario "$SID2"
is "gate after the mocks changed: exit 3, the old verdict still shown" "3 unchanged" "$RC $(sed -n 's/^verdict=\([a-z]*\) .*/\1/p' <<<"$OUT")"
if [[ $ERR == *"no comparison of the scenario's current steps and mocks (version 3; the newest comparison is of version 1, whose steps or mocks differ)"* ]]; then
	ok "gate after the change: stderr says the evidence is of other steps or mocks"
else
	not_ok "gate after the change: stderr says the evidence is of other steps or mocks (got $(short "$ERR"))"
fi
show olivares sandbox compare --scenario "$SID2" --baseline base --candidate same --suite "$SUITE"
show olivares sandbox gate --scenario "$SID2"
is "compared again: the gate opens (unchanged, exit 0)" 0 "$RC"
show olivares sandbox gate --scenario 00000000000000000000000000000000
is "gate on a scenario that does not exist: an error (exit 1), not 'no evidence' (3)" 1 "$RC"
if [[ $ERR == *"HTTP 404"* ]]; then ok "gate on a missing scenario: the 404 is reported"; else not_ok "gate on a missing scenario: the 404 is reported (got $(short "$ERR"))"; fi
for c in "compare" "comparisons list" "comparisons get" "gate" "runs junit"; do
	# shellcheck disable=SC2086 # c is two words on purpose
	show olivares sandbox $c --help
	if [[ $RC == 0 && $OUT == Usage:* ]]; then ok "olivares sandbox $c --help"; else not_ok "olivares sandbox $c --help (exit $RC)"; fi
done

done_testing
