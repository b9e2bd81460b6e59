#!/usr/bin/env bash
# Tool mocks through nginx: a scenario with structured tool mocks (an
# ambiguous pair refused with 422 naming the field), run on namespaces by
# the example agent "tools" (olivares-agent-tool-bot: a tool call, then a
# resource, each step), GET …/outputs with each step's trace (hit, mock,
# a CRLF near miss naming the nearest mock and the byte), and the admin run
# page showing the trace under each step. Without the agent (another
# stack) or namespaces, the run's checks are skipped with a "# skip" line.
. "$(dirname "$0")/lib.sh"
e2e_require
cd "$E2E_TMP" || exit 1

module_on "$OLV_ADMIN_TOKEN" || true
M=/v1/m/sandbox
ED=$OLV_EDITOR_TOKEN

# ---- create: an ambiguous pair, then the scenario ---------------------------------
AMBIG='[{"resource":"weather","response":"sunny"},
 {"tool":"search","args":{"q":"weather"},"match":"subset","response":1},
 {"tool":"search","args":{"lang":"en"},"match":"subset","response":2}]'
req "$ED" POST $M/scenarios "{\"name\":\"tools-ambiguous\",\"steps\":[{\"input\":\"weather\"}],\"mocks\":$AMBIG}"
is_error "two subset mocks of equal weight that one call matches: 422" 422 invalid
is "the 422 names the later mock" "mocks[2]" "$(jqb '.error.field')"
is "and says why" true "$(jqb '.error.message|test("mocks\\[1\\]") and test("ambiguous")')"
req "$ED" POST $M/scenarios '{"name":"tools-bad","steps":[{"input":"x"}],"mocks":[{"tool":"search","args":[1],"response":1}]}'
is_error "a tool mock's args that are not an object: 400" 400 malformed
is "the 400 names the field" "mocks[0].args" "$(jqb '.error.field')"

MOCKS='[{"resource":"weather","response":"sunny"},
 {"resource":"GET /a\n","response":"A"},
 {"tool":"search","args":{"q":"weather"},"sequence":[{"hits":1},{"hits":2}]},
 {"tool":"search","args":{},"match":"subset","error":"search is down"}]'
STEPS='[{"key":"w","input":"weather"},{"key":"crlf","input":"GET /a\r\n"},{"key":"w2","input":"weather"}]'
req "$ED" POST $M/scenarios "{\"name\":\"tools\",\"steps\":$STEPS,\"mocks\":$MOCKS}"
is_status "a scenario with tool mocks: 201" 201
SID=$(jqb '.id')
is "stored normalized: match defaults to exact" "exact subset" \
	"$(jqb '[.mocks[]|select(.tool)|.match]|join(" ")')"
req "$OLV_VIEWER_TOKEN" GET "$M/scenarios/$SID"
is "GET gives the tool mocks back" '{"q":"weather"}|[{"hits":1},{"hits":2}]' \
	"$(jqb '.mocks[2]|(.args|tojson) + "|" + (.sequence|tojson)')"

# ---- the CLI's mocks table ----------------------------------------------------------
OUT=$(OLIVARES_TOKEN=$OLV_VIEWER_TOKEN "$OLIVARES_BUILD/olivares" sandbox scenarios get "$SID" -o table 2>&1)
if grep -q 'tool search {"q":"weather"}' <<<"$OUT" && grep -q 'sequence of 2' <<<"$OUT" &&
	grep -q 'error: search is down' <<<"$OUT"; then
	ok "the CLI's mocks table shows tool mocks (tool, args, answer)"
else
	not_ok "the CLI's mocks table shows tool mocks (got $(short "$OUT"))"
fi

# ---- a run on namespaces by the tool agent -------------------------------------------
pf=$("$OLIVARES_BUILD/olivares-runner" --preflight namespaces 2>/dev/null | jq -r .ok)
if [[ ! -x ${OLV_AGENTS_DIR:-/nonexistent}/tools || $pf != true ]]; then
	echo "# skip - no tools agent in this stack's agents directory, or namespaces unavailable ($pf)"
	done_testing
