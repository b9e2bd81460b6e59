#!/usr/bin/env bash
# Expectations on a step's trace, time and JSON output (model/suite.h), run
# by the builtin scorer on tests/fixtures/suites:
#   - expectations-json on inproc-mock (every stack): a JSON answer read by
#     json_path (equals a string, a number, a bracketed name; a text
#     answer "output is not JSON"), the step's one lookup by calls and
#     call_count, max_duration_ms against a mock's delay_ms;
#   - expectations-tools on namespaces with the example agent "tools" (a
#     tool call, then a resource, each step; skipped with a "# skip" line
#     without it): calls in order and in any order with args, call_count,
#     max_duration_ms on every step, json_path on a text answer.
# Each detail line of score_details is asserted: check, passed, message.
. "$(dirname "$0")/lib.sh"
e2e_require
cd "$E2E_TMP" || exit 1

M=/v1/m/sandbox
ED=$OLV_EDITOR_TOKEN
VW=$OLV_VIEWER_TOKEN
module_on "$OLV_ADMIN_TOKEN" || exit 1
if [[ -z ${OLV_SUITES_DIR:-} || ! -f $OLV_SUITES_DIR/expectations-json.json ]]; then
	echo "# skip - this stack's scorer does not read tests/fixtures/suites"
	done_testing
fi

# details: the last body's score_details, one "key:check:passed:message" a line
details() {
	jqb '[.score_details[]|"\(.key):\(.check):\(.passed):\(.message)"]|join("\n")'
}

# ---- expectations-json on inproc-mock ---------------------------------------------
STEPS='[{"key":"city","input":"city"},{"key":"plain","input":"plain"},{"key":"slow","input":"slow"}]'
MOCKS='[{"resource":"city","response":"{\"answer\":{\"city\":\"Paris\",\"temps\":[12,14.5]}}"},
 {"resource":"plain","response":"just text"},
 {"resource":"slow","response":"late","delay_ms":100}]'
req "$ED" POST $M/scenarios "{\"name\":\"expectations-json\",\"steps\":$STEPS,\"mocks\":$MOCKS}"
is_status "scenario with a JSON answer and a slow mock: 201" 201
SID=$(jqb .id)
req "$ED" POST "$M/scenarios/$SID/runs" '{"suite":"expectations-json"}'
is_status "run scored with expectations-json: 201" 201
RID=$(jqb .id)
cp "$BODY_FILE" json-run.json
# 5 of 9 hold: 0.555555556 >= 0.5
is "expectations-json: completed, scored 5/9, passed" \
	"completed true 0.555555556 true" "$(jqb '"\(.status) \(.scored) \(.score) \(.passed)"')"
is "expectations-json: each line's check, result and message" \
	"city:json_path:true:the value at the path equals the expected value
city:json_path:true:the value at the path equals the expected value
city:json_path:false:the value at the path differs from the expected value
plain:json_path:false:output is not JSON
city:calls:true:the step made the expected calls in order
city:call_count:true:the number of calls is within the bounds
plain:call_count:false:the number of calls is outside the bounds
city:max_duration_ms:true:step took at most the allowed time
slow:max_duration_ms:false:step took longer than the allowed time" "$(details)"
is "the lines keep their shape {seq,key,passed,check,message}" '["check","key","message","passed","seq"]' \
	"$(jqb '[.score_details[]|keys]|unique|.[0]|tojson')"
is "no line quotes the output's text" false "$(jqb '[.score_details[].message|test("Paris|Rome|just text")]|any')"
req "$VW" GET "$M/runs/$RID/outputs"
is "the slow step's duration_ms is over the 20 ms allowed (its mock waits 100 ms)" true \
	"$(jqb '.outputs[2].duration_ms > 20')"
req "$VW" GET "$M/runs/$RID"
is "GET /runs/ID records the same details" \
	"$(jq -cS '{score,passed,score_details}' json-run.json)" "$(jq -cS '{score,passed,score_details}' "$BODY_FILE")"

# ---- expectations-tools on namespaces with the tools agent ------------------------
pf=$("$OLIVARES_BUILD/olivares-runner" --preflight namespaces 2>/dev/null | jq -r .ok)
if [[ ! -x ${OLV_AGENTS_DIR:-/nonexistent}/tools || $pf != true ]]; then
	echo "# skip - no tools agent in this stack's agents directory, or namespaces unavailable ($pf)"
	done_testing
fi
TMOCKS='[{"resource":"weather","response":"sunny"},
 {"resource":"GET /a\n","response":"A"},
 {"tool":"search","args":{"q":"weather"},"response":{"hits":1}}]'
TSTEPS='[{"key":"w","input":"weather"},{"key":"crlf","input":"GET /a\r\n"}]'
req "$ED" POST $M/scenarios "{\"name\":\"expectations-tools\",\"steps\":$TSTEPS,\"mocks\":$TMOCKS}"
is_status "scenario with tool mocks: 201" 201
TSID=$(jqb .id)
req "$ED" POST "$M/scenarios/$TSID/runs" '{"variant":"tools","backend":"namespaces","suite":"expectations-tools"}'
is_status "run of the tools agent scored with expectations-tools: 201" 201
# 5 of 9 lines hold ("*" is one line a step): 0.555555556 >= 0.5
is "expectations-tools: completed, scored 5/9, passed" \
	"completed true 0.555555556 true" "$(jqb '"\(.status) \(.scored) \(.score) \(.passed)"')"
is "expectations-tools: each line's check, result and message" \
	"w:calls:true:the step made the expected calls in order
w:calls:false:the step did not make the expected calls in order
w:calls:true:the step made the expected calls
w:calls:false:the step did not make the expected calls in order
w:call_count:true:the number of calls is within the bounds
crlf:call_count:false:the number of calls is outside the bounds
w:max_duration_ms:true:step took at most the allowed time
crlf:max_duration_ms:true:step took at most the allowed time
w:json_path:false:output is not JSON" "$(details)"
done_testing
