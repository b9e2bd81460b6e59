#!/usr/bin/env bash
# JUnit that says what the suite says: a scored run's test cases are its
# expectations (score_details), so a run its suite passed has no <failure>,
# even with a mock miss the suite allows (tests/fixtures/suites/
# walkthrough-allow-miss.json: the miss is a property); a run that did not
# pass has one <failure> per failed expectation. A comparison's JUnit
# (GET /v1/m/sandbox/comparisons/{id}/junit, `olivares sandbox comparisons
# junit ID`, `olivares sandbox compare ... --junit FILE`): a case per side
# and one for the verdict, failures for regressed and inconclusive, the
# verdict's numbers as properties; 409 while pending, 404 for another
# tenant's. Every document validates against tests/fixtures/junit.xsd.
#
# Needs the builtin scorer on tests/fixtures/suites (tests/e2e/run.sh
# --fresh sets it and exports OLV_SUITES_DIR).
. "$(dirname "$0")/lib.sh"
e2e_require
cd "$E2E_TMP" || exit 1

AD=$OLV_ADMIN_TOKEN
ED=$OLV_EDITOR_TOKEN
VW=$OLV_VIEWER_TOKEN
M=/v1/m/sandbox
XSD=$OLV_ROOT/tests/fixtures/junit.xsd

# show CMD...: print the command and its output as comments; OUT, ERR, RC
show() {
	echo "# \$ $*"
	RC=0
	OUT=$("$@" 2>"$E2E_TMP/stderr") || RC=$?
	ERR=$(cat "$E2E_TMP/stderr")
	printf '%s\n' "$OUT" | head -n 40 | sed 's/^/#   /'
	if [[ -n $ERR ]]; then printf '%s\n' "$ERR" | sed 's/^/#   stderr: /'; fi
}
# xp FILE XPATH: the string value of XPATH in FILE ("" when absent)
xp() { xmllint --xpath "$2" "$1" 2>/dev/null; }
# valid DESC FILE: FILE validates against the schema
valid() {
	if xmllint --noout --schema "$XSD" "$2" 2>"$2.xmllint"; then
		ok "$1: valid against tests/fixtures/junit.xsd"
	else
		not_ok "$1: valid against tests/fixtures/junit.xsd ($(short "$(cat "$2.xmllint")"))"
	fi
}

if [[ -z ${OLV_SUITES_DIR:-} || ! -f ${OLV_SUITES_DIR}/walkthrough-allow-miss.json ]]; then
	echo "# skip - this stack was not started by run.sh --fresh with the builtin scorer on tests/fixtures/suites"
	ok "junit: skipped (no builtin scorer with suite walkthrough-allow-miss on this stack)"
	done_testing
fi
module_on "$AD" || exit 1

# the page's walkthrough (step-1 resolves, step-2 misses its mock), and a
# variant v2 whose agent also answers step-2
WALK_STEPS='[{"key":"step-1","input":"agent:user1@example.test"},{"key":"step-2","input":"agent:user2@example.test"}]'
req "$ED" POST $M/scenarios "{\"name\":\"junit-walk\",\"steps\":$WALK_STEPS,\"mocks\":[{\"resource\":\"agent:user1@example.test\",\"response\":\"first synthetic account\"},{\"resource\":\"agent:user2@example.test\",\"response\":\"second\",\"variant\":\"v2\"}]}"
is_status "walkthrough scenario created" 201
SID=$(jqb '.id // empty')

# ---- a run its suite passes, with the mock miss it allows ------------------------
req "$ED" POST "$M/scenarios/$SID/runs" '{"variant":"candidate","suite":"walkthrough-allow-miss"}'
RID=$(jqb '.id // empty')
is "allow-miss: completed, scored 1, passed" "completed true 1 true" \
	"$(jqb '"\(.status) \(.scored) \(.score) \(.passed)"')"
req "$VW" GET "$M/runs/$RID/outputs"
is "allow-miss: step-2 was a mock miss" mock_miss "$(jqb '.outputs[1].error_kind')"
show olivares sandbox runs junit "$RID"
is "allow-miss: runs junit exit 0" 0 "$RC"
printf '%s\n' "$OUT" >allow.xml
valid allow allow.xml
is "allow-miss: no <failure> and no <error> at all" "0 0" "$(xp allow.xml 'count(//failure)') $(xp allow.xml 'count(//error)')"
is "allow-miss: one case per expectation, named <step>: <check>" "2|step-1: equals|step-2: contains" \
	"$(xp allow.xml 'count(//testcase)')|$(xp allow.xml 'string(//testcase[1]/@name)')|$(xp allow.xml 'string(//testcase[2]/@name)')"
