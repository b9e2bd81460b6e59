#!/usr/bin/env bash
# Scoring: a run that names a suite is scored by the adapter wired
# in the composition root, or recorded "executed, not scored" with the
# reason, never a silent pass; and the JUnit export of a run.
#
# On the stack under test (run.sh --fresh: builtin scorer on
# tests/fixtures/suites): the page's walkthrough scored against the
# walkthrough suites gives exactly the score and pass of
# tests/fixtures/suites/README.md; no suite, an unknown suite, a failed run
# are not scored (with the reason); malformed suite names are refused (422,
# nothing changed); the CLI's --suite. JUnit: `olivares sandbox runs junit`
# validates against tests/fixtures/junit.xsd; an unscored run has one
# testcase per step, the mock miss a failure; a scored run one per
# expectation, failures only when it did not pass its suite; XML special
# characters round-trip as text.
#
# Extra stacks (own data dir, free port, stopped at the end) with other
# [scorer] settings: none (no scorer wired: a suite the store does not have
# is refused), and the exec adapter with the
# tests/fixtures/scorer-* programs: good, hang, crash, garbage, exit3,
# out-of-range.
. "$(dirname "$0")/lib.sh"
# shellcheck source=../../scripts/lib/common.sh
. "$OLV_ROOT/scripts/lib/common.sh"
e2e_require
cd "$E2E_TMP" || exit 1

AD=$OLV_ADMIN_TOKEN
ED=$OLV_EDITOR_TOKEN
VW=$OLV_VIEWER_TOKEN
STACK=$OLV_ROOT/scripts/stack
FIX=$OLV_ROOT/tests/fixtures
XSD=$FIX/junit.xsd

# extra stacks: stopped whatever happens
declare -a EXTRA_DATA=()
cleanup_extra() {
	local d
	for d in "${EXTRA_DATA[@]}"; do
		env -u OLIVARES_DSN OLIVARES_DATA="$d" "$STACK" down >/dev/null 2>&1 || true
	done
	rm -rf "$E2E_TMP"
}
trap cleanup_extra EXIT

# show CMD...: print the command and its output as comments; OUT, ERR, RC
show() {
	echo "# \$ $*"
	RC=0
	OUT=$("$@" 2>"$E2E_TMP/stderr") || RC=$?
	ERR=$(cat "$E2E_TMP/stderr")
	printf '%s\n' "$OUT" | head -n 30 | sed 's/^/#   /'
	if [[ -n $ERR ]]; then printf '%s\n' "$ERR" | sed 's/^/#   stderr: /'; fi
}

# run_fields: the scoring fields of the last body, one line
run_fields() {
	jqb '"\(.status) suite=\(.suite) scored=\(.scored) score=\(.score) passed=\(.passed)"'
}

WALK_STEPS='[{"key":"step-1","input":"agent:user1@example.test"},{"key":"step-2","input":"agent:user2@example.test"}]'
WALK_MOCKS='[{"resource":"agent:user1@example.test","response":"first synthetic account"}]'

# walk_scenario TOKEN: create the page's walkthrough scenario on
# $OLIVARES_URL; prints its id (empty on failure)
walk_scenario() {
	req "$1" POST /v1/m/sandbox/scenarios "{\"name\":\"scoring\",\"steps\":$WALK_STEPS,\"mocks\":$WALK_MOCKS}"
	[[ $STATUS == 201 ]] && jqb .id
}

module_on "$AD" || exit 1
have_builtin=0
if [[ -n ${OLV_SUITES_DIR:-} && -f ${OLV_SUITES_DIR}/walkthrough.json ]]; then
	have_builtin=1
fi

SID=$(walk_scenario "$ED")
isnt "walkthrough scenario created" "" "$SID"

