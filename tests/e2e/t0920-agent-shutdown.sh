#!/usr/bin/env bash
# An agent that outlives its exit grace is recorded, not hidden (the run's
# shutdown note). run.sh --fresh provisions "linger" in the agents directory: a shell
# script that answers every step, then ignores the end of its input
# (sleeps). Its run on namespaces (and gvisor where this host runs it) is
# completed, every output stands, reason stays null, and the run's
# shutdown note says the agent had to be killed at the end of its 1000 ms
# grace: in the API's answer, in the stored run, on the CLI's stderr, in
# the JUnit export's properties and on the admin view's run page. A well-behaved agent (the built-in mock
# agent) and an inproc-mock run get shutdown null.
# A comparison whose candidate (or baseline) is the linger agent carries
# that side's note (API, `compare` and `gate` on stderr with their exit
# status and verdict line unchanged, the admin comparison page); one of two
# well-behaved sides has null and says nothing.
. "$(dirname "$0")/lib.sh"
e2e_require
cd "$E2E_TMP" || exit 1
M=/v1/m/sandbox
NOTE="agent did not exit within its 1000 ms grace after the end of its input: killed"

need_os_agent linger "agent shutdown"
module_on "$OLV_ADMIN_TOKEN" || exit 1
ED=$OLV_EDITOR_TOKEN

req "$ED" POST $M/scenarios '{"name":"shutdown","steps":[{"key":"a","input":"agent:user1@example.test"},{"key":"b","input":"agent:user2@example.test"}],"mocks":[{"resource":"agent:user1@example.test","response":"first synthetic account"}]}'
is_status "a two-step scenario" 201
SID=$(jqb '.id // empty')

# run_on BACKEND VARIANT: POST a run; RUN is its answer, RID its id
run_on() {
	if [[ -n $2 ]]; then
		req "$ED" POST "$M/scenarios/$SID/runs" "{\"backend\":\"$1\",\"variant\":\"$2\"}"
	else
		req "$ED" POST "$M/scenarios/$SID/runs" "{\"backend\":\"$1\"}"
	fi
	RUN=$BODY
	RID=$(jqb '.id // empty')
}

os_backends
for b in $OS_BACKENDS; do
	run_on "$b" linger
	is_status "$b: the linger agent's run is recorded" 201
	is "$b: completed 2/2/0, isolated, destroyed, reason null" "completed 2 2 0 true true null" \
		"$(jq -r '"\(.status) \(.steps_total) \(.steps_ok) \(.steps_error) \(.isolated) \(.destroyed) \(.reason)"' <<<"$RUN")"
	is "$b: the shutdown note says it was killed at the end of its grace" "$NOTE" \
		"$(jq -r '.shutdown' <<<"$RUN")"
	req "$OLV_VIEWER_TOKEN" GET "$M/runs/$RID/outputs"
	is "$b: every output stands" "answered|ok answered|ok" \
		"$(jqb '[.outputs[]|"\(.output)|\(.status)"]|join(" ")')"
	req "$OLV_VIEWER_TOKEN" GET "$M/runs/$RID"
	is "$b: the stored run has the same note" "$NOTE" "$(jqb .shutdown)"
	# the well-behaved built-in mock agent on the same backend: none
	run_on "$b" ""
	is "$b: the mock agent's run: completed, shutdown null (the key is there)" "completed null true" \
		"$(jq -r '"\(.status) \(.shutdown) \(has("shutdown"))"' <<<"$RUN")"
done
run_on inproc-mock ""
is "inproc-mock (no agent process): completed, shutdown null" "completed null true" \
	"$(jq -r '"\(.status) \(.shutdown) \(has("shutdown"))"' <<<"$RUN")"