is "allow-miss: counters tests=2 failures=0 on both levels" "2 0 2 0" \
	"$(xp allow.xml 'string(/testsuites/@tests)') $(xp allow.xml 'string(/testsuites/@failures)') $(xp allow.xml 'string(//testsuite/@tests)') $(xp allow.xml 'string(//testsuite/@failures)')"
is "allow-miss: the mock miss is a property of the suite" "step-2 (seq 2)" \
	"$(xp allow.xml 'string(//properties/property[@name="mock_miss"]/@value)')"
is "allow-miss: properties scored, passed, expectations" "true true 2 0" \
	"$(xp allow.xml 'string(//property[@name="scored"]/@value)') $(xp allow.xml 'string(//property[@name="passed"]/@value)') $(xp allow.xml 'string(//property[@name="expectations"]/@value)') $(xp allow.xml 'string(//property[@name="expectations_failed"]/@value)')"

# ---- a run that does not pass: a failure per failed expectation -------------------
req "$ED" POST "$M/scenarios/$SID/runs" '{"variant":"candidate","suite":"walkthrough-strict"}'
is "strict: scored, not passed" "true false" "$(jqb '"\(.scored) \(.passed)"')"
SRID=$(jqb '.id // empty')
req "$VW" GET "$M/runs/$SRID"
SMSG=$(jqb '[.score_details[]|select(.passed==false)|.message][0]')
curl -s -o strict.xml -H "Authorization: Bearer $VW" "$OLIVARES_URL$M/runs/$SRID/junit"
valid strict strict.xml
is "strict: 3 cases, 1 failure, on step-2: not_mock_miss, type expectation" "3 1 1 expectation" \
	"$(xp strict.xml 'count(//testcase)') $(xp strict.xml 'count(//failure)') $(xp strict.xml 'count(//testcase[@name="step-2: not_mock_miss"]/failure)') $(xp strict.xml 'string(//failure/@type)')"
is "strict: the failure's message and text are the detail's" "expectation failed: not_mock_miss|$SMSG" \
	"$(xp strict.xml 'string(//failure/@message)')|$(xp strict.xml 'string(//failure)')"

# ---- an unscored run keeps one case per step ------------------------------------------
req "$ED" POST "$M/scenarios/$SID/runs" '{"variant":"candidate"}'
URID=$(jqb '.id // empty')
curl -s -o plain.xml -H "Authorization: Bearer $VW" "$OLIVARES_URL$M/runs/$URID/junit"
valid plain plain.xml
is "unscored: per-step cases, the mock miss a failure" "step-1 step-2 1 mock_miss" \
	"$(xp plain.xml 'string(//testcase[1]/@name)') $(xp plain.xml 'string(//testcase[2]/@name)') $(xp plain.xml 'count(//failure)') $(xp plain.xml 'string(//testcase[2]/failure/@type)')"

# ---- a comparison's JUnit through the API --------------------------------------------
req "$AD" POST $M/comparisons "{\"scenario_id\":\"$SID\",\"baseline\":\"candidate\",\"candidate\":\"v2\",\"suite\":\"walkthrough\",\"tolerance\":0.02}"
is "comparison candidate -> v2 on walkthrough: improved, delta 0.25" "201 improved 0.25" "$STATUS $(jqb '"\(.verdict) \(.delta)"')"
CID=$(jqb '.id // empty')
CB=$(jqb '.baseline.run_id // empty')
CC=$(jqb '.candidate.run_id // empty')
curl -s -D headers.txt -o cmp.xml -H "Authorization: Bearer $VW" "$OLIVARES_URL$M/comparisons/$CID/junit"
is "GET /comparisons/ID/junit as a viewer: 200" 200 "$(awk 'NR==1{print $2}' headers.txt)"
ctype=$(grep -i '^content-type:' headers.txt | tr -d '\r' | cut -d' ' -f2- | tr '[:upper:]' '[:lower:]' | tr -d ' ')
is "GET /comparisons/ID/junit: Content-Type application/xml; charset=utf-8" "application/xml;charset=utf-8" "$ctype"
valid improved cmp.xml
is "improved: one suite, cases baseline candidate verdict, no failure" "1|baseline candidate verdict|0" \
	"$(xp cmp.xml 'count(//testsuite)')|$(xp cmp.xml 'string(//testcase[1]/@name)') $(xp cmp.xml 'string(//testcase[2]/@name)') $(xp cmp.xml 'string(//testcase[3]/@name)')|$(xp cmp.xml 'count(//failure)')"