fi
req "$ED" POST "$M/scenarios/$SID/runs" '{"variant":"tools","backend":"namespaces"}'
is_status "run with the tools agent on namespaces: 201" 201
RID=$(jqb '.id')
is "completed 3/2/1, isolated" "completed 3 2 1 true" \
	"$(jqb '[.status, .steps_total, .steps_ok, .steps_error, .isolated]|map(tostring)|join(" ")')"
req "$OLV_VIEWER_TOKEN" GET "$M/runs/$RID/outputs"
is_status "GET …/outputs: 200" 200
is "the agent got the tool's answers (a sequence, an error) and the resources'" \
	$'{"hits":1}|sunny;error:search is down|[[mock-miss:GET /a\r\n]];{"hits":2}|sunny' \
	"$(jqb '[.outputs[].output]|join(";")')"
is "each trace: the tool call, then the resource, with hit and mock" \
	$'tool:search:true:2,resource:weather:true:0;tool:search:true:3,resource:GET /a\r\n:false:null;tool:search:true:2,resource:weather:true:0' \
	"$(jqb '[.outputs[]|[.trace[]|(if .tool then "tool:"+.tool else "resource:"+.resource end)+":"+(.hit|tostring)+":"+(.mock|tostring)]|join(",")]|join(";")')"
is "the error mock's answer is a hit marked error, not a miss" true \
	"$(jqb '.outputs[1].trace[0].error')"
is "the CRLF miss's near miss: mocks[1], byte 6, CR where the mock has LF" \
	$'1|GET /a\n|6|CR (U+000D)|LF (U+000A)' \
	"$(jqb '.outputs[1].trace[1].near_miss|[(.mock|tostring), .resource, (.offset|tostring), .request_has, .mock_has]|join("|")')"
is "each traced request has its time in microseconds" true \
	"$(jqb '[.outputs[].trace[].duration_us|type=="number" and . >= 0]|all')"

# ---- the admin run page -----------------------------------------------------------------
JAR=$E2E_TMP/jar
curl -s -o /dev/null -c "$JAR" -X POST --data-urlencode "token=$OLV_VIEWER_TOKEN" "$OLIVARES_URL/admin/login"
curl -s -o page.html -b "$JAR" "$OLIVARES_URL/admin/runs/$RID"
NTR=$(xmllint --html --xpath 'count(//tr[@class="trace"])' page.html 2>/dev/null)
is "the run page has a trace row under each step" 3 "$NTR"
is "its items: two requests a step" 6 "$(xmllint --html --xpath 'count(//ol[@class="trace"]/li)' page.html 2>/dev/null)"
NEAR=$(xmllint --html --xpath 'string(//li[@class="trace-miss"]/div[@class="near-miss"])' page.html 2>/dev/null)
if [[ $NEAR == *"nearest mocks[1]"* && $NEAR == *"at byte 6 (request has CR (U+000D), mock has LF (U+000A))"* ]]; then
	ok "the miss shows its near miss (mock, byte, what differs)"
else
	not_ok "the miss shows its near miss (got $(short "$NEAR"))"
fi
is "tool args are shown as text (escaped JSON)" '{"q":"weather"}' \
	"$(xmllint --html --xpath 'string((//code[@class="trace-args"])[1])' page.html 2>/dev/null)"
curl -s -o scenario.html -b "$JAR" "$OLIVARES_URL/admin/scenarios/$SID"
ROWS=
for n in 1 2; do
	r="(//table[@id=\"mocks\"]//tr[contains(concat(\" \",@class,\" \"),\" tool-mock \")])[$n]"
	ROWS+="$(xmllint --html --xpath "string($r/td[1])" scenario.html 2>/dev/null)|$(xmllint --html --xpath "string($r/td[3])" scenario.html 2>/dev/null);"
done
is "the scenario page lists the tool mocks: tool, args, match, answer" \
	'tool search {"q":"weather"} (exact)|[{"hits":1},{"hits":2}];tool search {} (subset)|error: search is down;' \
	"$ROWS"
done_testing
