#!/usr/bin/env bash
# Behind Apache (OLIVARES_FRONTEND=apache; t0850 is nginx's): what Apache
# answers itself is the API's JSON error shape {"error":{"code","message"}}
# with Apache's status, never an HTML page: "/../" above the root, NUL, a
# header or URI too large, TRACE, paths outside the routes, /metrics from
# elsewhere than 127.0.0.1, the pool down (503). The pool's own JSON errors
# pass through untouched. The Authorization header reaches the pool
# (CGIPassAuth); a chunked body reaches it whole (over 64 KiB, streamed
# without a length), under the 1 MiB limit, or is refused with 413. The access log holds
# no credential: no Basic-auth user, no query string. The stack's status
# names Apache (and spawn-fcgi when it started the pool), and restart keeps
# both.
. "$(dirname "$0")/lib.sh"
# shellcheck source=../../scripts/lib/common.sh
. "$OLV_ROOT/scripts/lib/common.sh"
e2e_require
need_frontend apache "Apache's own answers"
STACK=$OLV_ROOT/scripts/stack
HDRS=$E2E_TMP/headers

# whatever happens below, leave the stack up for the next test
trap '"$STACK" status >/dev/null 2>&1 || "$STACK" up >/dev/null 2>&1; rm -rf "$E2E_TMP"' EXIT

# raw CURL-ARGS...: a request with any curl arguments (URL included); sets
# STATUS, BODY and CTYPE (the Content-Type, without parameters)
raw() {
	STATUS=$(curl -s -S -o "$BODY_FILE" -D "$HDRS" -w '%{http_code}' --max-time 60 "$@" 2>"$E2E_TMP/curl-err") || STATUS=${STATUS:-000}
	read_body
	CTYPE=$(tr -d '\r' <"$HDRS" | sed -n 's/^[Cc]ontent-[Tt]ype: *\([^;]*\).*/\1/p' | tail -n 1)
}
header() { tr -d '\r' <"$HDRS" | sed -n "s/^$1: *//Ip" | tail -n 1; }

# apache_error DESC STATUS CODE: the last answer is Apache's JSON error
# page (status, code, a message, type application/json, no HTML)
apache_error() {
	is_error "$1" "$2" "$3"
	is "$1: Content-Type" application/json "$CTYPE"
	if grep -qi '<html' "$BODY_FILE"; then not_ok "$1: no HTML"; else ok "$1: no HTML"; fi
}

U=$OLIVARES_URL
AUTH="Authorization: Bearer $OLV_VIEWER_TOKEN"
S=/v1/m/sandbox/scenarios

# ---- the stack runs behind Apache
"$STACK" status >"$E2E_TMP/status.out" 2>&1 || true
if grep -q "^apache2: running (pid [0-9]*, http://127.0.0.1:$OLIVARES_PORT)$" "$E2E_TMP/status.out"; then
	ok "scripts/stack status names Apache and its port"
else
	not_ok "scripts/stack status names Apache and its port ($(short "$(cat "$E2E_TMP/status.out")"))"
fi
if [[ ${OLIVARES_LAUNCHER:-} == spawn-fcgi ]]; then
	if grep -q '^olivares-fcgi: running (pid [0-9]*, started by spawn-fcgi)$' "$E2E_TMP/status.out"; then
		ok "scripts/stack status says spawn-fcgi started the pool"
	else
		not_ok "scripts/stack status says spawn-fcgi started the pool ($(short "$(cat "$E2E_TMP/status.out")"))"
	fi
	if grep -q 'using the listening socket on fd 0 (spawn-fcgi)' "$OLIVARES_DATA/log/olivares-fcgi.log"; then
		ok "the pool took the socket spawn-fcgi made (fd 0)"
	else
		not_ok "the pool took the socket spawn-fcgi made (fd 0)"
	fi
fi

# the scenarios below are the sandbox module's
ED="Authorization: Bearer $OLV_EDITOR_TOKEN"
raw -X PUT -H "Authorization: Bearer $OLV_ADMIN_TOKEN" -H 'Content-Type: application/json' --data '{"enabled":true}' "$U/v1/modules/sandbox"
is "the sandbox module is on" 200 "$STATUS"

