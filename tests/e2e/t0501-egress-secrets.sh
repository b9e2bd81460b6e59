#!/usr/bin/env bash
# Secrets for upstream hosts (docs/gateway.md), through nginx. run.sh
# --fresh gives tenant $OLV_EGRESS_TENANT the egress host
# 127.0.0.1:$OLV_EGRESS_PORT and an egress_secrets file whose section for
# it adds "Authorization: Bearer $OLV_EGRESS_SECRET". On namespaces (and
# gvisor where this host runs it) the gateway agent sends its own
# Authorization to that host: the host gets the operator's instead, the
# trace names the header injected, and nothing the run shows (outputs,
# traces, log, the agent's environment) holds the value; the agent cannot
# read the file.
. "$(dirname "$0")/lib.sh"
e2e_require
cd "$E2E_TMP" || exit 1
M=/v1/m/sandbox

need_os_agent httpagent "egress secrets"
if [[ -z ${OLV_EGRESS_SECRET:-} || ! -x /usr/bin/python3 ]]; then
	ok "egress secrets: skipped (no egress secrets on this stack, or no /usr/bin/python3)"
	done_testing
fi
# --check-config says what every run would fail on: a file others may read
printf 'x' >"$E2E_TMP/open.ini"
chmod 0644 "$E2E_TMP/open.ini"
printf '[tenant t]\negress_allow = h.example\negress_secrets = %s\n' "$E2E_TMP/open.ini" >"$E2E_TMP/check.conf"
OUT=$(env -u OLIVARES_DSN OLIVARES_CONF=$E2E_TMP/check.conf "$OLIVARES_BUILD/olivares-fcgi" --check-config 2>&1)
if grep -q "warning: \[tenant t\] egress_secrets $E2E_TMP/open.ini is not a regular file of mode 0600" <<<"$OUT"; then
	ok "--check-config warns of a secrets file others may read"
else
	not_ok "--check-config warns of a secrets file others may read ($(short "$OUT"))"
fi
TOK=$(new_tenant_token "$OLV_EGRESS_TENANT" admin)
module_on "$TOK" || exit 1

# the upstream: answers "ok", and keeps the Authorization it got
cat >upstream.py <<'PY'
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        with open(sys.argv[2], "a") as f:
            f.write((self.headers.get("Authorization") or "(none)") + "\n")
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")
    def log_message(self, *a):
        pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
PY
python3 upstream.py "$OLV_EGRESS_PORT" "$E2E_TMP/got" >"$E2E_TMP/upstream.log" 2>&1 &
UPSTREAM=$!
trap 'kill $UPSTREAM 2>/dev/null; wait $UPSTREAM 2>/dev/null; rm -rf "$E2E_TMP"' EXIT
for _ in $(seq 50); do
	curl -s -o /dev/null "http://127.0.0.1:$OLV_EGRESS_PORT/ready" && break
	sleep 0.1
done
: >"$E2E_TMP/got"

req "$TOK" POST $M/scenarios "{\"name\":\"secrets\",\"steps\":[{\"key\":\"auth\",\"input\":\"getauth http://127.0.0.1:$OLV_EGRESS_PORT/x\"},{\"key\":\"environ\",\"input\":\"environ\"},{\"key\":\"read\",\"input\":\"read $OLV_EGRESS_SECRETS\"}],\"mocks\":[]}"
is_status "a scenario calling the allowed host with the agent's own Authorization" 201
SID=$(jqb '.id // empty')

os_backends
for b in $OS_BACKENDS; do
	: >"$E2E_TMP/got"
	req "$TOK" POST "$M/scenarios/$SID/runs" "{\"backend\":\"$b\",\"variant\":\"httpagent\"}"
	is "$b: the run completed, one request out" "201 completed 1" \
		"$STATUS $(jqb '"\(.status) \(.egress_requests)"')"
	RID=$(jqb '.id // empty')
	is "$b: the host got the operator's credential, not the agent's" \
		"Bearer $OLV_EGRESS_SECRET" "$(cat "$E2E_TMP/got")"
	req "$TOK" GET "$M/runs/$RID/outputs"
	is "$b: the agent got the host's answer" "getauth: 200 ok" "$(jqb '.outputs[0].output')"
	is "$b: the trace names the header added, the agent's own masked" \
		'["Authorization"] [masked]' \
		"$(jqb '"\(.outputs[0].trace[0].egress.injected | tojson) \(.outputs[0].trace[0].egress.request_headers | map(select(.[0] == "Authorization"))[0][1])"')"
	is "$b: the agent cannot open the file" "read: No such file or directory" "$(jqb '.outputs[2].output')"
	if grep -qF "$OLV_EGRESS_SECRET" <<<"$BODY" || grep -qF "$OLV_EGRESS_SECRETS" <<<"$(jqb '.outputs[1].output')"; then
		not_ok "$b: neither the value nor the file's path is in the outputs, traces or environment"
	else
		ok "$b: neither the value nor the file's path is in the outputs, traces or environment"
	fi
	req "$TOK" GET "$M/runs/$RID/log"
	if grep -qF "$OLV_EGRESS_SECRET" <<<"$BODY"; then
		not_ok "$b: the run's log does not hold the value"
	else
		ok "$b: the run's log does not hold the value"
	fi
done
if grep -rqF "$OLV_EGRESS_SECRET" "$OLIVARES_DATA/log" 2>/dev/null; then
	not_ok "the server's and executors' logs do not hold the value"
else
	ok "the server's and executors' logs do not hold the value"
fi
done_testing
