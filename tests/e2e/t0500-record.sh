#!/usr/bin/env bash
# Recording a run as a session, and replaying it (docs/replay.md,
# "Recording a run"), through nginx. run.sh --fresh gives tenant
# $OLV_EGRESS_TENANT an egress host, 127.0.0.1:$OLV_EGRESS_PORT, where this
# test starts a server on the host's loopback. On namespaces (and gvisor
# where this host runs it) the gateway agent (tests/fixtures/agents/
# http_agent.py, variant "httpagent") calls an HTTP mock, a chat mock over
# HTTPS, the allowed host, and a url no mock answers, in a run started
# with "record": true: the run is not hermetic, and its session holds each
# answer it got. With the host's server stopped, the session's replay is
# hermetic, gives the same outputs and digest, and diverges nowhere.
. "$(dirname "$0")/lib.sh"
e2e_require
cd "$E2E_TMP" || exit 1
M=/v1/m/sandbox

need_os_agent httpagent "recorded runs"
if [[ -z ${OLV_EGRESS_PORT:-} || ! -x /usr/bin/python3 ]]; then
	ok "recorded runs: skipped (no egress tenant on this stack, or no /usr/bin/python3)"
	done_testing
fi
TOK=$(new_tenant_token "$OLV_EGRESS_TENANT" admin)
module_on "$TOK" || exit 1

# the allowed host: a file server on the host's loopback
mkdir -p "$E2E_TMP/www"
printf 'upstream says hi' >"$E2E_TMP/www/data.txt"
UPSTREAM=
start_upstream() {
	python3 -m http.server "$OLV_EGRESS_PORT" --bind 127.0.0.1 --directory "$E2E_TMP/www" \
		>"$E2E_TMP/upstream.log" 2>&1 &
	UPSTREAM=$!
	for _ in $(seq 50); do
		curl -s -o /dev/null "http://127.0.0.1:$OLV_EGRESS_PORT/data.txt" && return 0
		sleep 0.1
	done
	return 1
}
stop_upstream() {
	if [[ -n $UPSTREAM ]]; then
		kill "$UPSTREAM" 2>/dev/null
		wait "$UPSTREAM" 2>/dev/null
	fi
	UPSTREAM=
}
trap 'stop_upstream; rm -rf "$E2E_TMP"' EXIT

req "$TOK" POST $M/scenarios "{\"name\":\"recorded\",\"steps\":[{\"key\":\"tool\",\"input\":\"tool ada\"},{\"key\":\"chat\",\"input\":\"chat hello\"},{\"key\":\"egress\",\"input\":\"get http://127.0.0.1:$OLV_EGRESS_PORT/data.txt\"},{\"key\":\"miss\",\"input\":\"miss\"}],\"mocks\":[{\"http\":{\"method\":\"GET\",\"url\":\"http://tools.example.com/search?q=ada\"},\"response\":{\"status\":200,\"body\":\"found ada\"}},{\"llm\":{\"last_user_message\":\"hello\"},\"response\":{\"content\":\"Hi there\"}}]}"
is_status "a scenario with an HTTP mock, a chat mock and an allowed host" 201
SID=$(jqb '.id // empty')

# ---- bad input: nothing queued -------------------------------------------------------
req "$TOK" POST "$M/scenarios/$SID/runs" '{"record":"yes"}'
is "record must be a boolean: 400 naming it" "400 record" "$STATUS $(jqb '.error.field')"