# ---- builtin scorer on the walkthrough ----------------------------------------
if ((have_builtin)); then
	req "$ED" POST "/v1/m/sandbox/scenarios/$SID/runs" '{"variant":"candidate","suite":"walkthrough"}'
	is_status "run with suite walkthrough: 201" 201
	RID=$(jqb .id)
	cp "$BODY_FILE" walk-run.json
	is "walkthrough: completed, scored, 0.75, passed (suites/README.md)" \
		"completed suite=walkthrough scored=true score=0.75 passed=true" "$(run_fields)"
	is "walkthrough: no reason when scored" null "$(jqb .reason)"
	is "walkthrough: the run's counters are the page's" "2 1 1" "$(jqb '"\(.steps_total) \(.steps_ok) \(.steps_error)"')"
	is "walkthrough: score_details has one failing entry, for step-2" "step-2" \
		"$(jqb '[.score_details[]|select(.passed==false)|.key]|join(",")')"
	is "walkthrough: every step-1 detail holds" true \
		"$(jqb '[.score_details[]|select(.key=="step-1")|.passed]|(length>0 and all)')"
	is "walkthrough: details are {seq,key,passed,check,message}" '["check","key","message","passed","seq"]' \
		"$(jqb '[.score_details[]|keys]|unique|.[0]|tojson')"
	req "$VW" GET "/v1/m/sandbox/runs/$RID"
	is "walkthrough: GET /runs/ID (viewer) records the same scoring" \
		"$(jq -cS '{suite,scored,score,passed,reason,score_details}' walk-run.json)" \
		"$(jq -cS '{suite,scored,score,passed,reason,score_details}' "$BODY_FILE")"

	req "$ED" POST "/v1/m/sandbox/scenarios/$SID/runs" '{"variant":"candidate","suite":"walkthrough-strict"}'
	is_status "run with suite walkthrough-strict: 201" 201
	RID_STRICT=$(jqb .id)
	# scores are recorded to 9 decimals (model_score_round), so 2/3 reads
	# back as exactly 0.666666667 on SQLite and PostgreSQL alike
	is "walkthrough-strict: scored, not passed (threshold 1.0)" \
		"completed suite=walkthrough-strict scored=true passed=false" \
		"$(jqb '"\(.status) suite=\(.suite) scored=\(.scored) passed=\(.passed)"')"
	is "walkthrough-strict: score is 2/3 recorded to 9 decimals" 0.666666667 "$(jqb .score)"
	echo "# walkthrough-strict score as recorded: $(jqb .score)"

	# a variant that also answers step-2: 1.0 on both suites
	req "$ED" POST /v1/m/sandbox/scenarios "{\"name\":\"scoring-v2\",\"steps\":$WALK_STEPS,\"mocks\":[{\"resource\":\"agent:user1@example.test\",\"response\":\"first synthetic account\"},{\"resource\":\"agent:user2@example.test\",\"response\":\"second\",\"variant\":\"v2\"}]}"
	SID_V2=$(jqb .id)
	req "$ED" POST "/v1/m/sandbox/scenarios/$SID_V2/runs" '{"variant":"v2","suite":"walkthrough-strict"}'
	is "variant v2 answering both steps: score 1, passed" \
		"completed suite=walkthrough-strict scored=true score=1 passed=true" "$(run_fields)"
	# docs/scoring.md's gate example: the walkthrough's variant against v2
	req "$AD" POST /v1/m/sandbox/comparisons "{\"scenario_id\":\"$SID_V2\",\"baseline\":\"candidate\",\"candidate\":\"v2\",\"suite\":\"walkthrough\"}"
	is "comparison walkthrough variant -> v2 on suite walkthrough: improved, 0.75 -> 1, delta 0.25" \
		"201 improved 0.75 1 0.25" "$STATUS $(jqb '"\(.verdict) \(.baseline.score) \(.candidate.score) \(.delta)"')"
	req "$AD" POST /v1/m/sandbox/comparisons "{\"scenario_id\":\"$SID_V2\",\"baseline\":\"candidate\",\"candidate\":\"v2\",\"suite\":\"walkthrough-strict\"}"
	# model/verdict.c records delta rounded to 9 decimal places (so 0.8 - 0.7
	# meets a tolerance of 0.1 exactly): 1/3 is recorded 0.333333333
	is "the same on walkthrough-strict: improved, delta = candidate - baseline rounded to 9 decimals" \
		"201 improved 0.333333333 true" \
		"$STATUS $(jqb '"\(.verdict) \(.delta) \((.delta - (.candidate.score - .baseline.score))|fabs <= 5e-10)"')"
	echo "# walkthrough-strict comparison as recorded: $(jq -c '{b:.baseline.score,c:.candidate.score,delta}' "$BODY_FILE")"
