#!/usr/bin/env bash
# The agent's log, through nginx (docs/agent-protocol.md "The agent's
# log"). run.sh --fresh provisions "printer" in the agents directory: a
# shell agent that speaks the protocol on descriptors 3 and 4 and writes
# to stdout and stderr around its lines (markup and a terminal escape
# included). Its run on namespaces (and gvisor where this host runs it)
# completes with its outputs, and the log holds its prints in order, the
# escape made U+FFFD: GET runs/{id}/log (text/plain), `olivares sandbox
# runs log`, the admin view's pre#run-log (escaped). Another tenant gets
# 404 for it, an unknown run 404, and an inproc-mock run (no agent) an
# empty 200.
. "$(dirname "$0")/lib.sh"
e2e_require
cd "$E2E_TMP" || exit 1
M=/v1/m/sandbox
R=$'\xef\xbf\xbd' # U+FFFD, what the ESC of the agent's escape becomes

need_os_agent printer "agent log"
module_on "$OLV_ADMIN_TOKEN" || exit 1
ED=$OLV_EDITOR_TOKEN
VI=$OLV_VIEWER_TOKEN
WANT="log: <b>start</b> & go
log: step on stdout
log: step on stderr
log: ${R}[31mred
log: step on stdout
log: step on stderr
log: ${R}[31mred
log: end"

req "$ED" POST $M/scenarios '{"name":"agent-log","steps":[{"key":"a","input":"one"},{"key":"b","input":"two"}],"mocks":[]}'
is_status "a two-step scenario" 201
SID=$(jqb '.id // empty')

os_backends
for b in $OS_BACKENDS; do
	req "$ED" POST "$M/scenarios/$SID/runs" "{\"backend\":\"$b\",\"variant\":\"printer\"}"
	is_status "$b: the printer agent's run is recorded" 201
	RID=$(jqb '.id // empty')
	is "$b: completed 2/2/0, isolated" "completed 2 2 0 true" \
		"$(jqb '"\(.status) \(.steps_total) \(.steps_ok) \(.steps_error) \(.isolated)"')"
	req "$VI" GET "$M/runs/$RID/outputs"
	is "$b: the outputs are the agent's answers (its prints are no protocol lines)" "logged logged" \
		"$(jqb '[.outputs[].output]|join(" ")')"
	curl -s -S -D "$E2E_TMP/log.h" -o "$E2E_TMP/log.txt" -H "Authorization: Bearer $VI" "$OLIVARES_URL$M/runs/$RID/log"
	is "$b: GET log: 200 text/plain; charset=utf-8" "200|text/plain; charset=utf-8" \
		"$(sed -n '1s/^HTTP\/[0-9.]* \([0-9]*\).*/\1/p' "$E2E_TMP/log.h" | tr -d '\r')|$(grep -i '^content-type:' "$E2E_TMP/log.h" | sed 's/^[^:]*: *//' | tr -d '\r')"
	is "$b: GET log: the prints in order, the escape made harmless" "$WANT" "$(cat "$E2E_TMP/log.txt")"
done

# another tenant's token: 404 for the run and its log (never its existence)
OTHER=$(new_tenant_token "$(unique t0490-other)" admin)
module_on "$OTHER" || exit 1
req "$OTHER" GET "$M/runs/$RID/log"
is_error "another tenant: GET log is 404 not_found" 404 not_found
req "$VI" GET "$M/runs/00000000000000000000000000000000/log"
is_error "an unknown run: GET log is 404 not_found" 404 not_found

# inproc-mock runs no agent: an empty log, 200
req "$ED" POST "$M/scenarios/$SID/runs" '{"backend":"inproc-mock"}'
MRID=$(jqb '.id // empty')
req "$VI" GET "$M/runs/$MRID/log"
is "inproc-mock: GET log is 200 and empty" "200|" "$STATUS|$BODY"

# the CLI prints it (exit 0); another tenant's: exit 1
RC=0
OUT=$(OLIVARES_TOKEN=$VI olivares sandbox runs log "$RID" 2>"$E2E_TMP/stderr") || RC=$?
is "olivares sandbox runs log: exit 0, the log" "0|$WANT" "$RC|$OUT"
RC=0
OLIVARES_TOKEN=$OTHER olivares sandbox runs log "$RID" >"$E2E_TMP/out" 2>"$E2E_TMP/stderr" || RC=$?
is "olivares sandbox runs log (another tenant): exit 1, nothing printed" "1|" "$RC|$(cat "$E2E_TMP/out")"

# the admin view's run page: the log in pre#run-log, escaped
curl -s -S -o "$E2E_TMP/page.html" -H "Authorization: Bearer $VI" "$OLIVARES_URL/admin/runs/$RID"
is "run page: pre#run-log holds the log" "$WANT" \
	"$(xmllint --html --xpath 'string(//pre[@id="run-log"])' "$E2E_TMP/page.html" 2>/dev/null)"
if grep -qF '&lt;b&gt;start&lt;/b&gt; &amp; go' "$E2E_TMP/page.html" && ! grep -qF '<b>start</b>' "$E2E_TMP/page.html"; then
	ok "run page: the agent's markup is escaped"
else
	not_ok "run page: the agent's markup is escaped ($(grep -o '.\{0,20\}start.\{0,30\}' "$E2E_TMP/page.html" | head -n 2))"
fi
if grep -q $'\033' "$E2E_TMP/page.html"; then
	not_ok "run page: no terminal escape in the page"
else
	ok "run page: no terminal escape in the page"
fi

done_testing