# ---- requests Apache refuses before the pool sees them
raw --path-as-is "$U/v1/../../etc/passwd"
apache_error "/../ above the root -> 400" 400 malformed
raw -H "$AUTH" "$U$S/0123456789abcdef0123456789abcdef%00"
apache_error "NUL (%00) in the path -> 404 (Apache's)" 404 not_found
raw -H "$AUTH" -H "X-Big: $(repeat_char a 100000)" "$U$S"
apache_error "a 100 KB header -> 400" 400 malformed
raw -H "$AUTH" "$U/v1/m/sandbox/$(repeat_char a 9000)"
apache_error "a 9 KB URI -> 414" 414 uri_too_long
raw -X TRACE -H "$AUTH" "$U$S"
apache_error "TRACE -> 405" 405 method_not_allowed
raw "$U/no/such/path"
apache_error "a path outside the routes -> 404" 404 not_found
raw "$U/administrator"
apache_error "/administrator is not the admin view -> 404" 404 not_found
raw "$U/static/no-such-file.css"
apache_error "a missing static file -> 404 (JSON, not text/css)" 404 not_found
raw "$U/.olivares-error/502.json"
apache_error "the error pages are internal (-> 404)" 404 not_found
raw -I "$U/no/such/path"
is "HEAD on a missing path: 404" 404 "$STATUS"
is "HEAD on a missing path: Content-Type" application/json "$CTYPE"
raw "$U/"
is "/: 200 text/plain, one line" "200 text/plain olivares sandbox: API at /v1/, health check at /healthz" "$STATUS $CTYPE $BODY"
raw "$U/static/style.css"
is "/static/style.css: 200 text/css" "200 text/css" "$STATUS $CTYPE"
is "/static/style.css: X-Content-Type-Options nosniff" nosniff "$(header X-Content-Type-Options)"

# ---- /metrics: from 127.0.0.1 it reaches the pool; from another address
# (127.0.0.2, still this host) Apache's 403
raw "$U/metrics"
isnt "/metrics from 127.0.0.1: not refused by Apache" 403 "$STATUS"
if curl -s -o /dev/null --max-time 5 --interface 127.0.0.2 "$U/healthz" 2>/dev/null; then
	raw --interface 127.0.0.2 "$U/metrics"
	apache_error "/metrics from 127.0.0.2 -> 403" 403 forbidden
	raw --interface 127.0.0.2 "$U/healthz"
	is "/healthz from 127.0.0.2: 200 (only /metrics is the loopback's)" 200 "$STATUS"
else
	echo "# skip - cannot connect from 127.0.0.2 here: the refusal of /metrics is not checked"
fi

# ---- the Authorization header reaches the pool
raw -H "$AUTH" "$U/v1/modules"
is "a bearer token reaches the pool (CGIPassAuth): 200" 200 "$STATUS"
raw -H "$AUTH" -H "$AUTH" "$U$S"
is_error "two Authorization headers: refused by the pool (joined by Apache)" 401 unauthorized

# ---- the pool's own errors pass through untouched: its headers, its codes
raw "$U/v1/modules"
is_error "the pool's 401 passes through" 401 unauthorized
if grep -qi '^WWW-Authenticate: Bearer' "$HDRS"; then ok "the pool's 401 keeps its WWW-Authenticate"; else not_ok "the pool's 401 keeps its WWW-Authenticate ($(tr '\r\n' '  ' <"$HDRS"))"; fi
raw -H "Authorization: Bearer $OLV_ADMIN_TOKEN" "$U$S/0123456789abcdef0123456789abcdef"
is_client_error "the pool's 404 passes through" 404
is "the pool's 404: its own message" "scenario not found" "$(jqb .error.message)"
raw -X PATCH -H "Authorization: Bearer $OLV_ADMIN_TOKEN" "$U/v1/modules"
is_one_of "PATCH reaches the pool (its 404 or 405)" "$STATUS" 404 405
# HEAD: the GET's status and type; mod_proxy_fcgi drops the pool's
# Content-Length from an answer without a body (nginx keeps it)
raw -I -H "$AUTH" "$U/v1/modules"
is "HEAD /v1/modules: 200 application/json" "200 application/json" "$STATUS $CTYPE"
raw -I "$U/admin/login"
is "HEAD on the admin sign-in page: 200 text/html" "200 text/html" "$STATUS $CTYPE"