else
	echo "# skip - builtin scorer checks: this stack was not started by run.sh --fresh"
fi

# ---- not scored: no suite, unknown suite, failed run ---------------------------
req "$ED" POST "/v1/m/sandbox/scenarios/$SID/runs" '{"variant":"candidate"}'
is_status "run without suite: 201" 201
is "without suite: not scored, no score, no pass, no details" \
	"completed suite=null scored=false score=null passed=null null" "$(run_fields) $(jqb .score_details)"
is "without suite: no reason (nothing was asked)" null "$(jqb .reason)"

req "$ED" POST "/v1/m/sandbox/scenarios/$SID/runs" '{"variant":"candidate","suite":"no-such-suite"}'
is_status "run with an unknown suite: 201 (executed)" 201
RID_UNKNOWN=$(jqb .id)
is "unknown suite: executed, not scored, no score, no pass" \
	"completed suite=no-such-suite scored=false score=null passed=null" "$(run_fields)"
reason=$(jqb '.reason // ""')
if [[ $reason == "executed, not scored: "?* ]]; then
	ok "unknown suite: reason says executed, not scored, and why ($reason)"
else
	not_ok "unknown suite: reason says executed, not scored, and why (got $(short "$reason"))"
fi
req "$VW" GET "/v1/m/sandbox/runs/$RID_UNKNOWN/outputs"
is "unknown suite: the run and its outputs are recorded" "200 2" "$STATUS $(jqb '.outputs|length')"

req "$VW" GET /v1/m/sandbox/backends
if [[ $(jqb '.backends[]|select(.name=="firecracker")|"\(.allowed) \(.preflight.ok)"') == "true false" ]]; then
	req "$ED" POST "/v1/m/sandbox/scenarios/$SID/runs" '{"variant":"candidate","suite":"walkthrough","backend":"firecracker"}'
	is_status "failed run (firecracker fails closed) with a suite: 201" 201
	is "failed run: not sent to the scorer: scored false, no score, no pass" \
		"failed suite=walkthrough scored=false score=null passed=null" "$(run_fields)"
	reason=$(jqb '.reason // ""')
	if [[ -n $reason && $reason != "executed, not scored"* ]]; then
		ok "failed run: the reason keeps the run's failure ($reason)"
	else
		not_ok "failed run: the reason keeps the run's failure (got $(short "$reason"))"
	fi
else
	echo "# skip - failed run with a suite: firecracker is not allowed-and-failing here"
fi

# ---- malformed suite names: 422, nothing changed --------------------------------
before=$(state_counts "$AD")
for s in '../walkthrough' 'a b' '' '.hidden' '-dash' 'walk/through' 'walk\\through' "$(repeat_char s 129)"; do
	req "$ED" POST "/v1/m/sandbox/scenarios/$SID/runs" "{\"variant\":\"candidate\",\"suite\":\"$s\"}"
	is_client_error "suite $(short "$s"): 422" 422
done
req "$ED" POST "/v1/m/sandbox/scenarios/$SID/runs" '{"variant":"candidate","suite":7}'
is_one_of "suite 7 (not a string): 400 or 422" "$STATUS" 400 422
req "$ED" POST "/v1/m/sandbox/scenarios/$SID/runs" '{"variant":"candidate","suite":"walk\u0000through"}'
is_one_of "suite with a NUL: 400 or 422" "$STATUS" 400 422
is "malformed suites changed nothing (scenarios, runs, audit)" "$before" "$(state_counts "$AD")"
req "$ED" POST "/v1/m/sandbox/scenarios/$SID/runs" "{\"variant\":\"candidate\",\"suite\":\"$(repeat_char s 128)\"}"
is "a 128-byte suite name is well-formed: 201, executed, not scored (no such file)" "201 false" "$STATUS $(jqb .scored)"

