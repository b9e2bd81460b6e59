#!/usr/bin/env bash
# An agent that reaches its tools and its model over HTTP(S) with the
# standard library only, through the run's gateway (docs/gateway.md),
# through nginx. run.sh --fresh provisions tests/fixtures/agents/
# http_agent.py as variant "httpagent". On namespaces (and gvisor where
# this host runs it): an HTTP mock answers a GET through HTTP_PROXY, an
# llm mock a chat completion over HTTPS through CONNECT (the run's CA
# verified by urllib) and a streamed one, a sequence scripts a model loop
# with a tool call; a request no mock answers is the 404 with its marker
# and a mock miss; every request is in its step's trace, in the API and
# the CLI.
. "$(dirname "$0")/lib.sh"
e2e_require
cd "$E2E_TMP" || exit 1
M=/v1/m/sandbox

need_os_agent httpagent "gateway agent"
if [[ ! -x /usr/bin/python3 ]]; then
	ok "gateway agent: skipped (no /usr/bin/python3)"
	done_testing
fi
module_on "$OLV_ADMIN_TOKEN" || exit 1
ED=$OLV_EDITOR_TOKEN
VI=$OLV_VIEWER_TOKEN

req "$ED" POST $M/scenarios '{"name":"gateway-agent","steps":[{"key":"tool","input":"tool ada"},{"key":"chat","input":"chat hello"},{"key":"stream","input":"stream hello"},{"key":"loop","input":"loop find ada"},{"key":"miss","input":"miss"}],"mocks":[{"http":{"method":"GET","url":"http://tools.example.com/search?q=ada"},"response":{"status":200,"body":"found ada"}},{"llm":{"last_user_message":"hello"},"response":{"content":"Hi there"}},{"llm":{"last_user_message":"find ada"},"sequence":[{"tool_calls":[{"name":"search","arguments":{"q":"ada"}}]},{"content":"ada is found"}]}]}'
is_status "a scenario with an HTTP mock and two llm mocks" 201
SID=$(jqb '.id // empty')

os_backends
for b in $OS_BACKENDS; do
	req "$ED" POST "$M/scenarios/$SID/runs" "{\"backend\":\"$b\",\"variant\":\"httpagent\"}"
	is_status "$b: the gateway agent's run is recorded" 201
	RID=$(jqb '.id // empty')
	is "$b: completed, 5 steps, one a miss, isolated" "completed 5 4 1 true" \
		"$(jqb '"\(.status) \(.steps_total) \(.steps_ok) \(.steps_error) \(.isolated)"')"
	is "$b: hermetic: nothing came from outside its mocks" "true 0" \
		"$(jqb '"\(.hermetic) \(.egress_requests)"')"
	req "$VI" GET "$M/runs/$RID/outputs"
	is "$b: the tool through HTTP_PROXY, the chat over HTTPS, streamed, the loop" \
		"tool: 200 found ada|chat: Hi there|stream: Hi there|loop: ada is found" \
		"$(jqb '[.outputs[0:4][].output] | join("|")')"
	is "$b: the miss: the 404 with its marker, a mock miss" \
		"miss: 404 [[mock-miss:GET http://tools.example.com/nothing]] mock_miss" \
		"$(jqb '"\(.outputs[4].output) \(.outputs[4].error_kind)"')"
	is "$b: the loop's trace: the model, the tool, the model" \
		"POST https://api.openai.com/v1/chat/completions 2 true|GET http://tools.example.com/search?q=ada 0 true|POST https://api.openai.com/v1/chat/completions 2 true" \
		"$(jqb '[.outputs[3].trace[] | "\(.http.method) \(.http.url) \(.mock) \(.hit)"] | join("|")')"
	is "$b: the miss's trace names no mock and has a near miss" "false null true" \
		"$(jqb '.outputs[4].trace[0] | "\(.hit) \(.mock) \(.near_miss != null)"')"
	OLIVARES_TOKEN=$VI olivares sandbox runs outputs "$RID" -o json >"$E2E_TMP/cli.json" 2>"$E2E_TMP/cli.err"
	is "$b: the CLI's outputs carry the same trace" "GET http://tools.example.com/search?q=ada" \
		"$(jq -r '.outputs[0].trace[0] | "\(.http.method) \(.http.url)"' "$E2E_TMP/cli.json" 2>/dev/null)"
	LAST=$RID
done

# ---- the admin pages ----------------------------------------------------------------
if [[ -n ${LAST:-} ]]; then
	JAR=$E2E_TMP/jar
	curl -s -o /dev/null -c "$JAR" -X POST --data-urlencode "token=$OLV_VIEWER_TOKEN" "$OLIVARES_URL/admin/login"
	curl -s -o page.html -b "$JAR" "$OLIVARES_URL/admin/runs/$LAST"
	is "the run page says hermetic, no egress" "true 0" \
		"$(xmllint --html --xpath 'string(//dd[@id="run-hermetic"])' page.html 2>/dev/null) $(xmllint --html --xpath 'string(//dd[@id="run-egress"])' page.html 2>/dev/null)"
	is "its trace shows each request's method and url" \
		"GET http://tools.example.com/search?q=ada" \
		"$(xmllint --html --xpath 'string((//code[@class="trace-http"])[1])' page.html 2>/dev/null) $(xmllint --html --xpath 'string((//code[@class="trace-url"])[1])' page.html 2>/dev/null)"
	curl -s -o scenario.html -b "$JAR" "$OLIVARES_URL/admin/scenarios/$SID"
	is "the scenario page lists the http mock" "http GET http://tools.example.com/search?q=ada" \
		"$(xmllint --html --xpath 'string((//table[@id="mocks"]//tr[contains(concat(" ",@class," ")," gateway-mock ")])[1]/td[1])' scenario.html 2>/dev/null)"
fi
done_testing