# ---- request bodies: chunked ones arrive whole (one over about 64 KiB
# included, which mod_proxy_fcgi streams without a length); 1 MiB + 1 byte
# is refused either way
F=$E2E_TMP/body.json
# 10, 150 and 1000 steps (the most a scenario has) of 600 bytes: about
# 6 KB, 95 KB and 630 KB
for n in 10 150 1000; do
	jq -nc --argjson n "$n" '{name:"chunked-apache",steps:[range(1;$n+1)|{key:"c\(.)",input:("chunk-\(.)-" + ("y" * 600))}]}' >"$F"
	size=$(stat -c %s "$F")
	raw -H "$ED" -H 'Content-Type: application/json' -H 'Transfer-Encoding: chunked' --data-binary "@$F" "$U$S"
	is "a chunked body of $size bytes: 201, all $n steps, the last one whole" \
		"201 $n chunk-$n-$(repeat_char y 600)" "$STATUS $(jqb '"\(.steps|length) \(.steps[-1].input)"')"
done
head -c 1048577 /dev/zero | tr '\0' 'a' >"$E2E_TMP/big"
raw -H "$ED" -H 'Content-Type: application/json' --data-binary "@$E2E_TMP/big" "$U$S"
is_error "a body of 1 MiB + 1 byte (Content-Length) -> 413" 413 too_large
raw -H "$ED" -H 'Content-Type: application/json' -H 'Transfer-Encoding: chunked' --data-binary "@$E2E_TMP/big" "$U$S"
is_error "a chunked body of 1 MiB + 1 byte -> 413" 413 too_large

# ---- the access log: no token, no query string
LOG=$OLIVARES_DATA/log/apache2-access.log
SECRET=olv_$(printf '%s' "$RANDOM$RANDOM$$" | sha256sum | cut -c1-64)
QSECRET=q$(printf '%s' "$RANDOM$$" | sha256sum | cut -c1-40)
raw -u "$SECRET:x" "$U/v1/modules?marker=$QSECRET"
is "a Basic-auth request is refused by the pool (401)" 401 "$STATUS"
raw -u "$SECRET:" "$U/no/such/path?access_token=$QSECRET"
is "a Basic-auth request to a missing path: 404" 404 "$STATUS"
raw -H "Authorization: Bearer $SECRET" "$U/v1/modules?token=$QSECRET"
is "a bearer request with a query string: 401" 401 "$STATUS"
if [[ -s $LOG ]]; then
	ok "the access log exists ($LOG)"
	if grep -q 'GET /no/such/path" 404 ' "$LOG" && grep -q 'GET /v1/modules" 401 ' "$LOG"; then
		ok "the access log records method, path and status"
	else
		not_ok "the access log records method, path and status ($(tail -n 3 "$LOG"))"
	fi
	if grep -q 'TRACE /v1/m/sandbox/scenarios" 405 ' "$LOG"; then
		ok "the access log records the method the client sent (TRACE), not the error page's"
	else
		not_ok "the access log records the method the client sent ($(grep -m 3 TRACE "$LOG"))"
	fi
	if grep -qF "${SECRET#olv_}" "$LOG"; then
		not_ok "no token in the access log (Basic auth user or header)"
	else
		ok "no token in the access log (Basic auth user or header)"
	fi
	if grep -qF "$QSECRET" "$LOG"; then
		not_ok "no query string in the access log"
	else
		ok "no query string in the access log"
	fi
	if grep -qF "$OLV_VIEWER_TOKEN" "$LOG" || grep -q 'olv_[0-9a-fA-F]\{64\}' "$LOG"; then
		not_ok "no API token of the test run in the access log"
	else
		ok "no API token of the test run in the access log"
	fi
else
	not_ok "the access log exists ($LOG)"
fi
ELOG=$OLIVARES_DATA/log/apache2-error.log
if [[ -f $ELOG ]] && grep -qF -e "${SECRET#olv_}" -e "$OLV_VIEWER_TOKEN" -e "$QSECRET" "$ELOG"; then
	not_ok "no token or query string in Apache's error log"
else
	ok "no token or query string in Apache's error log"
fi

