#!/usr/bin/env bash
# A Python agent written on olivares_agent (docs/writing-agents.md),
# through nginx. run.sh --fresh provisions tests/fixtures/agents/
# sdk_agent.py as variant "pyagent": it prints to stdout and stderr,
# starts threads, asks for a resource and calls a tool mock each step, and
# raises on the step whose input is "raise". On namespaces (and gvisor
# where this host runs it), with nothing installed for the module: step 1
# right, with its trace; step 2 a CRLF miss whose near miss names the
# mock and the byte; the run failed at step 3 with the exception's type and
# message; its agent named with the file's SHA-256; its log holding the
# prints and the whole traceback (GET log and `olivares sandbox runs log`).
. "$(dirname "$0")/lib.sh"
e2e_require
cd "$E2E_TMP" || exit 1
M=/v1/m/sandbox

need_os_agent pyagent "python agent"
if [[ ! -x /usr/bin/python3 ]]; then
	ok "python agent: skipped (no /usr/bin/python3)"
	done_testing
fi
module_on "$OLV_ADMIN_TOKEN" || exit 1
ED=$OLV_EDITOR_TOKEN
VI=$OLV_VIEWER_TOKEN
SHA=$(sha256sum "$OLV_AGENTS_DIR/pyagent" | cut -d' ' -f1)

req "$ED" POST $M/scenarios '{"name":"python-agent","steps":[{"key":"s1","input":"ada"},{"key":"s2","input":"bob\r\n"},{"key":"s3","input":"raise"}],"mocks":[{"resource":"profile:ada","response":"Ada"},{"tool":"search","args":{"q":"ada"},"response":[1,2,3]},{"resource":"profile:bob\n","response":"Bob"}]}'
is_status "a scenario with a resource mock, a tool mock and a CRLF trap" 201
SID=$(jqb '.id // empty')

os_backends
for b in $OS_BACKENDS; do
	req "$ED" POST "$M/scenarios/$SID/runs" "{\"backend\":\"$b\",\"variant\":\"pyagent\"}"
	is_status "$b: the Python agent's run is recorded" 201
	RID=$(jqb '.id // empty')
	is "$b: failed at its last step, 3/1/2, isolated" "failed 3 1 2 true" \
		"$(jqb '"\(.status) \(.steps_total) \(.steps_ok) \(.steps_error) \(.isolated)"')"
	is "$b: the reason is the exception's type and message" \
		"agent error in step 3: ValueError: step 3 cannot be answered" "$(jqb '.reason')"
	is "$b: the run names the program and its SHA-256" "pyagent $SHA" "$(jqb '"\(.agent.name) \(.agent.sha256)"')"
	req "$VI" GET "$M/runs/$RID/outputs"
	is "$b: step 1 answered from both mocks, 4 threads" "Ada/3/4 threads ok" \
		"$(jqb '"\(.outputs[0].output) \(.outputs[0].status)"')"
	is "$b: step 1's trace: the resource, then the tool, both hit" \
		"resource:profile:ada:true:0 tool:search:true:1" \
		"$(jqb '[.outputs[0].trace[] | "\(if .resource then "resource:\(.resource)" else "tool:\(.tool)" end):\(.hit):\(.mock)"] | join(" ")')"
	is "$b: step 2's CRLF miss: the nearest mock, byte 11, CR for LF" "2 11 CR (U+000D) LF (U+000A)" \
		"$(jqb '.outputs[1].trace[0].near_miss | "\(.mock) \(.offset) \(.request_has) \(.mock_has)"')"
	is "$b: step 3 is the agent error" "agent_error [[agent-error:ValueError: step 3 cannot be answered]]" \
		"$(jqb '"\(.outputs[2].error_kind) \(.outputs[2].output)"')"
	curl -s -S -o "$E2E_TMP/log.txt" -H "Authorization: Bearer $VI" "$OLIVARES_URL$M/runs/$RID/log"
	if grep -q '^stdout: step 1 input ada$' "$E2E_TMP/log.txt" && grep -q '^stderr: step 3$' "$E2E_TMP/log.txt" &&
		grep -q '^Traceback (most recent call last):$' "$E2E_TMP/log.txt" &&
		grep -q '^    raise ValueError("step %d cannot be answered" % s.seq)$' "$E2E_TMP/log.txt" &&
		[[ $(tail -n 1 "$E2E_TMP/log.txt") == "ValueError: step 3 cannot be answered" ]]; then
		ok "$b: the log holds the prints and the whole traceback"
	else
		not_ok "$b: the log holds the prints and the whole traceback ($(short "$(cat "$E2E_TMP/log.txt")"))"
	fi
	OLIVARES_TOKEN=$VI olivares sandbox runs log "$RID" >"$E2E_TMP/cli.txt" 2>"$E2E_TMP/cli.err"
	is "$b: olivares sandbox runs log prints the same log" "$(cat "$E2E_TMP/log.txt")" "$(cat "$E2E_TMP/cli.txt")"
done
done_testing