is "improved: properties verdict delta tolerance and the run ids" "improved 0.25 0.02 $CB $CC $CID" \
	"$(xp cmp.xml 'string(//property[@name="verdict"]/@value)') $(xp cmp.xml 'string(//property[@name="delta"]/@value)') $(xp cmp.xml 'string(//property[@name="tolerance"]/@value)') $(xp cmp.xml 'string(//property[@name="baseline_run_id"]/@value)') $(xp cmp.xml 'string(//property[@name="candidate_run_id"]/@value)') $(xp cmp.xml 'string(//testsuite/@id)')"
show olivares sandbox comparisons junit "$CID"
is "comparisons junit ID: exit 0, the XML as the API gives it" "0|$(cat cmp.xml)" "$RC|$OUT"

# ---- compare --junit FILE: waits, then writes the comparison's JUnit -------------------
rm -f reg.xml
export OLIVARES_TOKEN=$AD # compare is admin-only
show olivares sandbox compare --scenario "$SID" --baseline v2 --candidate candidate --suite walkthrough --junit reg.xml -o json
is "compare --junit (v2 -> candidate): exit 0, regressed" "0 regressed" "$RC $(jq -r .verdict <<<"$OUT" 2>/dev/null)"
RCID=$(jq -r '.id // empty' <<<"$OUT" 2>/dev/null)
if [[ -s reg.xml ]]; then ok "compare --junit wrote the file"; else not_ok "compare --junit wrote the file"; fi
valid regressed reg.xml
is "regressed: only the verdict case fails, type regressed, delta -0.25" "1 1 regressed -0.25 $RCID" \
	"$(xp reg.xml 'count(//failure)') $(xp reg.xml 'count(//testcase[@name="verdict"]/failure)') $(xp reg.xml 'string(//failure/@type)') $(xp reg.xml 'string(//property[@name="delta"]/@value)') $(xp reg.xml 'string(//testsuite/@id)')"
curl -s -o reg-api.xml -H "Authorization: Bearer $VW" "$OLIVARES_URL$M/comparisons/$RCID/junit"
is "compare --junit: the file is the API's document" "$(cat reg-api.xml)" "$(cat reg.xml)"

# an unknown suite: neither side scored, inconclusive
rm -f inc.xml
show olivares sandbox compare --scenario "$SID" --baseline candidate --candidate v2 --suite junit-no-such-suite --junit inc.xml
is "compare --junit with an unknown suite: exit 0" 0 "$RC"
valid inconclusive inc.xml
is "inconclusive: three failures (both sides not_scored, the verdict inconclusive)" "3 not_scored not_scored inconclusive" \
	"$(xp inc.xml 'count(//failure)') $(xp inc.xml 'string(//testcase[@name="baseline"]/failure/@type)') $(xp inc.xml 'string(//testcase[@name="candidate"]/failure/@type)') $(xp inc.xml 'string(//testcase[@name="verdict"]/failure/@type)')"

rm -f nowait.xml
show olivares sandbox compare --scenario "$SID" --baseline candidate --candidate v2 --suite walkthrough --junit nowait.xml --no-wait
is "compare --junit --no-wait: a usage error (exit 2), no file" "2 no" "$RC $([[ -e nowait.xml ]] && echo yes || echo no)"

# ---- 409 while pending, 404 elsewhere -------------------------------------------------
slow_steps=$(jq -cn '[range(1; 6) | {key: "s\(.)", input: "tool:slow"}]')
req "$ED" POST $M/scenarios "{\"name\":\"junit-slow\",\"steps\":$slow_steps,\"mocks\":[{\"resource\":\"tool:slow\",\"response\":\"slow\",\"delay_ms\":700}]}"
SLOW=$(jqb '.id // empty')
E2E_NO_WAIT=1 req "$AD" POST $M/comparisons "{\"scenario_id\":\"$SLOW\",\"baseline\":\"a\",\"candidate\":\"b\",\"suite\":\"walkthrough\"}"
is "a slow comparison (no wait): 202 pending" "202 pending" "$STATUS $(jqb .status)"
PCID=$(jqb '.id // empty')
PB=$(jqb '.baseline.run_id // empty')
PC=$(jqb '.candidate.run_id // empty')
req "$VW" GET "$M/comparisons/$PCID/junit"
is_error "junit of a pending comparison: 409" 409 conflict
show olivares sandbox comparisons junit "$PCID"
is "CLI junit of a pending comparison: exit 1, nothing on stdout" "1 " "$RC $OUT"
req "$AD" POST "$M/runs/$PB/cancel"
req "$AD" POST "$M/runs/$PC/cancel"

req "$VW" GET "$M/comparisons/00000000000000000000000000000000/junit"
is_error "junit of an unknown comparison: 404" 404 not_found
OT=$(new_tenant_token "$(unique junit-cmp-other)" admin)
if [[ -n $OT ]]; then
	module_on "$OT" || true
	req "$OT" GET "$M/comparisons/$CID/junit"
	is_error "junit of another tenant's comparison: 404" 404 not_found