# ---- the generated configuration: the pool's timeout covers the longest
# request (request_seconds_max + 15 s, at least 60 s)
longest=$("$OLIVARES_BUILD/olivares-fcgi" --check-config 2>/dev/null | sed -n 's/^# request_seconds_max = \([0-9]*\)$/\1/p')
want=$((longest + 15))
((want >= 60)) || want=60
is "the generated ProxyTimeout: request_seconds_max ($longest) + 15 s, at least 60" "$want" \
	"$(sed -n 's/^[[:space:]]*ProxyTimeout \([0-9]*\)$/\1/p' "$OLIVARES_DATA/apache/olivares.conf")"

# ---- the pool down: Apache's 503 in JSON; scripts/stack up brings it back
# and Apache uses it at once (retry=0)
FCGI_PID=$(tr -dc '0-9' <"$OLIVARES_DATA/run/olivares-fcgi.pid" 2>/dev/null)
if [[ -n $FCGI_PID ]] && kill -TERM "$FCGI_PID" 2>/dev/null; then
	for ((i = 0; i < 200; i++)); do
		olv_proc_gone "$FCGI_PID" && break
		sleep 0.05
	done
	raw -H "$AUTH" "$U/v1/modules"
	apache_error "the pool down -> 503 unavailable" 503 unavailable
	raw "$U/healthz"
	apache_error "the pool down: /healthz -> 503 unavailable" 503 unavailable
	if "$STACK" up >"$E2E_TMP/up.out" 2>"$E2E_TMP/up.err"; then ok "scripts/stack up restarts the pool"; else not_ok "scripts/stack up restarts the pool ($(tail -n 5 "$E2E_TMP/up.err"))"; fi
	raw -H "$AUTH" "$U/v1/modules"
	is "the pool is back: 200" 200 "$STATUS"
else
	not_ok "found the olivares-fcgi pid to stop"
fi

# ---- Apache's master killed with SIGKILL: its child keeps the port;
# status names it, up stops it and starts Apache again on the same port
APID=$(tr -dc '0-9' <"$OLIVARES_DATA/run/apache2.pid" 2>/dev/null)
if [[ -n $APID ]] && kill -KILL "$APID" 2>/dev/null; then
	for ((i = 0; i < 200; i++)); do
		olv_proc_gone "$APID" && break
		sleep 0.05
	done
	"$STACK" status >"$E2E_TMP/status.out" 2>&1 || true
	if grep -q '^apache2: not running (children of a dead master still hold the port: pid [0-9 ]*;' "$E2E_TMP/status.out"; then
		ok "Apache's master killed: status names the children left"
	else
		not_ok "Apache's master killed: status names the children left ($(short "$(cat "$E2E_TMP/status.out")"))"
	fi
	if "$STACK" up >"$E2E_TMP/up.out" 2>"$E2E_TMP/up.err"; then ok "scripts/stack up after Apache's master was killed"; else not_ok "scripts/stack up after Apache's master was killed ($(tail -n 5 "$E2E_TMP/up.err"))"; fi
	raw -H "$AUTH" "$U/v1/modules"
	is "Apache is back on its port: 200" 200 "$STATUS"
else
	not_ok "found Apache's master pid to kill"
fi

# ---- restart without OLIVARES_FRONTEND or OLIVARES_LAUNCHER keeps both
if env -u OLIVARES_FRONTEND -u OLIVARES_LAUNCHER -u OLIVARES_PORT "$STACK" restart >"$E2E_TMP/restart.out" 2>&1; then
	ok "scripts/stack restart"
else
	not_ok "scripts/stack restart ($(short "$(tail -n 5 "$E2E_TMP/restart.out")"))"
fi
"$STACK" status >"$E2E_TMP/status.out" 2>&1 || true
if grep -q "^apache2: running (pid [0-9]*, http://127.0.0.1:$OLIVARES_PORT)$" "$E2E_TMP/status.out"; then
	ok "restart kept Apache on its port"
else
	not_ok "restart kept Apache on its port ($(short "$(cat "$E2E_TMP/status.out")"))"
fi
if [[ ${OLIVARES_LAUNCHER:-} == spawn-fcgi ]]; then
	if grep -q '(pid [0-9]*, started by spawn-fcgi)' "$E2E_TMP/status.out"; then
		ok "restart kept spawn-fcgi as the pool's launcher"
	else
		not_ok "restart kept spawn-fcgi as the pool's launcher ($(short "$(cat "$E2E_TMP/status.out")"))"
	fi
fi
raw -H "$AUTH" "$U/v1/modules"
is "after the restart: 200" 200 "$STATUS"
done_testing
