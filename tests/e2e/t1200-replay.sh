#!/usr/bin/env bash
# Replay of historical sessions (docs/replay.md,
# model/history.h), through nginx with the CLI and curl, on the sessions of
# tests/fixtures/sessions:
#   replayable.json   events out of order; inputs seq 1, 5, 9 (user1, user2,
#                     user1 again), recorded tool results and outputs that
#                     the mocks reproduce: the replay matches history
#   diverging.json    the output recorded for the second input is not what
#                     the recorded tool result gives: one diverging step
#   repeated-key.json two inputs share the key "lookup": a suite keyed by it
#                     is evaluated on each (tests/fixtures/suites/README.md)
#   gap.json, duplicate-seq.json, no-input.json, unknown-kind.json
#                     timelines that cannot be rebuilt: degraded replays
#   sessions.jsonl    two sessions as JSON lines
# Shows: import (array and JSON lines, from a file and from stdin; stops at
# the first refusal), list/get (events as imported), roles, tenants, the
# end-to-end replay, divergence, each degraded case, determinism (twice,
# across a restart, across backends), the runs list filters, bad input
# writing nothing, and no PUT/DELETE on sessions.
. "$(dirname "$0")/lib.sh"
e2e_require
cd "$E2E_TMP" || exit 1

AD=$OLV_ADMIN_TOKEN
ED=$OLV_EDITOR_TOKEN
VW=$OLV_VIEWER_TOKEN
FIX=$OLV_ROOT/tests/fixtures/sessions
STACK=$OLV_ROOT/scripts/stack
EMPTY_SHA256=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
export OLIVARES_TOKEN=$ED

# whatever happens below (the restart), leave the stack up for the next test
trap '"$STACK" status >/dev/null 2>&1 || "$STACK" up >/dev/null 2>&1; rm -rf "$E2E_TMP"' EXIT

# show CMD...: print the command and its output as comments; OUT, ERR, RC
show() {
	echo "# \$ $*"
	RC=0
	OUT=$("$@" 2>"$E2E_TMP/stderr") || RC=$?
	ERR=$(cat "$E2E_TMP/stderr")
	printf '%s\n' "$OUT" | head -n 40 | sed 's/^/#   /'
	if [[ -n $ERR ]]; then printf '%s\n' "$ERR" | sed 's/^/#   stderr: /'; fi
}

# matches DESC REGEX TEXT
matches() {
	if [[ $3 =~ $2 ]]; then ok "$1"; else not_ok "$1 (expected /$2/, got $(short "$3"))"; fi
}

for f in replayable diverging gap duplicate-seq no-input unknown-kind; do
	if [[ ! -f $FIX/$f.json ]]; then
		not_ok "fixture tests/fixtures/sessions/$f.json exists"
		done_testing
	fi
done
[[ -f $FIX/sessions.jsonl ]] || {
	not_ok "fixture tests/fixtures/sessions/sessions.jsonl exists"
	done_testing
}

module_on "$AD" || exit 1

# state: scenarios, runs, audit (state_counts) and sessions of the tenant
state() {
	printf '%s sessions=%s\n' "$(state_counts "$AD")" \
		"$(count_all "$AD" /v1/m/sandbox/sessions sessions)"
}