# the listing carries it too
run_on namespaces linger
LRID=$RID
req "$OLV_VIEWER_TOKEN" GET "$M/runs?limit=10"
# shellcheck disable=SC2016 # $id is jq's
is "the runs listing carries the note" "$NOTE" \
	"$(jq -r --arg id "$LRID" '.runs[]|select(.id==$id)|.shutdown' "$BODY_FILE" 2>/dev/null)"

# the CLI says it on stderr (exit 0: the run is recorded, completed)
RC=0
OUT=$(OLIVARES_TOKEN=$ED olivares sandbox scenarios run "$SID" --variant linger --backend namespaces -o json 2>"$E2E_TMP/stderr") || RC=$?
CRID=$(jq -r '.id // empty' <<<"$OUT" 2>/dev/null)
is "olivares sandbox scenarios run (linger): exit 0" 0 "$RC"
is "the CLI says it on stderr" "olivares: run $CRID completed, but $NOTE" "$(cat "$E2E_TMP/stderr")"
RC=0
OLIVARES_TOKEN=$ED olivares sandbox scenarios run "$SID" --backend namespaces -o json >/dev/null 2>"$E2E_TMP/stderr" || RC=$?
is "the mock agent's run: exit 0, nothing on stderr" "0|" "$RC|$(cat "$E2E_TMP/stderr")"

# the JUnit export carries it as a property, not as a failure (the run
# completed); the mock agent's run has no such property
curl -s -S -o "$E2E_TMP/l.xml" -H "Authorization: Bearer $OLV_VIEWER_TOKEN" "$OLIVARES_URL$M/runs/$LRID/junit"
is "junit: property shutdown is the note" "$NOTE" \
	"$(xmllint --xpath 'string(//property[@name="shutdown"]/@value)' "$E2E_TMP/l.xml" 2>/dev/null)"
is "junit: no failure or error for it" "0 0" \
	"$(xmllint --xpath 'concat(count(//failure), " ", count(//error))' "$E2E_TMP/l.xml" 2>/dev/null)"
if xmllint --noout --schema "$OLV_ROOT/tests/fixtures/junit.xsd" "$E2E_TMP/l.xml" 2>/dev/null; then
	ok "junit: the document with the note validates"
else
	not_ok "junit: the document with the note validates ($(xmllint --noout --schema "$OLV_ROOT/tests/fixtures/junit.xsd" "$E2E_TMP/l.xml" 2>&1 | head -n 3))"
fi
run_on namespaces ""
curl -s -S -o "$E2E_TMP/m.xml" -H "Authorization: Bearer $OLV_VIEWER_TOKEN" "$OLIVARES_URL$M/runs/$RID/junit"
is "junit: the mock agent's run has no shutdown property" 0 \
	"$(xmllint --xpath 'count(//property[@name="shutdown"])' "$E2E_TMP/m.xml" 2>/dev/null)"

# the admin view's run page
curl -s -S -o "$E2E_TMP/page.html" -H "Authorization: Bearer $OLV_VIEWER_TOKEN" "$OLIVARES_URL/admin/runs/$LRID"
is "run page: #run-shutdown" "$NOTE" \
	"$(xmllint --html --xpath 'string(//dl[@id="run-summary"]//dd[@id="run-shutdown"])' "$E2E_TMP/page.html" 2>/dev/null | sed 's/^[[:space:]]*//; s/[[:space:]]*$//')"
is "run page: #run-reason stays empty" "—" \
	"$(xmllint --html --xpath 'string(//dl[@id="run-summary"]//dd[@id="run-reason"])' "$E2E_TMP/page.html" 2>/dev/null | sed 's/^[[:space:]]*//; s/[[:space:]]*$//')"

# ---- comparisons: each side's note (needs the builtin scorer) ----------------
CSUITE=compare-steps
if [[ -z ${OLV_SUITES_DIR:-} || ! -f ${OLV_SUITES_DIR}/$CSUITE.json ]]; then
	echo "# skip - no builtin scorer with suite $CSUITE on this stack: comparisons not checked"
	done_testing