else
	not_ok "another tenant's token"
fi

# ---- the admin view: each expectation's result, verdicts told apart --------------------
# hp PATH: GET the admin page PATH as the viewer into page.html
hp() { curl -s -o page.html -w '%{http_code}' -H "Authorization: Bearer $VW" "$OLIVARES_URL$1"; }
hx() { xmllint --html --xpath "$1" page.html 2>/dev/null; }
is "the strict run's page: 200" 200 "$(hp "/admin/runs/$SRID")"
is "run page: an expectations table, one row per score_details line, one failed" "3 1" \
	"$(hx 'count(//table[@id="expectations"]/tbody/tr)') $(hx 'count(//table[@id="expectations"]//tr[@class="expectation failed"])')"
is "run page: the failed row's step, check, passed, message" "2 step-2|not_mock_miss|no|$SMSG" \
	"$(hx 'string(//tr[@class="expectation failed"]/td[@class="step"])')|$(hx 'string(//tr[@class="expectation failed"]/td[@class="check"])')|$(hx 'string(//tr[@class="expectation failed"]/td[contains(@class,"passed")])')|$(hx 'string(//tr[@class="expectation failed"]/td[@class="message"])' | sed 's/^ *//;s/ *$//')"
is "the unscored run's page: 200, no expectations table" "200 0" "$(hp "/admin/runs/$URID") $(hx 'count(//table[@id="expectations"])')"
# a step key with markup reaches the table as text (the "*" expectation names it)
req "$ED" POST $M/scenarios '{"name":"junit-xss","steps":[{"key":"<b>k</b>","input":"agent:user1@example.test"}],"mocks":[]}'
XSID=$(jqb '.id // empty')
req "$ED" POST "$M/scenarios/$XSID/runs" '{"variant":"candidate","suite":"walkthrough-strict"}'
XRID=$(jqb '.id // empty')
hp "/admin/runs/$XRID" >/dev/null
is "run page: a key with markup is text, no <b> element in the table" "0 1" \
	"$(hx 'count(//table[@id="expectations"]//b)') $(hx 'count(//table[@id="expectations"]//td[@class="step" and contains(., "<b>k</b>")])')"

req "$AD" POST $M/comparisons "{\"scenario_id\":\"$SID\",\"baseline\":\"candidate\",\"candidate\":\"candidate\",\"suite\":\"walkthrough\"}"
UCID=$(jqb '.id // empty')
is "a comparison of a variant with itself: unchanged" unchanged "$(jqb .verdict)"
ICID=$(jq -r '.id // empty' <<<"$(curl -s -H "Authorization: Bearer $VW" "$OLIVARES_URL$M/comparisons?scenario=$SID&verdict=inconclusive&limit=1" | jq -c '.comparisons[0]')")
want=""
got=""
for pair in "$CID:improved" "$RCID:regressed" "$UCID:unchanged" "$ICID:inconclusive"; do
	hp "/admin/comparisons/${pair%%:*}" >/dev/null
	want+=" ${pair#*:}:1"
	got+=" $(hx 'string(//dd[@id="verdict"])' | xargs):$(hx "count(//dd[@id=\"verdict\"]/span[@class=\"verdict-${pair#*:}\"])")"
done
is "comparison pages: the verdict's word in a span of class verdict-<verdict>" "$want" "$got"
hp "/admin/comparisons?scenario=$SID" >/dev/null
is "comparisons list: each verdict cell has its class" "1 1 1 1" \
	"$(for v in improved regressed unchanged inconclusive; do hx "count(//td[@class=\"verdict\"]/span[@class=\"verdict-$v\"])>0" | sed 's/true/1/;s/false/0/'; done | xargs)"
curl -s -o style.css "$OLIVARES_URL/static/style.css"
signs=""
for v in improved regressed unchanged inconclusive; do
	signs+=" $(awk -v sel=".verdict-$v::before" 'index($0, sel) == 1 {f = 1} f && /content:/ {print $2; exit}' style.css)"
done
is "the stylesheet gives each verdict its sign" ' "\25B2\00A0"; "\25BC\00A0"; "=\00A0"; "?\00A0";' "$signs"
is "and its own colour" "4" "$(grep -cE '^\.verdict-(improved|regressed|unchanged|inconclusive) \{' style.css)"

for c in "comparisons junit" "compare"; do
	# shellcheck disable=SC2086 # c is two words on purpose
	show olivares sandbox $c --help
	if [[ $RC == 0 && $OUT == Usage:* && $OUT == *junit* ]]; then ok "olivares sandbox $c --help names junit"; else not_ok "olivares sandbox $c --help names junit (exit $RC)"; fi
done

done_testing
