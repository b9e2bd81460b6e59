#!/usr/bin/env bash
# What nginx answers itself is the API's JSON error shape
# {"error":{"code","message"}} with nginx's status, never an HTML page: bad
# request lines and headers (NUL, "/../" above the root, two Authorization
# headers), a header or URI too large, TRACE, an unknown Transfer-Encoding,
# paths outside the routes, the pool down (502). The pool's own JSON errors
# pass through untouched (no fastcgi_intercept_errors). The access log holds
# no credential: no Basic-auth user, no query string.
. "$(dirname "$0")/lib.sh"
# shellcheck source=../../scripts/lib/common.sh
. "$OLV_ROOT/scripts/lib/common.sh"
e2e_require
need_frontend nginx "nginx's own answers"
STACK=$OLV_ROOT/scripts/stack
HDRS=$E2E_TMP/headers

# whatever happens below, leave the stack up for the next test
trap '"$STACK" status >/dev/null 2>&1 || "$STACK" up >/dev/null 2>&1; rm -rf "$E2E_TMP"' EXIT

# raw CURL-ARGS...: a request with any curl arguments (URL included); sets
# STATUS, BODY and CTYPE (the Content-Type, without parameters)
raw() {
	STATUS=$(curl -s -S -o "$BODY_FILE" -D "$HDRS" -w '%{http_code}' --max-time 30 "$@" 2>"$E2E_TMP/curl-err") || STATUS=${STATUS:-000}
	read_body
	CTYPE=$(tr -d '\r' <"$HDRS" | sed -n 's/^[Cc]ontent-[Tt]ype: *\([^;]*\).*/\1/p' | tail -n 1)
}

# nginx_error DESC STATUS CODE: the last answer is nginx's JSON error page
# (status, code, a message, type application/json, no HTML)
nginx_error() {
	is_error "$1" "$2" "$3"
	is "$1: Content-Type" application/json "$CTYPE"
	if grep -qi '<html' "$BODY_FILE"; then not_ok "$1: no HTML"; else ok "$1: no HTML"; fi
}

U=$OLIVARES_URL
AUTH="Authorization: Bearer $OLV_VIEWER_TOKEN"
S=/v1/m/sandbox/scenarios

# ---- requests nginx refuses before the pool sees them
raw -H "$AUTH" "$U$S/0123456789abcdef0123456789abcdef%00"
nginx_error "NUL (%00) in the path -> 400" 400 malformed
raw --path-as-is "$U/v1/../../etc/passwd"
nginx_error "/../ above the root -> 400" 400 malformed
raw -H "$AUTH" -H "$AUTH" "$U$S"
nginx_error "two Authorization headers -> 400" 400 malformed
raw -H "$AUTH" -H "X-Big: $(repeat_char a 100000)" "$U$S"
nginx_error "a 100 KB header -> 400 header_too_large" 400 header_too_large
raw -H "$AUTH" "$U/v1/m/sandbox/$(repeat_char a 9000)"
nginx_error "a 9 KB URI -> 414" 414 uri_too_long
raw -X TRACE -H "$AUTH" "$U$S"
nginx_error "TRACE -> 405" 405 method_not_allowed
raw -H "$AUTH" -H 'Transfer-Encoding: gzip, chunked' -H 'Content-Type: application/json' --data-binary '{}' "$U$S"
nginx_error "Transfer-Encoding: gzip, chunked -> 501" 501 not_implemented
raw "$U/no/such/path"
nginx_error "a path outside the routes -> 404" 404 not_found
raw "$U/static/no-such-file.css"
nginx_error "a missing static file -> 404 (JSON, not text/css)" 404 not_found
raw "$U/.olivares-error/502"
nginx_error "the error pages are internal (-> 404)" 404 not_found
raw -I "$U/no/such/path"
is "HEAD on a missing path: 404" 404 "$STATUS"
is "HEAD on a missing path: Content-Type" application/json "$CTYPE"
head -c 1048577 /dev/zero | tr '\0' 'a' >"$E2E_TMP/big"
raw -H "$AUTH" -H 'Content-Type: application/json' --data-binary "@$E2E_TMP/big" "$U$S"
nginx_error "a body of 1 MiB + 1 byte -> 413" 413 too_large

# ---- the pool's own errors pass through untouched: its headers, its codes
raw "$U/v1/modules"
is_error "the pool's 401 passes through" 401 unauthorized
if grep -qi '^WWW-Authenticate: Bearer' "$HDRS"; then ok "the pool's 401 keeps its WWW-Authenticate"; else not_ok "the pool's 401 keeps its WWW-Authenticate ($(tr '\r\n' '  ' <"$HDRS"))"; fi
raw -H "Authorization: Bearer $OLV_ADMIN_TOKEN" "$U/v1/m/sandbox/scenarios/0123456789abcdef0123456789abcdef"
is_client_error "the pool's 404 passes through" 404
if grep -qi '^Cache-Control: no-store' "$HDRS"; then ok "the pool's 404 keeps its Cache-Control"; else not_ok "the pool's 404 keeps its Cache-Control ($(tr '\r\n' '  ' <"$HDRS"))"; fi
raw -X PATCH -H "Authorization: Bearer $OLV_ADMIN_TOKEN" "$U/v1/modules"
is_one_of "PATCH reaches the pool (its 404 or 405, not nginx's)" "$STATUS" 404 405
if grep -qi '^Cache-Control: no-store' "$HDRS"; then ok "PATCH: answered by the pool"; else not_ok "PATCH: answered by the pool ($(tr '\r\n' '  ' <"$HDRS"))"; fi