fi
AD=$OLV_ADMIN_TOKEN
# steps s1..s4 as the suite expects; q3 and q4 have no mock: the built-in
# mock agent ("base", "base2": no such program) misses them (0.5), linger
# asks for nothing and answers every step (1.0)
req "$ED" POST $M/scenarios '{"name":"shutdown-compare","steps":[{"key":"s1","input":"q1"},{"key":"s2","input":"q2"},{"key":"s3","input":"q3"},{"key":"s4","input":"q4"}],"mocks":[{"resource":"q1","response":"a1"},{"resource":"q2","response":"a2"}]}'
is_status "a scenario to compare" 201
CSID=$(jqb '.id // empty')
# show CMD...: OUT, ERR, RC of the command
show() {
	RC=0
	OUT=$("$@" 2>"$E2E_TMP/stderr") || RC=$?
	ERR=$(cat "$E2E_TMP/stderr")
}
# page_dd ID FILE: the text of dd#ID in the comparison page's summary
page_dd() {
	xmllint --html --xpath "string(//dl[@id=\"comparison-summary\"]//dd[@id=\"$1\"])" "$2" 2>/dev/null |
		sed 's/^[[:space:]]*//; s/[[:space:]]*$//'
}

req "$AD" POST $M/comparisons "{\"scenario_id\":\"$CSID\",\"baseline\":\"base\",\"candidate\":\"linger\",\"suite\":\"$CSUITE\",\"backend\":\"namespaces\"}"
is_status "comparison base -> linger on namespaces: 201" 201
CID=$(jqb '.id // empty')
KRUN=$(jqb '.candidate.run_id // empty')
is "comparison: improved by 0.5, both sides completed and scored" "improved 0.5 completed true completed true" \
	"$(jqb '"\(.verdict) \(.delta) \(.baseline.status) \(.baseline.scored) \(.candidate.status) \(.candidate.scored)"')"
is "comparison: the candidate's shutdown is its run's note" "$NOTE" "$(jqb '.candidate.shutdown')"
is "comparison: the baseline's shutdown is null (the key is there)" "null true" \
	"$(jqb '"\(.baseline.shutdown) \(.baseline|has("shutdown"))"')"
is "comparison: reason stays null (a note is not a reason)" null "$(jqb '.reason')"
req "$OLV_VIEWER_TOKEN" GET "$M/runs/$KRUN"
is "comparison: the candidate run has the same note" "$NOTE" "$(jqb .shutdown)"
req "$OLV_VIEWER_TOKEN" GET "$M/comparisons/$CID"
is "GET comparison: the candidate's note, the baseline's null" "$NOTE|null" \
	"$(jqb '"\(.candidate.shutdown)|\(.baseline.shutdown)"')"
req "$OLV_VIEWER_TOKEN" GET "$M/comparisons?scenario=$CSID&latest=true"
is "comparisons listing (latest): the candidate's note" "$CID|$NOTE" \
	"$(jqb '.comparisons[0]|"\(.id)|\(.candidate.shutdown)"')"

# the admin view's comparison page
curl -s -S -o "$E2E_TMP/cmp.html" -H "Authorization: Bearer $OLV_VIEWER_TOKEN" "$OLIVARES_URL/admin/comparisons/$CID"
is "comparison page: #candidate-shutdown is the note" "$NOTE" "$(page_dd candidate-shutdown "$E2E_TMP/cmp.html")"
is "comparison page: #baseline-shutdown is —" "—" "$(page_dd baseline-shutdown "$E2E_TMP/cmp.html")"
is "comparison page: #verdict stays improved" improved "$(page_dd verdict "$E2E_TMP/cmp.html")"

