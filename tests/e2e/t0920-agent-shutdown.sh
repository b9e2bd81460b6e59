#!/usr/bin/env bash
# An agent that outlives its exit grace is recorded, not hidden (session
# 10). run.sh --fresh provisions "linger" in the agents directory: a shell
# script that answers every step, then ignores the end of its input
# (sleeps). Its run on namespaces (and gvisor where this host runs it) is
# completed, every output stands, reason stays null, and the run's
# shutdown note says the agent had to be killed at the end of its 1000 ms
# grace: in the API's answer, in the stored run, on the CLI's stderr, in
# the JUnit export's properties and on the admin view's run page. A well-behaved agent (the built-in mock
# agent) and an inproc-mock run get shutdown null.
. "$(dirname "$0")/lib.sh"
e2e_require
cd "$E2E_TMP" || exit 1
M=/v1/m/sandbox
NOTE="agent did not exit within its 1000 ms grace after the end of its input: killed"

if [[ ! -x ${OLV_AGENTS_DIR:-}/linger ]]; then
	echo "# skip - this stack was not started by run.sh --fresh (no linger agent)"
	ok "agent shutdown: skipped (no linger agent on this stack)"
	done_testing
fi
if ! "$OLIVARES_BUILD/olivares-runner" --preflight namespaces >/dev/null 2>&1; then
	echo "# skip - the namespaces backend's preflight fails on this host"
	ok "agent shutdown: skipped (no namespaces backend)"
	done_testing
fi
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

backends=namespaces
if "$OLIVARES_BUILD/olivares-runner" --preflight gvisor >/dev/null 2>&1; then
	backends="namespaces gvisor"
else
	echo "# gvisor: skipped here (its preflight fails)"
fi
for b in $backends; do
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

done_testing