# ---- HEAD is the GET without its body (RFC 9110 §9.3.2), in the API and
# the admin view, and every Allow that lists GET lists HEAD (that the pool
# writes no body for a HEAD is checked on its socket, in t0700: nginx drops
# one anyway)
header() { tr -d '\r' <"$HDRS" | sed -n "s/^$1: *//Ip" | tail -n 1; }
raw -H "$AUTH" "$U/v1/modules"
get_status=$STATUS
get_len=$(wc -c <"$BODY_FILE")
raw -I -H "$AUTH" "$U/v1/modules"
is "HEAD /v1/modules: the GET's status (200)" "200 200" "$get_status $STATUS"
is "HEAD /v1/modules: Content-Type" application/json "$CTYPE"
is "HEAD /v1/modules: the GET's Content-Length" "$get_len" "$(header Content-Length)"
raw -I "$U/v1/modules"
is "HEAD without a token: 401, as the GET" 401 "$STATUS"
raw -X DELETE -H "$AUTH" "$U/v1/modules"
is "DELETE /v1/modules: 405" 405 "$STATUS"
is "DELETE /v1/modules: Allow lists HEAD beside GET" "GET, HEAD" "$(header Allow)"
raw -I -H "$AUTH" "$U/v1/modules/sandbox"
is "HEAD on a PUT-only resource: 405" 405 "$STATUS"
is "HEAD on a PUT-only resource: Allow" PUT "$(header Allow)"
raw "$U/admin/login"
get_len=$(wc -c <"$BODY_FILE")
raw -I "$U/admin/login"
is "HEAD on the sign-in page: 200" 200 "$STATUS"
is "HEAD on the sign-in page: Content-Type" text/html "$CTYPE"
is "HEAD on the sign-in page: the page's Content-Length" "$get_len" "$(header Content-Length)"
raw -X PUT "$U/admin/login"
is "PUT on the sign-in page: 405" 405 "$STATUS"
is "PUT on the sign-in page: Allow" "GET, HEAD, POST" "$(header Allow)"
raw -X PUT "$U/admin/logout"
is "PUT on the sign-out (POST only): 405, Allow: POST" "405 POST" "$STATUS $(header Allow)"
raw -X PUT "$U/admin/runs"
is "PUT on the runs list (GET only): 405, Allow: GET, HEAD" "405 GET, HEAD" "$STATUS $(header Allow)"
raw -X PUT "$U/admin/no-such-page"
is "PUT on no page: 404" 404 "$STATUS"

# ---- the access log: no token, no query string
LOG=$OLIVARES_DATA/log/nginx-access.log
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
	if grep -q 'GET /no/such/path"' "$LOG" && grep -q 'GET /v1/modules"' "$LOG"; then
		ok "the access log records method and path"
	else
		not_ok "the access log records method and path ($(tail -n 3 "$LOG"))"
	fi
	if grep -q 'TRACE /v1/m/sandbox/scenarios"' "$LOG"; then
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
ELOG=$OLIVARES_DATA/log/nginx-error.log
if [[ -f $ELOG ]] && grep -qF -e "${SECRET#olv_}" -e "$OLV_VIEWER_TOKEN" "$ELOG"; then
	not_ok "no token in the nginx error log"
else
	ok "no token in the nginx error log"
fi

# ---- the pool down: nginx's 502 in JSON; scripts/stack up brings it back
FCGI_PID=$(tr -dc '0-9' <"$OLIVARES_DATA/run/olivares-fcgi.pid" 2>/dev/null)
if [[ -n $FCGI_PID ]] && kill -TERM "$FCGI_PID" 2>/dev/null; then
	# the master stops its workers before it exits
	for ((i = 0; i < 200; i++)); do
		olv_proc_gone "$FCGI_PID" && break
		sleep 0.05
	done
	raw -H "$AUTH" "$U/v1/modules"
	nginx_error "the pool down -> 502 unavailable" 502 unavailable
	raw "$U/healthz"
	nginx_error "the pool down: /healthz -> 502 unavailable" 502 unavailable
	if "$STACK" up >"$E2E_TMP/up.out" 2>"$E2E_TMP/up.err"; then ok "scripts/stack up restarts the pool"; else not_ok "scripts/stack up restarts the pool ($(tail -n 5 "$E2E_TMP/up.err"))"; fi
	raw -H "$AUTH" "$U/v1/modules"
	is "the pool is back: 200" 200 "$STATUS"
else
	not_ok "found the olivares-fcgi pid to stop"
fi
done_testing