# ---- CLI --suite ------------------------------------------------------------------
export OLIVARES_TOKEN=$ED
if ((have_builtin)); then
	show olivares sandbox scenarios run "$SID" --variant candidate --suite walkthrough -o json
	is "olivares sandbox scenarios run --suite: exit 0" 0 "$RC"
	is "CLI --suite: scored 0.75, passed" "walkthrough true 0.75 true" \
		"$(jq -r '"\(.suite) \(.scored) \(.score) \(.passed)"' <<<"$OUT" 2>/dev/null)"
fi
show olivares sandbox scenarios run "$SID" --variant candidate --suite ../x
is "CLI --suite ../x: the server refuses, exit 1" 1 "$RC"
if [[ $ERR == *"HTTP 422"* ]]; then ok "CLI --suite ../x: the 422 is reported"; else not_ok "CLI --suite ../x: the 422 is reported (got $(short "$ERR"))"; fi

# ---- JUnit ------------------------------------------------------------------------
# junit_check NAME RID: fetch with the CLI into NAME.xml, validate
junit_check() {
	show olivares sandbox runs junit "$2"
	is "$1: olivares sandbox runs junit exit 0" 0 "$RC"
	printf '%s\n' "$OUT" >"$1.xml"
	if xmllint --noout --schema "$XSD" "$1.xml" 2>"$1.xmllint"; then
		ok "$1: valid against tests/fixtures/junit.xsd"
	else
		not_ok "$1: valid against tests/fixtures/junit.xsd ($(short "$(cat "$1.xmllint")"))"
	fi
	# several readers show only a case's first failure: one per case
	is "$1: no testcase has more than one failure or more than one error" "0 0" \
		"$(xp "$1.xml" 'count(//testcase[count(failure)>1])') $(xp "$1.xml" 'count(//testcase[count(error)>1])')"
	# each step case's time is its duration_ms from the API (known: these
	# runs are new), in seconds to 3 decimals; a scored run's cases are its
	# expectations, each with the time of the step it looked at
	req "$VW" GET "/v1/m/sandbox/runs/$2"
	local want got k n scored details
	scored=$(jqb .scored)
	details=$(jq -c '[.score_details // [] | .[] | .seq]' "$BODY_FILE")
	req "$VW" GET "/v1/m/sandbox/runs/$2/outputs"
	if [[ $scored == true ]]; then
		want=$(jq -r --argjson seqs "$details" '.outputs as $o | [$seqs[] as $s | ([$o[]|select(.seq == $s)][0].duration_ms)
			| if type != "number" then "0" else ((. + 0.5)|floor) as $r
			| "\($r / 1000 | floor).\("00\($r % 1000)"[-3:])" end]|join(" ")' "$BODY_FILE")
		n=$(jq 'length' <<<"$details")
	else
		want=$(jqb '[.outputs[]|.duration_ms|if type != "number" then "unknown" else ((. + 0.5)|floor) as $r
			| "\($r / 1000 | floor).\("00\($r % 1000)"[-3:])" end]|join(" ")')
		n=$(jqb '.outputs|length')
	fi
	got=""
	for ((k = 1; k <= n; k++)); do
		got+="${got:+ }$(xp "$1.xml" "string(//testsuite/testcase[$k]/@time)")"
	done
	is "$1: each case's time is its step's duration_ms in seconds" "$want" "$got"
}
# xp FILE XPATH: the string value of XPATH in FILE ("" when absent)
xp() { xmllint --xpath "$2" "$1" 2>/dev/null; }

# a run without a suite: one case per step, the mock miss a failure
req "$ED" POST "/v1/m/sandbox/scenarios/$SID/runs" '{"variant":"candidate"}'
RID_J=$(jqb .id)
junit_check walk "$RID_J"
is "walk: one testsuite, one testcase per step" "1 2" \
	"$(xp walk.xml 'count(//testsuite)') $(xp walk.xml 'count(//testsuite/testcase)')"
is "walk: testcases named by the step keys, in order" "step-1 step-2" \
	"$(xp walk.xml 'string(//testcase[1]/@name)') $(xp walk.xml 'string(//testcase[2]/@name)')"
is "walk: step-1 passes (no failure, no error)" 0 "$(xp walk.xml 'count(//testcase[@name="step-1"]/*[self::failure or self::error])')"
is "walk: the mock-miss step is a failure of type mock_miss" 1 \
	"$(xp walk.xml 'count(//testcase[@name="step-2"]/failure[@type="mock_miss"])')"
is "walk: counters: testsuites tests=2 failures=1, testsuite tests=2 failures=1" "2 1 2 1" \
	"$(xp walk.xml 'string(/testsuites/@tests)') $(xp walk.xml 'string(/testsuites/@failures)') $(xp walk.xml 'string(//testsuite/@tests)') $(xp walk.xml 'string(//testsuite/@failures)')"
is "walk: testsuite id is the run id, property run_id too" "$RID_J $RID_J" \
	"$(xp walk.xml 'string(//testsuite/@id)') $(xp walk.xml 'string(//property[@name="run_id"]/@value)')"
is "walk: testsuite name is <scenario>:<variant>" "$SID:candidate" "$(xp walk.xml 'string(//testsuite/@name)')"
is "walk: properties backend, isolated, scored" "inproc-mock true false" \
	"$(xp walk.xml 'string(//property[@name="backend"]/@value)') $(xp walk.xml 'string(//property[@name="isolated"]/@value)') $(xp walk.xml 'string(//property[@name="scored"]/@value)')"
is "walk: classname olivares.sandbox.<scenario>" "olivares.sandbox.$SID" "$(xp walk.xml 'string(//testcase[1]/@classname)')"
req "$VW" GET "/v1/m/sandbox/runs/$RID_J"
t_start=$(date -u -d "$(jqb .started_at)" +%s%3N)
t_end=$(date -u -d "$(jqb .finished_at)" +%s%3N)
is "walk: the testsuite's time is the run's, finished_at - started_at, in seconds" \
	"$(printf '%d.%03d' $(((t_end - t_start) / 1000)) $(((t_end - t_start) % 1000)))" "$(xp walk.xml 'string(//testsuite/@time)')"

if ((have_builtin)); then
	# the walkthrough suite passes (0.75 >= 0.5) although not_mock_miss
	# fails on step-2: a scored run's cases are its expectations, and a
	# run its suite passed has no failure (the tolerated one says so)
	junit_check scored "$RID"
	is "scored: one case per expectation, named <step>: <check>" \
		"3|step-1: equals|step-1: not_mock_miss|step-2: not_mock_miss" \
		"$(xp scored.xml 'count(//testcase)')|$(xp scored.xml 'string(//testcase[1]/@name)')|$(xp scored.xml 'string(//testcase[2]/@name)')|$(xp scored.xml 'string(//testcase[3]/@name)')"
	is "scored: the run passed its suite: no failure, no error" "0 0 0" \
		"$(xp scored.xml 'count(//failure)') $(xp scored.xml 'count(//error)') $(xp scored.xml 'string(//testsuite/@failures)')"
	is "scored: the mock miss and the tolerated expectation are properties" "step-2 (seq 2)|1" \
		"$(xp scored.xml 'string(//property[@name="mock_miss"]/@value)')|$(xp scored.xml 'count(//property[@name="expectation_tolerated"])')"
	is "scored: the tolerated case says it in system-out" 1 \
		"$(xp scored.xml 'count(//testcase[3]/system-out)')"
fi

curl -s -D headers.txt -o curl.xml -H "Authorization: Bearer $VW" "$OLIVARES_URL/v1/m/sandbox/runs/$RID_J/junit"
is "GET /runs/ID/junit as a viewer: 200" 200 "$(awk 'NR==1{print $2}' headers.txt)"
ctype=$(grep -i '^content-type:' headers.txt | tr -d '\r' | cut -d' ' -f2- | tr '[:upper:]' '[:lower:]' | tr -d ' ')
is "GET /runs/ID/junit: Content-Type application/xml; charset=utf-8" "application/xml;charset=utf-8" "$ctype"
is "the CLI prints the XML as received" "$(cat curl.xml)" "$(cat walk.xml)"

if ((have_builtin)); then
	junit_check strict "$RID_STRICT"
	is "strict: not passed: the failed expectation is the one failure, on step-2: not_mock_miss" "1 1" \
		"$(xp strict.xml 'count(//failure)') $(xp strict.xml 'count(//testcase[@name="step-2: not_mock_miss"]/failure)')"
	is "strict: type expectation, message names the check; the step's mock miss is a property" \
		"expectation|expectation failed: not_mock_miss|0|step-2 (seq 2)" \
		"$(xp strict.xml 'string(//failure/@type)')|$(xp strict.xml 'string(//failure/@message)')|$(xp strict.xml 'count(//failure[@type="mock_miss"])')|$(xp strict.xml 'string(//property[@name="mock_miss"]/@value)')"
	is "strict: property scored true" true "$(xp strict.xml 'string(//property[@name="scored"]/@value)')"
fi

# a run that named a suite and was not scored is never a green suite
junit_check unscored "$RID_UNKNOWN"
is "unscored: a 'score' case with an error of type not_scored and the run's reason; errors=1" \
	"1|not_scored|executed, not scored|$(req "$VW" GET "/v1/m/sandbox/runs/$RID_UNKNOWN" >/dev/null; jqb .reason)|1" \
	"$(xp unscored.xml 'count(//testcase[@name="score"])')|$(xp unscored.xml 'string(//testcase[@name="score"]/error/@type)')|$(xp unscored.xml 'string(//testcase[@name="score"]/error/@message)')|$(xp unscored.xml 'string(//testcase[@name="score"]/error)')|$(xp unscored.xml 'string(//testsuite/@errors)')"

# XML special characters: a key, an ok output and a missed input with < & > " '
SPECIAL='<script>&"'"'"'</script> ]]> end'
jq -n --arg sp "$SPECIAL" '{name:"junit-escaping",
	steps:[{key:("k<&>\"'"'"'"),input:"x1"},{key:"miss",input:("in:"+$sp)}],
	mocks:[{resource:"x1",response:$sp,variant:"v<&>\"'"'"'"}]}' >special.json
SVARIANT="v<&>\"'"
req_file "$ED" POST /v1/m/sandbox/scenarios special.json
is_status "scenario with XML special characters created" 201
SSID=$(jqb .id)
req "$ED" POST "/v1/m/sandbox/scenarios/$SSID/runs" "$(jq -n --arg v "$SVARIANT" '{variant:$v}')"
is_status "run it with variant $SVARIANT" 201
is "special: the tagged mock answered step 1, step 2 missed" "1 1" "$(jqb '"\(.steps_ok) \(.steps_error)"')"
SRID=$(jqb .id)
junit_check special "$SRID"
if grep -q '<script>' special.xml; then
	not_ok "special: no raw <script> element in the XML"
else
	ok "special: no raw <script> element in the XML"
fi
is "special: two testcases" 2 "$(xp special.xml 'count(//testcase)')"
is "special: the key round-trips in the testcase name" "k<&>\"'" "$(xp special.xml 'string(//testcase[1]/@name)')"
# the export carries no output of a passing step (fcgi/export/): the
# special text reaches it through the variant (testsuite name, property),
# the key (testcase name) and the mock-miss marker (failure text)
is "special: the variant round-trips in the testsuite name" "$SSID:$SVARIANT" "$(xp special.xml 'string(//testsuite/@name)')"
is "special: the variant round-trips in its property" "$SVARIANT" "$(xp special.xml 'string(//property[@name="variant"]/@value)')"
text2=$(xp special.xml 'string(//testcase[@name="miss"]/failure)')
if [[ $text2 == *"[[mock-miss:in:$SPECIAL]]"* ]]; then
	ok "special: the mock-miss output round-trips in the failure text"
else
	not_ok "special: the mock-miss output round-trips in the failure text (got $(short "$text2"))"
fi
is "special: the miss is the only failure" "1 miss" \
	"$(xp special.xml 'string(/testsuites/@failures)') $(xp special.xml 'string(//testcase[failure]/@name)')"

# control characters cannot appear in XML 1.0, even as references: the
# export must stay well-formed and valid anyway
req "$ED" POST /v1/m/sandbox/scenarios '{"name":"junit-ctl","steps":[{"key":"ctl","input":"x3"}],"mocks":[{"resource":"x3","response":"bell\u0007 esc\u001b tab\tend"}]}'
is_status "scenario with control characters in an output created" 201
CSID=$(jqb .id)
req "$ED" POST "/v1/m/sandbox/scenarios/$CSID/runs" '{"variant":"candidate"}'
junit_check ctl "$(jqb .id)"
is "ctl: one passing testcase" "1 0" "$(xp ctl.xml 'count(//testcase)') $(xp ctl.xml 'count(//failure)')"

req "$VW" GET /v1/m/sandbox/runs/run-does-not-exist/junit
is_error "junit of an unknown run: 404" 404 not_found
show olivares sandbox runs junit run-does-not-exist
is "CLI junit of an unknown run: exit 1, nothing on stdout" "1 " "$RC $OUT"
OT=$(new_tenant_token "$(unique junit-other)" admin)
if [[ -n $OT ]]; then
	module_on "$OT" || true
	req "$OT" GET "/v1/m/sandbox/runs/$RID_J/junit"
	is_error "junit of another tenant's run: 404" 404 not_found
fi

# ---- extra stacks: no scorer wired, exec adapter ---------------------------------
# start_stack NAME CONF: a stack with CONF as its OLIVARES_CONF; sets XURL
# and XTOK (its admin token); returns 1 when it did not start. Its store is
# a SQLite file of its own, whatever the stack under test runs on: the
# executors of stacks that share one database are one pool (any of them
# claims any run, and scores it with its own [scorer]), so an extra stack
# with another scorer on the same PostgreSQL would have its runs scored by
# the other stack's executors
start_stack() {
	local dir=$E2E_TMP/stack-$1 port
	mkdir -p "$dir/data"
	printf '%s\n' "$2" >"$dir/olivares.conf"
	EXTRA_DATA+=("$dir/data")
	for _ in 1 2 3; do
		port=$(olv_free_port)
		if env -u OLIVARES_DSN OLIVARES_DATA="$dir/data" OLIVARES_PORT="$port" \
			OLIVARES_CONF="$dir/olivares.conf" "$STACK" up >"$dir/up.out" 2>&1; then
			XURL=http://127.0.0.1:$port
			XTOK=$(<"$dir/data/admin_token")
			return 0
		fi
		env -u OLIVARES_DSN OLIVARES_DATA="$dir/data" "$STACK" down >/dev/null 2>&1 || true
	done
	not_ok "stack $1 started ($(short "$(tail -n 5 "$dir/up.out")"))"
	return 1
}
stop_stack() {
	env -u OLIVARES_DSN OLIVARES_DATA="$E2E_TMP/stack-$1/data" "$STACK" down >/dev/null 2>&1 || true
}

# xrun NAME: on the extra stack, create the walkthrough and run it with
# suite walkthrough; the run is in the last body, the time in XMS
xrun() {
	local sid t0
	OLIVARES_URL=$XURL module_on "$XTOK" || return 1
	sid=$(OLIVARES_URL=$XURL walk_scenario "$XTOK")
	t0=$(date +%s%N)
	OLIVARES_URL=$XURL req "$XTOK" POST "/v1/m/sandbox/scenarios/$sid/runs" '{"variant":"candidate","suite":"walkthrough"}'
	XMS=$((($(date +%s%N) - t0) / 1000000))
	XRID=$(jqb .id)
	XSID=$sid
	is_status "$1: run with suite walkthrough: 201" 201
}

if start_stack none "[scorer]
adapter = none"; then
	# nothing can score a suite that is neither in the store nor an
	# adapter's: refused at creation, nothing queued (t1010: the store's)
	OLIVARES_URL=$XURL module_on "$XTOK"
	XSID=$(OLIVARES_URL=$XURL walk_scenario "$XTOK")
	OLIVARES_URL=$XURL req "$XTOK" POST "/v1/m/sandbox/scenarios/$XSID/runs" '{"variant":"candidate","suite":"walkthrough"}'
	is_error "no scorer: a run naming a suite the store does not have: 422" 422 invalid
	if [[ $(jqb '.error.message // ""') == *"not in the store"*"no scorer adapter is configured"* ]]; then ok "no scorer: the 422 says why"; else not_ok "no scorer: the 422 says why (got $(short "$(jqb .error.message)"))"; fi
	OLIVARES_URL=$XURL req "$XTOK" POST /v1/m/sandbox/comparisons "{\"scenario_id\":\"$XSID\",\"baseline\":\"candidate\",\"candidate\":\"candidate\",\"suite\":\"walkthrough\"}"
	is_error "no scorer: a comparison naming it: 422" 422 invalid
	OLIVARES_URL=$XURL req "$XTOK" GET "/v1/m/sandbox/runs?limit=500"
	is "no scorer: nothing was queued" 0 "$(jqb '.runs|length')"
	# a run that names no suite is executed, not scored
	OLIVARES_URL=$XURL req "$XTOK" POST "/v1/m/sandbox/scenarios/$XSID/runs" '{"variant":"candidate"}'
	is "no scorer: a run naming no suite: completed, not scored" \
		"201 completed suite=null scored=false score=null passed=null" "$STATUS $(run_fields)"
	stop_stack none
fi

# exec_case NAME FIXTURE EXPECTED-REASON-PATTERN [TIMEOUT_MS]
exec_case() {
	local name=$1 fixture=$2 pattern=$3 tmo=${4:-5000} reason
	start_stack "$name" "[scorer]
adapter = exec:$FIX/$fixture
timeout_ms = $tmo" || return 0
	xrun "exec $fixture"
	is "exec $fixture: completed, not scored, no score, no pass" \
		"completed suite=walkthrough scored=false score=null passed=null" "$(run_fields)"
	reason=$(jqb '.reason // ""')
	if [[ $reason =~ ^executed,\ not\ scored:\ $pattern ]]; then
		ok "exec $fixture: the reason is clear ($reason)"
	else
		not_ok "exec $fixture: the reason is clear (expected 'executed, not scored: $pattern', got $(short "$reason"))"
	fi
	OLIVARES_URL=$XURL req "$XTOK" GET "/v1/m/sandbox/runs/$XRID/outputs"
	is "exec $fixture: the run is still recorded with its outputs" "200 2" "$STATUS $(jqb '.outputs|length')"
	stop_stack "$name"
}

if start_stack good "[scorer]
adapter = exec:$FIX/scorer-good"; then
	xrun "exec scorer-good"
	is "exec scorer-good: scored by the external program (0.5, passed)" \
		"completed suite=walkthrough scored=true score=0.5 passed=true" "$(run_fields)"
	if [[ $(jqb '.score_details[0].message // ""') == "suite=walkthrough bytes="* ]]; then
		ok "exec scorer-good: it received the suite name on stdin"
	else
		not_ok "exec scorer-good: it received the suite name on stdin (got $(short "$(jqb .score_details)"))"
	fi
	stop_stack good
fi
XMS=999999
exec_case hang scorer-hang 'scorer timed out after 1000 ms' 1000
if ((XMS < 8000)); then ok "exec scorer-hang: the run answered in ${XMS} ms (limit 1000 ms)"; else not_ok "exec scorer-hang: the run answered in ${XMS} ms (expected well under 8 s)"; fi
exec_case crash scorer-crash 'scorer killed by SIGSEGV'
exec_case garbage scorer-garbage 'scorer answered invalid JSON'
exec_case exit3 scorer-exit3 'scorer exited with status 3'
exec_case range scorer-out-of-range 'scorer answer: '

done_testing