# the CLI: compare says it on stderr (exit 0, verdict unchanged)
show env OLIVARES_TOKEN="$AD" olivares sandbox compare --scenario "$CSID" --baseline base --candidate linger --suite "$CSUITE" --backend namespaces -o json
G1=$(jq -r '.id // empty' <<<"$OUT" 2>/dev/null)
G1RUN=$(jq -r '.candidate.run_id // empty' <<<"$OUT" 2>/dev/null)
is "olivares sandbox compare (candidate linger): exit 0, improved" "0 improved" "$RC $(jq -r .verdict <<<"$OUT" 2>/dev/null)"
is "olivares sandbox compare: stderr names the candidate run and its note" \
	"olivares: candidate run $G1RUN completed, but $NOTE" "$ERR"
# the gate: its verdict line exactly, exit 0 for improved, the note on stderr
show env OLIVARES_TOKEN="$OLV_VIEWER_TOKEN" olivares sandbox gate --scenario "$CSID"
is "gate (improved, candidate killed): exit 0" 0 "$RC"
is "gate: the verdict line unchanged" "verdict=improved delta=0.5 comparison=$G1" "$OUT"
is "gate: stderr names the candidate run and its note" \
	"olivares: candidate run $G1RUN completed, but $NOTE" "$ERR"
# the baseline side, in the table format
show env OLIVARES_TOKEN="$AD" olivares sandbox compare --scenario "$CSID" --baseline linger --candidate base --suite "$CSUITE" --backend namespaces
G2RUN=$(env OLIVARES_TOKEN="$OLV_VIEWER_TOKEN" olivares sandbox comparisons list --scenario "$CSID" --limit 1 -o json 2>/dev/null |
	jq -r '.comparisons[0].baseline.run_id // empty' 2>/dev/null)
is "olivares sandbox compare (baseline linger, table): exit 0" 0 "$RC"
if [[ $OUT == *regressed* ]]; then ok "compare table: the verdict is regressed"; else not_ok "compare table: the verdict is regressed (got $(short "$OUT"))"; fi
is "olivares sandbox compare: stderr names the baseline run and its note" \
	"olivares: baseline run $G2RUN completed, but $NOTE" "$ERR"

# two well-behaved sides: no shutdown note; both are the built-in mock
# agent on the same mocks, which is the one thing said
SAME="olivares: warning: both sides ran the same agent program (builtin:mock-agent) with the same mocks: variants base and base2 compare a program with itself (a variant that names no program in the server's agents directory runs the built-in agent: olivares sandbox agents list shows them)"
show env OLIVARES_TOKEN="$AD" olivares sandbox compare --scenario "$CSID" --baseline base --candidate base2 --suite "$CSUITE" --backend namespaces -o json
G3=$(jq -r '.id // empty' <<<"$OUT" 2>/dev/null)
is "compare of two mock agents: exit 0, unchanged, only the same-agent warning on stderr" \
	"0 unchanged true|$SAME" "$RC $(jq -r '"\(.verdict) \(.same_agent)"' <<<"$OUT" 2>/dev/null)|$ERR"
is "compare of two mock agents: each side's shutdown null (the keys are there)" "null null true true" \
	"$(jq -r '"\(.baseline.shutdown) \(.candidate.shutdown) \(.baseline|has("shutdown")) \(.candidate|has("shutdown"))"' <<<"$OUT" 2>/dev/null)"
show env OLIVARES_TOKEN="$OLV_VIEWER_TOKEN" olivares sandbox gate --scenario "$CSID"
is "gate (unchanged, no note): exit 0, the verdict line, only the same-agent warning" \
	"0|verdict=unchanged delta=0 comparison=$G3|$SAME" "$RC|$OUT|$ERR"
curl -s -S -o "$E2E_TMP/cmp3.html" -H "Authorization: Bearer $OLV_VIEWER_TOKEN" "$OLIVARES_URL/admin/comparisons/$G3"
is "comparison page of two mock agents: both notes —" "—|—" \
	"$(page_dd baseline-shutdown "$E2E_TMP/cmp3.html")|$(page_dd candidate-shutdown "$E2E_TMP/cmp3.html")"

done_testing