# The recorded output of each step, computed here from a session file
# independently of the server (model/history.h): inputs in seq order, each
# answered by the last output before the next input; one line "key<TAB>text".
recorded_of() {
	jq -r '[.events|sort_by(.seq)[]] as $e
		| reduce $e[] as $ev ([]; if $ev.kind=="input" then . + [{key:($ev.key // "seq-\($ev.seq)"),out:null}]
			elif $ev.kind=="output" and length>0 then .[-1].out=$ev.text else . end)
		| .[] | "\(.key)\t\(.out)"' "$1"
}

# ---- import: one session from a file (the fixtures are one object each) ---
before_audit=$(
	req "$AD" GET '/v1/m/sandbox/audit?limit=1'
	jqb '.events[0].id'
)
show olivares sandbox sessions import --file "$FIX/replayable.json"
is "import replayable.json (editor): exit 0" 0 "$RC"
RS=$(cut -d' ' -f1 <<<"$OUT")
matches "import prints one line: id external_id events_count" '^[0-9a-f]{32} support-chat-0001 12$' "$OUT"
is "the import is audited once as sandbox.session.import" "sandbox.session.import" "$(audit_since "$AD" "$before_audit")"
req "$AD" GET '/v1/m/sandbox/audit?limit=1'
is "its audit detail is the event count only" '{"events":12}|'"$RS" "$(jqb '"\(.events[0].detail|tojson)|\(.events[0].target_id)"')"

# ---- get: the events exactly as imported (out of order, as recorded) ------
req "$VW" GET "/v1/m/sandbox/sessions/$RS"
is_status "viewer GET /sessions/ID: 200" 200
is "GET /sessions/ID: the contract's keys" '["created_at","events","events_count","external_id","id"]' "$(jqb 'keys|tojson')"
is "GET /sessions/ID: the events as imported, in the file's order" "$(jq -c .events "$FIX/replayable.json")" "$(jqb '.events|tojson')"
is "GET /sessions/ID: external_id and events_count" "support-chat-0001 12" "$(jqb '"\(.external_id) \(.events_count)"')"
show olivares sandbox sessions get "$RS" --token "$VW"
is "sessions get (viewer): exit 0" 0 "$RC"
is "sessions get table: events in the file's order (seq column)" "5 1 3 2 4 8 7 6 9 11 10 12" \
	"$(sed -n '/^SEQ /,$p' <<<"$OUT" | tail -n +2 | awk '{print $1}' | tr '\n' ' ' | sed 's/ $//')"
if grep -Eq '^1 +input +first-lookup +- +agent:user1@example\.test$' <<<"$OUT"; then
	ok "sessions get table: an input row (SEQ KIND KEY RESOURCE TEXT)"
else
	not_ok "sessions get table: an input row (got $(short "$OUT"))"
fi
show olivares sandbox sessions get "$RS" -o json
is "sessions get -o json is the API's answer" "$(jq -cS . "$BODY_FILE")" "$(jq -cS . <<<"$OUT" 2>/dev/null)"

# ---- import: a JSON array, from a file and from stdin ---------------------
jq -s . "$FIX/diverging.json" "$FIX/gap.json" "$FIX/duplicate-seq.json" \
	"$FIX/no-input.json" "$FIX/unknown-kind.json" >array.json
show olivares sandbox sessions import --file array.json -o json
is "import a JSON array of 5 sessions from a file: exit 0" 0 "$RC"
is "-o json: the 5 answers, in the array's order" \
	"support-chat-0002:11 support-chat-gap:3 support-chat-duplicate-seq:4 support-chat-no-input:3 support-chat-unknown-kind:4" \
	"$(jq -r '[.[]|"\(.external_id):\(.events_count)"]|join(" ")' <<<"$OUT" 2>/dev/null)"
is "-o json: each answer has exactly {id,external_id,events_count,created_at}" \
	'["created_at","events_count","external_id","id"]' "$(jq -c '[.[]|keys]|unique|.[0]' <<<"$OUT" 2>/dev/null)"
DS=$(jq -r '.[0].id' <<<"$OUT")
declare -A BROKEN
BROKEN[gap]=$(jq -r '.[1].id' <<<"$OUT")
BROKEN[duplicate-seq]=$(jq -r '.[2].id' <<<"$OUT")
BROKEN[no-input]=$(jq -r '.[3].id' <<<"$OUT")
BROKEN[unknown-kind]=$(jq -r '.[4].id' <<<"$OUT")
req "$VW" GET "/v1/m/sandbox/sessions/${BROKEN[duplicate-seq]}"
is "a broken history is kept as recorded (duplicate seq)" "$(jq -c .events "$FIX/duplicate-seq.json")" "$(jqb '.events|tojson')"

printf '  [%s,\n%s]\n' "$(jq -c . "$FIX/gap.json")" "$(jq -c . "$FIX/replayable.json")" >array2.json
show olivares sandbox sessions import --file - <array2.json
is "import a JSON array from stdin: exit 0" 0 "$RC"
is "stdin array: one line per session" "support-chat-gap 3|support-chat-0001 12" \
	"$(cut -d' ' -f2- <<<"$OUT" | paste -sd'|')"

# ---- import: JSON lines, from a file and from stdin -----------------------
show olivares sandbox sessions import --file "$FIX/sessions.jsonl"
is "import JSON lines from a file: exit 0" 0 "$RC"
is "JSON lines: one line per session" "import-line-1 3|import-line-2 5" "$(cut -d' ' -f2- <<<"$OUT" | paste -sd'|')"
J2=$(sed -n 2p <<<"$OUT" | cut -d' ' -f1)
req "$VW" GET "/v1/m/sandbox/sessions/$J2"
is "JSON lines: line 2's events as imported" "$(sed -n 2p "$FIX/sessions.jsonl" | jq -c .events)" "$(jqb '.events|tojson')"
{
	echo
	cat "$FIX/sessions.jsonl"
	echo '   '
} >lines-blank.jsonl
show olivares sandbox sessions import --file - -o json <lines-blank.jsonl
is "import JSON lines from stdin (blank lines skipped): exit 0, 2 sessions" "0 import-line-1 import-line-2" \
	"$RC $(jq -r '[.[].external_id]|join(" ")' <<<"$OUT" 2>/dev/null)"

# ---- import stops at the first refusal; a broken file sends nothing -------
STOP=$(unique stop)
{
	jq -c --arg s "$STOP" '.external_id="\($s)-1"' "$FIX/gap.json"
	jq -c --arg s "$STOP" '.external_id="\($s)-2"|.surprise=true' "$FIX/gap.json"
	jq -c --arg s "$STOP" '.external_id="\($s)-3"' "$FIX/gap.json"
} >stop.jsonl
show olivares sandbox sessions import --file stop.jsonl
is "import with a refused line 2: exit 1" 1 "$RC"
matches "the refusal names line 2 and says what was imported" 'line 2 \(session 2 of 3\) was not imported; 1 imported before it' "$ERR"
matches "the server's refusal is reported (HTTP 400)" 'HTTP 400' "$ERR"
matches "stdout lists only line 1's session" "^[0-9a-f]{32} $STOP-1 3\$" "$OUT"
req "$VW" GET '/v1/m/sandbox/sessions?limit=500'
is "line 1 imported, lines 2 and 3 not" "$STOP-1" "$(jqb "[.sessions[].external_id|select(startswith(\"$STOP-\"))]|join(\" \")")"
before=$(state)
printf '%s\n%s\n{"external_id":"x",\n' "$(jq -c . "$FIX/gap.json")" "$(jq -c . "$FIX/gap.json")" >broken.jsonl
show olivares sandbox sessions import --file broken.jsonl
is "a file with invalid JSON on line 3: exit 1" 1 "$RC"
matches "the message names the file and line 3" 'broken\.jsonl: line 3: invalid JSON' "$ERR"
printf '[%s, 7]' "$(jq -c . "$FIX/gap.json")" >not-object.json
show olivares sandbox sessions import --file - <not-object.json
matches "an array element that is not an object: exit 1, index 1 named" '^1 .*<stdin>: index 1: a session must be a JSON object' "$RC $ERR"
is "a broken file imports nothing (nothing is sent)" "$before" "$(state)"

# ---- list ---------------------------------------------------------------
req "$VW" GET '/v1/m/sandbox/sessions?limit=2'
is_status "viewer GET /sessions: 200" 200
is "list: limit=2 gives 2, newest first" "$STOP-1 import-line-2" \
	"$(jqb '[.sessions[].external_id]|join(" ")')"
is "list items: {id,external_id,events_count,created_at}" '["created_at","events_count","external_id","id"]' \
	"$(jqb '[.sessions[]|keys]|unique|.[0]|tojson')"
show olivares sandbox sessions list --limit 500 --token "$VW"
is "sessions list (viewer): exit 0, header" "0 ID EXTERNAL_ID EVENTS CREATED_AT" "$RC $(head -n 1 <<<"$OUT" | tr -s ' ')"
if grep -Eq "^$RS +support-chat-0001 +12 +20" <<<"$OUT"; then ok "sessions list table: the replayable session's row"; else not_ok "sessions list table: the replayable session's row (got $(short "$OUT"))"; fi
show olivares sandbox sessions list --limit 1 --offset 1 -o json
is "sessions list --limit 1 --offset 1: the second newest" "import-line-2" "$(jq -r '.sessions|map(.external_id)|join(" ")' <<<"$OUT" 2>/dev/null)"

# ---- end-to-end replay: the outputs match the recorded ones ---------------
before_audit=$(
	req "$AD" GET '/v1/m/sandbox/audit?limit=1'
	jqb '.events[0].id'
)
req "$ED" POST /v1/m/sandbox/replays "{\"session_id\":\"$RS\",\"variant\":\"candidate\"}"
is_status "POST /replays (editor): 201" 201
cp "$BODY_FILE" replay1.json
R1=$(jq -r .id replay1.json)
jr() { jq -r "$1" replay1.json; }
is "replay: kind replay, session_id, scenario_id null, variant" "replay $RS null candidate" \
	"$(jr '"\(.kind) \(.session_id) \(.scenario_id) \(.variant)"')"
is "replay: completed, 3 steps (the inputs at seq 1, 5, 9), 3 ok, 0 errors" "completed 3 3 0" \
	"$(jr '"\(.status) \(.steps_total) \(.steps_ok) \(.steps_error)"')"
is "replay: inproc-mock, isolated and destroyed like any run" "inproc-mock true true" \
	"$(jr '"\(.backend) \(.isolated) \(.destroyed)"')"
is "replay: divergence compared 3, diverging 0, first null" '{"compared":3,"diverging":0,"first":null}' \
	"$(jq -c .divergence replay1.json)"
matches "replay: a 64-hex output_digest" '^[0-9a-f]{64}$' "$(jr .output_digest)"
isnt "replay: the digest is not the digest of nothing" "$EMPTY_SHA256" "$(jr .output_digest)"
is "the replay is audited through the run (sandbox.run, with the session)" "sandbox.run" "$(audit_since "$AD" "$before_audit")"
req "$AD" GET '/v1/m/sandbox/audit?limit=1'
is "its audit event names the run and the session" "$R1 $RS" "$(jqb '"\(.events[0].target_id) \(.events[0].detail.session_id)"')"
req "$VW" GET "/v1/m/sandbox/runs/$R1"
is "GET /runs/ID is the POST's answer" "$(jq -cS . replay1.json)" "$(jq -cS . "$BODY_FILE")"
req "$VW" GET "/v1/m/sandbox/runs/$R1/outputs"
is "outputs: steps keyed by the input's key or seq-<seq>, inputs in seq order" \
	"1 first-lookup agent:user1@example.test|2 seq-5 agent:user2@example.test|3 seq-9 agent:user1@example.test" \
	"$(jqb '[.outputs[]|"\(.seq) \(.key) \(.input)"]|join("|")')"
is "outputs: each replayed output is the recorded one (computed from the file)" \
	"$(recorded_of "$FIX/replayable.json")" "$(jqb '.outputs[]|"\(.key)\t\(.output)"')"
is "outputs: the recorded texts" "first synthetic account|second synthetic account|first synthetic account" \
	"$(jqb '[.outputs[].output]|join("|")')"

show olivares sandbox replay "$RS" --variant candidate
is "olivares sandbox replay (table): exit 0" 0 "$RC"
if grep -Eq '^kind +replay$' <<<"$OUT" && grep -Eq '^status +completed$' <<<"$OUT" &&
	grep -Eq "^session_id +$RS$" <<<"$OUT"; then
	ok "replay table: the run's fields"
else
	not_ok "replay table: the run's fields (got $(short "$OUT"))"
fi
is "replay table: the divergence block" "divergence:|compared 3|diverging 0|first -" \
	"$(sed -n '/^divergence:/,$p' <<<"$OUT" | tr -s ' ' | paste -sd'|')"
is "replay table: the same digest as the first replay" "$(jr .output_digest)" "$(grep '^output_digest ' <<<"$OUT" | tr -s ' ' | cut -d' ' -f2)"

# a replay's JUnit: the session names the suite (no scenario), session_id a property
show olivares sandbox runs junit "$R1"
printf '%s\n' "$OUT" >replay1.xml
is "replay JUnit: suite session-<id>:<variant>, classname, property session_id" \
	"session-$RS:candidate olivares.sandbox.session-$RS $RS" \
	"$(xmllint --xpath 'string(//testsuite/@name)' replay1.xml 2>/dev/null) $(xmllint --xpath 'string(//testcase[1]/@classname)' replay1.xml 2>/dev/null) $(xmllint --xpath 'string(//property[@name="session_id"]/@value)' replay1.xml 2>/dev/null)"
if xmllint --noout --schema "$OLV_ROOT/tests/fixtures/junit.xsd" replay1.xml 2>/dev/null; then
	ok "replay JUnit: valid against tests/fixtures/junit.xsd"
else
	not_ok "replay JUnit: valid against tests/fixtures/junit.xsd"
fi

# ---- the same digest twice ------------------------------------------------
show olivares sandbox replay "$RS" --variant candidate -o json
printf '%s\n' "$OUT" >replay2.json
is "replay again -o json: exit 0, a new run" "0 true" "$RC $(jq -r --arg a "$R1" '.id != $a' replay2.json 2>/dev/null)"
is "the same session and variant twice: the same output_digest" "$(jr .output_digest)" "$(jq -r .output_digest replay2.json 2>/dev/null)"
is "and the same divergence" "$(jq -c .divergence replay1.json)" "$(jq -c .divergence replay2.json 2>/dev/null)"

# ---- divergence: the second step's recorded output differs ----------------
show olivares sandbox replay "$DS" --variant candidate -o json
is "replay diverging.json: exit 0, completed, 3 steps" "0 completed 3" "$RC $(jq -r '"\(.status) \(.steps_total)"' <<<"$OUT" 2>/dev/null)"
is "divergence: compared 3, diverging 1" "3 1" "$(jq -r '"\(.divergence.compared) \(.divergence.diverging)"' <<<"$OUT" 2>/dev/null)"
is "divergence: the first diverging step with both texts" \
	'{"key":"seq-5","recorded":"second synthetic account, as the old agent worded it","replayed":"second synthetic account","seq":2}' \
	"$(jq -cS .divergence.first <<<"$OUT" 2>/dev/null)"
DRUN=$(jq -r .id <<<"$OUT")
req "$VW" GET "/v1/m/sandbox/runs/$DRUN/outputs"
is "diverging: the replayed output of step 2 is the one in first.replayed" "second synthetic account" "$(jqb '.outputs[1].output')"
show olivares sandbox replay "$DS"
is "replay table of a diverging session" \
	"divergence:|compared 3|diverging 1|first_seq 2|first_key seq-5|first_recorded second synthetic account, as the old agent worded it|first_replayed second synthetic account" \
	"$(sed -n '/^divergence:/,$p' <<<"$OUT" | sed 's/^\([a-z_]*\)  */\1 /' | paste -sd'|')"

# ---- a key the history repeats: a suite's key expectation applies to each ---
# repeated-key.json: two inputs keyed "lookup" (keys are replayed as
# recorded); suite replay-lookup: "lookup" equals the first step's output.
# Every "lookup" step is evaluated: 1 of 2 holds, 0.5, not passed (scoring
# only the first would pass it; tests/fixtures/suites/README.md).
if [[ -n ${OLV_SUITES_DIR:-} && -f ${OLV_SUITES_DIR}/replay-lookup.json && -f $FIX/repeated-key.json ]]; then
	req "$ED" POST /v1/m/sandbox/sessions "$(cat "$FIX/repeated-key.json")"
	is_status "import repeated-key.json: 201" 201
	KS=$(jqb .id)
	req "$ED" POST /v1/m/sandbox/replays "{\"session_id\":\"$KS\",\"variant\":\"candidate\",\"suite\":\"replay-lookup\"}"
	is "repeated key: replayed, two steps both keyed lookup" "201 completed 2" "$STATUS $(jqb '"\(.status) \(.steps_total)"')"
	is "repeated key: scored, 0.5, not passed (each lookup step counts)" \
		"suite=replay-lookup scored=true score=0.5 passed=false reason=null" \
		"$(jqb '"suite=\(.suite) scored=\(.scored) score=\(.score) passed=\(.passed) reason=\(.reason)"')"
	is "repeated key: one detail per lookup step, in step order" \
		"1 lookup true output equals the expected text|2 lookup false output differs from the expected text" \
		"$(jqb '[.score_details[]|"\(.seq) \(.key) \(.passed) \(.message)"]|join("|")')"
	KRUN=$(jqb .id)
	show olivares sandbox runs junit "$KRUN"
	printf '%s\n' "$OUT" >repeated-key.xml
	is "repeated key JUnit: 2 tests, the second lookup fails on the expectation" "2 1 1" \
		"$(xmllint --xpath 'string(//testsuite/@tests)' repeated-key.xml 2>/dev/null) $(xmllint --xpath 'count(//testcase[2]/failure[@type="expectation"])' repeated-key.xml 2>/dev/null) $(xmllint --xpath 'count(//testcase[1])-count(//testcase[1]/failure)' repeated-key.xml 2>/dev/null)"
else
	echo "# skip - repeated key scoring: this stack was not started by run.sh --fresh"
fi

# ---- degraded: the timeline cannot be rebuilt ------------------------------
declare -A WHY
WHY[gap]='seq 3 is missing (between 2 and 4)'
WHY[duplicate-seq]='events 2 and 4 share seq 2'
WHY[no-input]='session has no input'
WHY[unknown-kind]='event 2 (seq 2) has unknown kind "thought"'
for k in gap duplicate-seq no-input unknown-kind; do
	req "$ED" POST /v1/m/sandbox/replays "{\"session_id\":\"${BROKEN[$k]}\",\"variant\":\"candidate\"}"
	is_status "$k: POST /replays is still 201 (the run exists)" 201
	cp "$BODY_FILE" "degraded-$k.json"
	is "$k: degraded, zero steps, runner none, isolated and destroyed false, no divergence" \
		"degraded 0 0 0 none inproc-mock false false null" \
		"$(jqb '"\(.status) \(.steps_total) \(.steps_ok) \(.steps_error) \(.runner) \(.backend) \(.isolated) \(.destroyed) \(.divergence)"')"
	is "$k: the reason names the broken event" "timeline cannot be rebuilt: ${WHY[$k]}" "$(jqb .reason)"
	is "$k: output_digest is the SHA-256 of nothing" "$EMPTY_SHA256" "$(jqb .output_digest)"
	req "$VW" GET "/v1/m/sandbox/runs/$(jq -r .id "degraded-$k.json")/outputs"
	is "$k: no outputs" "200 []" "$STATUS $(jqb '.outputs|tojson')"
done
show olivares sandbox replay "${BROKEN[gap]}"
is "replay table of a degraded replay: exit 0, status and reason, no divergence" \
	"0|degraded|timeline cannot be rebuilt: seq 3 is missing (between 2 and 4)|divergence: - (nothing replayed)" \
	"$RC|$(grep '^status ' <<<"$OUT" | tr -s ' ' | cut -d' ' -f2)|$(grep '^reason ' <<<"$OUT" | sed 's/^reason  *//')|$(grep '^divergence' <<<"$OUT")"
is "a degraded replay: the CLI says so on stderr, with the reason" \
	"olivares: run $(grep '^id ' <<<"$OUT" | tr -s ' ' | cut -d' ' -f2) degraded: timeline cannot be rebuilt: seq 3 is missing (between 2 and 4)" "$ERR"
req "$VW" GET /v1/m/sandbox/backends
ns=$(jqb '.backends[]|select(.name=="namespaces")|"\(.allowed) \(.preflight.ok)"')
if [[ $ns == "true true" ]]; then
	req "$ED" POST /v1/m/sandbox/replays "{\"session_id\":\"${BROKEN[gap]}\",\"backend\":\"namespaces\"}"
	is "degraded on namespaces: backend is the one that would have run, isolated false" \
		"201 degraded 0 none namespaces false" \
		"$STATUS $(jqb '"\(.status) \(.steps_total) \(.runner) \(.backend) \(.isolated)"')"
fi

# ---- the same digest on namespaces as on inproc-mock -----------------------
if [[ $ns == "true true" ]]; then
	show olivares sandbox replay "$RS" --variant candidate --backend namespaces -o json
	is "replay on namespaces: completed, 3 steps, isolated, backend namespaces" "0 completed 3 true namespaces" \
		"$RC $(jq -r '"\(.status) \(.steps_total) \(.isolated) \(.backend)"' <<<"$OUT" 2>/dev/null)"
	is "namespaces gives the same digest as inproc-mock" "$(jr .output_digest)" "$(jq -r .output_digest <<<"$OUT" 2>/dev/null)"
	is "and the same divergence" "$(jq -c .divergence replay1.json)" "$(jq -c .divergence <<<"$OUT" 2>/dev/null)"
else
	echo "# skip - namespaces is '$ns' (allowed, preflight) for this tenant on this host"
fi

# ---- --scenario: its mocks come after the session's results ----------------
req "$ED" POST /v1/m/sandbox/scenarios '{"name":"replay-extra-mocks","steps":[{"key":"k","input":"x"}],"mocks":[{"resource":"agent:user1@example.test","response":"from the scenario 1"},{"resource":"agent:user3@example.test","response":"from the scenario 3"}]}'
is_status "a scenario with mocks for user1 and user3" 201
XS=$(jqb .id)
printf '%s\n' '{"external_id":"needs-scenario","events":[{"seq":1,"kind":"input","text":"agent:user1@example.test"},{"seq":2,"kind":"tool_result","resource":"agent:user1@example.test","text":"first synthetic account"},{"seq":3,"kind":"input","text":"agent:user3@example.test"}]}' >needs.json
NS=$(olivares sandbox sessions import --file needs.json | cut -d' ' -f1)
req "$ED" POST /v1/m/sandbox/replays "{\"session_id\":\"$NS\"}"
is "without --scenario: completed, user3 is a mock miss" "201 completed 1 1" \
	"$STATUS $(jqb '"\(.status) \(.steps_ok) \(.steps_error)"')"
req "$VW" GET "/v1/m/sandbox/runs/$(jqb .id)/outputs"
is "without --scenario: user3 has no recorded result" \
	"first synthetic account|[[mock-miss:agent:user3@example.test]]" "$(jqb '[.outputs[].output]|join("|")')"
show olivares sandbox replay "$NS" --scenario "$XS" -o json
is "with --scenario: scenario_id recorded, 2 steps ok" "0 $XS completed 2 0" \
	"$RC $(jq -r '"\(.scenario_id) \(.status) \(.steps_ok) \(.steps_error)"' <<<"$OUT" 2>/dev/null)"
req "$VW" GET "/v1/m/sandbox/runs/$(jq -r .id <<<"$OUT")/outputs"
is "with --scenario: the session's result wins for user1, the scenario answers user3" \
	"first synthetic account|from the scenario 3" "$(jqb '[.outputs[].output]|join("|")')"

req "$ED" POST "/v1/m/sandbox/scenarios/$XS/runs" '{}'
is "a simulation run also carries session_id and divergence, both null" "201 simulation null null" \
	"$STATUS $(jqb '"\(.kind) \(.session_id) \(.divergence) \(has("session_id") and has("divergence"))"' | sed 's/ true$//')"

# ---- runs list --kind / --session ------------------------------------------
req "$VW" GET "/v1/m/sandbox/runs?kind=replay&session=$RS&limit=500"
is_status "GET /runs?kind=replay&session=ID: 200" 200
NR=$(jqb '.runs|length')
is "every run listed is a replay of that session" "replay $RS" "$(jqb '[.runs[]|"\(.kind) \(.session_id)"]|unique|join(",")')"
is "it lists the replays made of it (the first is there)" true "$(jqb "[.runs[].id]|index(\"$R1\") != null")"
show olivares sandbox runs list --kind replay --session "$RS" --limit 500 -o json
is "runs list --kind replay --session ID: the same runs" "$(jq -c '[.runs[].id]' "$BODY_FILE")" "$(jq -c '[.runs[].id]' <<<"$OUT" 2>/dev/null)"
show olivares sandbox runs list --session "$RS" --limit 500
is "runs list table: a KIND column, replay for each run of the session" "KIND replay" \
	"$(head -n 1 <<<"$OUT" | awk '{print $NF}') $(tail -n +2 <<<"$OUT" | awk '{print $NF}' | sort -u | paste -sd,)"
is "runs list table: as many rows as replays" "$NR" "$(tail -n +2 <<<"$OUT" | wc -l | tr -d ' ')"
req "$VW" GET "/v1/m/sandbox/runs?kind=simulation&session=$RS"
is "kind=simulation&session=ID: none" "200 0" "$STATUS $(jqb '.runs|length')"
req "$VW" GET "/v1/m/sandbox/runs?kind=simulation&limit=500"
is "kind=simulation: no replay listed" "" "$(jqb '.runs[]|select(.kind!="simulation")|.id')"
req "$VW" GET "/v1/m/sandbox/runs?kind=replay&session=${BROKEN[gap]}"
is "kind=replay&session=<gap>: its degraded replays" "degraded" "$(jqb '[.runs[].status]|unique|join(",")')"

# ---- roles: a viewer reads, but neither imports nor replays -----------------
before=$(state)
req "$VW" POST /v1/m/sandbox/sessions "$(jq -c . "$FIX/gap.json")"
is_error "viewer POST /sessions: 403 forbidden" 403 forbidden
req "$VW" POST /v1/m/sandbox/replays "{\"session_id\":\"$RS\"}"
is_error "viewer POST /replays: 403 forbidden" 403 forbidden
show olivares sandbox sessions import --file "$FIX/gap.json" --token "$VW"
is "viewer sessions import: exit 1, the 403 reported" "1 yes" "$RC $([[ $ERR == *"HTTP 403"* ]] && echo yes)"
show olivares sandbox replay "$RS" --token "$VW"
is "viewer replay: exit 1, the 403 reported" "1 yes" "$RC $([[ $ERR == *"HTTP 403"* ]] && echo yes)"
req "" POST /v1/m/sandbox/replays "{\"session_id\":\"$RS\"}"
is_status "no token POST /replays: 401" 401
is "refused requests change nothing (scenarios, runs, audit, sessions)" "$before" "$(state)"

# ---- tenants: another tenant sees none of it ----------------------------------
OT=$(new_tenant_token "$(unique replay-other)" admin)
if [[ -z $OT ]]; then
	not_ok "another tenant's admin token created"
else
	module_on "$OT" || true
	before=$(state)
	req "$OT" GET "/v1/m/sandbox/sessions/$RS"
	is_error "another tenant GET /sessions/ID: 404" 404 not_found
	req "$OT" POST /v1/m/sandbox/replays "{\"session_id\":\"$RS\"}"
	is_error "another tenant POST /replays of our session: 404" 404 not_found
	req "$OT" GET "/v1/m/sandbox/runs/$R1"
	is_error "another tenant GET our replay run: 404" 404 not_found
	req "$OT" GET "/v1/m/sandbox/runs/$R1/outputs"
	is_error "another tenant GET our replay's outputs: 404" 404 not_found
	req "$OT" GET "/v1/m/sandbox/sessions"
	is "another tenant lists no session of ours" "200 0" "$STATUS $(jqb '.sessions|length')"
	req "$OT" GET "/v1/m/sandbox/runs?session=$RS"
	is "another tenant: runs?session=<ours> lists nothing" "200 0" "$STATUS $(jqb '.runs|length')"
	show olivares sandbox replay "$RS" --token "$OT"
	is "olivares sandbox replay of another tenant's session: exit 1, 404" "1 yes" "$RC $([[ $ERR == *"HTTP 404"* ]] && echo yes)"
	is "the CLI names what was not found: the session, the same as for one that never was" \
		"olivares: session not found (not_found, HTTP 404)|olivares: field: session_id" "$(paste -sd'|' <<<"$ERR")"
	show olivares sandbox replay "$(repeat_char 0 32)" --token "$OT"
	is "a session id that names nothing: the same answer" \
		"olivares: session not found (not_found, HTTP 404)|olivares: field: session_id" "$(paste -sd'|' <<<"$ERR")"
	show olivares sandbox replay "$RS" --scenario "$(repeat_char 0 32)"
	is "replay --scenario naming no scenario: exit 1, 'scenario not found', the field named" \
		"1 olivares: scenario not found (not_found, HTTP 404)|olivares: field: scenario_id" "$RC $(paste -sd'|' <<<"$ERR")"
	show olivares --url "$OLIVARES_URL/v1" sandbox replay "$RS"
	is "a base URL ending in /v1: the CLI says what it asked for and why it is wrong" \
		"olivares: asked for $OLIVARES_URL/v1/v1/m/sandbox/replays (--url / OLIVARES_URL is the server's root, without /v1)" \
		"$(sed -n 2p <<<"$ERR")"
	req "$OT" GET "/v1/m/sandbox/runs?limit=500"
	is "the other tenant recorded no run either" "200 0" "$STATUS $(jqb '.runs|length')"
	is "and nothing changed in ours" "$before" "$(state)"
fi

# ---- bad input writes nothing --------------------------------------------------
before=$(state)
bad_replay() {
	req "$ED" POST /v1/m/sandbox/replays "$2"
	is_client_error "POST /replays $1: $3" "$3"
}
bad_replay "not JSON" "{\"session_id\":\"$RS\"" 400
bad_replay "without session_id" '{"variant":"candidate"}' 400
bad_replay "session_id a number" '{"session_id":5}' 400
bad_replay "unknown field" "{\"session_id\":\"$RS\",\"steps\":[]}" 400
bad_replay "variant a number" "{\"session_id\":\"$RS\",\"variant\":3}" 400
req "$ED" POST /v1/m/sandbox/replays '{"session_id":"0123456789abcdef0123456789abcdef"}'
is_error "POST /replays of an unknown session: 404" 404 not_found
req "$ED" POST /v1/m/sandbox/replays '{"session_id":"../etc"}'
is_one_of "POST /replays with a session id that is no id: 400/404/422" "$STATUS" 400 404 422
req "$ED" POST /v1/m/sandbox/replays "{\"session_id\":\"$RS\",\"backend\":\"no-such-backend\"}"
is_one_of "unknown backend: 400 or 422" "$STATUS" 400 422
req "$ED" POST /v1/m/sandbox/replays "{\"session_id\":\"$RS\",\"variant\":\"profile\"}"
is_error "an agent program on inproc-mock: 422 invalid (same checks as a run)" 422 invalid
req "$ED" POST /v1/m/sandbox/replays "{\"session_id\":\"$RS\",\"suite\":\"../x\"}"
is_client_error "a malformed suite name: 422" 422
req "$ED" POST /v1/m/sandbox/replays "{\"session_id\":\"$RS\",\"scenario_id\":\"0123456789abcdef0123456789abcdef\"}"
is_error "an unknown scenario: 404" 404 not_found
bad_session() {
	req "$ED" POST /v1/m/sandbox/sessions "$2"
	is_client_error "POST /sessions $1: $3" "$3"
}
bad_session "not JSON" '{"external_id":"x","events":[' 400
bad_session "unknown field" '{"external_id":"x","events":[],"id":"mine"}' 400
bad_session "unknown event field" '{"external_id":"x","events":[{"seq":1,"kind":"input","text":"a","extra":1}]}' 400
bad_session "without external_id" '{"events":[]}' 400
bad_session "events not an array" '{"external_id":"x","events":{}}' 400
bad_session "external_id of 129 bytes" "{\"external_id\":\"$(repeat_char e 129)\",\"events\":[]}" 422
bad_session "1001 events" "{\"external_id\":\"x\",\"events\":$(jq -cn '[range(1001)|{seq:(.+1),kind:"input",text:"a"}]')}" 422
bad_session "a kind of 33 bytes" "{\"external_id\":\"x\",\"events\":[{\"seq\":1,\"kind\":\"$(repeat_char k 33)\"}]}" 422
bad_session "an input text of 8193 bytes" "{\"external_id\":\"x\",\"events\":[{\"seq\":1,\"kind\":\"input\",\"text\":\"$(repeat_char a 8193)\"}]}" 422
is "bad input changed nothing (scenarios, runs, audit, sessions)" "$before" "$(state)"

# ---- sessions are append-only: no PUT, no DELETE -------------------------------
before=$(state)
is_append_only "$AD" "$VW" /v1/m/sandbox/sessions "$RS" session \
	'{"external_id":"rewritten","events":[]}' '{"external_id":"rewritten","events":[]}'
is "nothing else changed either" "$before" "$(state)"

# ---- the same digest across a restart -------------------------------------------
req "$VW" GET "/v1/m/sandbox/runs/$R1"
jq -S . "$BODY_FILE" >run-before.json
req "$VW" GET "/v1/m/sandbox/sessions/$RS"
doc_before=$(jq -cS . "$BODY_FILE")
if "$STACK" down >down.out 2>&1; then ok "scripts/stack down"; else not_ok "scripts/stack down ($(cat down.out))"; fi
if "$STACK" up >up.out 2>&1; then ok "scripts/stack up again"; else not_ok "scripts/stack up again ($(tail -n 20 up.out))"; fi
req "$VW" GET "/v1/m/sandbox/runs/$R1"
is "after the restart: the first replay's run is unchanged" "$(cat run-before.json)" "$(jq -S . "$BODY_FILE")"
req "$VW" GET "/v1/m/sandbox/sessions/$RS"
is "after the restart: the session is unchanged" "$doc_before" "$(jq -cS . "$BODY_FILE")"
show olivares sandbox replay "$RS" --variant candidate -o json
is "after the restart: replay again, exit 0" 0 "$RC"
is "after the restart: the same output_digest" "$(jr .output_digest)" "$(jq -r .output_digest <<<"$OUT" 2>/dev/null)"
is "after the restart: the same divergence" "$(jq -c .divergence replay1.json)" "$(jq -c .divergence <<<"$OUT" 2>/dev/null)"

# ---- CLI: help and usage ---------------------------------------------------------
for c in "sessions import" "sessions list" "sessions get" "replay"; do
	# shellcheck disable=SC2086 # c is two words on purpose
	show olivares sandbox $c --help
	if [[ $RC == 0 && $OUT == Usage:* ]]; then ok "olivares sandbox $c --help"; else not_ok "olivares sandbox $c --help (exit $RC)"; fi
done
show olivares sandbox runs list --help
matches "runs list --help lists --kind and --session" '--kind K.*--session ID' "$(tr '\n' ' ' <<<"$OUT")"
show olivares sandbox replay
is "replay without SESSION: usage error, exit 2" "2 yes" "$RC $([[ $ERR == *"missing SESSION"* ]] && echo yes)"
show olivares sandbox sessions import
is "import without --file: usage error, exit 2" 2 "$RC"
show olivares sandbox sessions get 0123456789abcdef0123456789abcdef
is "sessions get of an unknown id: exit 1, 404" "1 yes" "$RC $([[ $ERR == *"HTTP 404"* ]] && echo yes)"
show olivares sandbox sessions import --file does-not-exist.json
is "import of a missing file: exit 1, named" "1 yes" "$RC $([[ $ERR == *does-not-exist.json* ]] && echo yes)"

done_testing