os_backends
for b in $OS_BACKENDS; do
	if ! start_upstream; then
		not_ok "$b: the upstream on 127.0.0.1:$OLV_EGRESS_PORT started ($(short "$(cat "$E2E_TMP/upstream.log")"))"
		continue
	fi
	req "$TOK" POST "$M/scenarios/$SID/runs" "{\"backend\":\"$b\",\"variant\":\"httpagent\",\"record\":true}"
	is_status "$b: the recorded run" 201
	RID=$(jqb '.id // empty')
	DIGEST=$(jqb '.output_digest')
	is "$b: completed, a miss, not hermetic: one request left" "completed 4 3 1 false 1" \
		"$(jqb '"\(.status) \(.steps_total) \(.steps_ok) \(.steps_error) \(.hermetic) \(.egress_requests)"')"
	is "$b: recorded, with a session and no record_error" "true true null" \
		"$(jqb '"\(.record) \(.session_id | type == "string") \(.record_error)"')"
	SESSION=$(jqb '.session_id // empty')
	req "$TOK" GET "$M/runs/$RID/outputs"
	is "$b: the allowed host answered" "get: 200 upstream says hi" "$(jqb '.outputs[2].output')"
	is "$b: the stored traces keep no bodies (they are in the session)" "null null" \
		"$(jqb '"\(.outputs[0].trace[0].record) \(.outputs[2].trace[0].record)"')"
	stop_upstream

	req "$TOK" GET "$M/sessions/$SESSION"
	is_status "$b: the session is the tenant's" 200
	is "$b: named after the run" "olivares-run-$RID" "$(jqb '.external_id')"
	is "$b: its events: each input, answer and output, in order (a miss keeps none)" \
		"input http_exchange output input http_exchange output input http_exchange output input output" \
		"$(jqb '[.events[].kind] | join(" ")')"
	is "$b: the allowed host's answer is kept, as a mock answers it" \
		"GET http://127.0.0.1:$OLV_EGRESS_PORT/data.txt 200 upstream says hi" \
		"$(jqb '.events[7] | "\(.http.method) \(.http.url) \(.response.status) \(.response.body)"')"
	is "$b: the chat's answer is the completion it got" "Hi there" \
		"$(jqb '.events[4].response.body | fromjson | .choices[0].message.content')"

	# the upstream is gone: what the replay gets comes from the session
	req "$TOK" POST $M/replays "{\"session_id\":\"$SESSION\",\"variant\":\"httpagent\",\"backend\":\"$b\"}"
	is_status "$b: the session's replay" 201
	is "$b: the replay is hermetic, completed, the same digest" "completed true 0 $DIGEST" \
		"$(jqb '"\(.status) \(.hermetic) \(.egress_requests) \(.output_digest)"')"
	is "$b: it diverges nowhere" "4 0" "$(jqb '"\(.divergence.compared) \(.divergence.diverging)"')"
	PID_REPLAY=$(jqb '.id')
	req "$TOK" GET "$M/runs/$PID_REPLAY/outputs"
	is "$b: the allowed host's answer, replayed" "get: 200 upstream says hi" "$(jqb '.outputs[2].output')"
	LAST_SESSION=$SESSION
	LAST_RUN=$RID
done

# ---- the admin view ------------------------------------------------------------------
if [[ -n ${LAST_RUN:-} ]]; then
	JAR=$E2E_TMP/jar
	curl -s -o /dev/null -c "$JAR" -X POST --data-urlencode "token=$TOK" "$OLIVARES_URL/admin/login"
	curl -s -o page.html -b "$JAR" "$OLIVARES_URL/admin/runs/$LAST_RUN"
	is "the run page names the session it recorded" "as session $LAST_SESSION" \
		"$(xmllint --html --xpath 'string(//dd[@id="run-record"])' page.html 2>/dev/null)"
	is "the request to the allowed host is shown forwarded, not missed" 1 \
		"$(xmllint --html --xpath 'count(//li[@class="trace-forwarded"])' page.html 2>/dev/null)"
fi

# ---- the CLI -------------------------------------------------------------------------
if [[ -n ${LAST_SESSION:-} ]] && start_upstream; then
	OLIVARES_TOKEN=$TOK olivares sandbox scenarios run "$SID" --variant httpagent --backend namespaces \
		--record -o json >"$E2E_TMP/cli.json" 2>"$E2E_TMP/cli.err"
	is "the CLI's --record: a session" "true true" \
		"$(jq -r '"\(.record) \(.session_id | type == "string")"' "$E2E_TMP/cli.json" 2>/dev/null)"
	stop_upstream
	S2=$(jq -r '.session_id' "$E2E_TMP/cli.json" 2>/dev/null)
	TABLE=$(OLIVARES_TOKEN=$TOK olivares sandbox sessions get "$S2" 2>&1)
	if grep -Eq "^8 +http_exchange +- +GET http://127.0.0.1:$OLV_EGRESS_PORT/data.txt +200 upstream says hi\$" <<<"$TABLE"; then
		ok "the CLI's session table shows an exchange's request and answer"
	else
		not_ok "the CLI's session table shows an exchange's request and answer ($(short "$TABLE"))"
	fi
	OLIVARES_TOKEN=$TOK olivares sandbox replay "$S2" --variant httpagent --backend namespaces \
		-o json >"$E2E_TMP/replay.json" 2>"$E2E_TMP/replay.err"
	is "the CLI's replay of it: hermetic, the recorded digest" \
		"true $(jq -r '.output_digest' "$E2E_TMP/cli.json")" \
		"$(jq -r '"\(.hermetic) \(.output_digest)"' "$E2E_TMP/replay.json" 2>/dev/null)"
fi

# ---- a run that did not run records nothing ----------------------------------------
# (tenant demo may ask for firecracker, which no executor offers here: the
# run fails closed at once)
req "$OLV_EDITOR_TOKEN" POST $M/scenarios '{"name":"unrecorded","steps":[{"input":"x"}],"mocks":[]}'
is_status "a scenario of tenant demo" 201
req "$OLV_EDITOR_TOKEN" POST "$M/scenarios/$(jqb '.id')/runs" '{"backend":"firecracker","record":true}'
is "a run that fails closed: recorded, no session, and why" \
	"201 failed true null the run did not run: nothing to record" \
	"$STATUS $(jqb '"\(.status) \(.record) \(.session_id) \(.record_error)"')"
done_testing
