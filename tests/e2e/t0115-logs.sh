#!/usr/bin/env bash
# t0115: the server's log is one JSON object per line (docs/operations.md,
# "Logs"). A path that carries a newline, a forged JSON line and a terminal
# escape stays inside its own line, escaped, through nginx and straight to
# the pool's socket (where no web server encodes it first); every reply
# carries X-Request-Id, the client's own when it is a valid one, and the
# request's access line has that id; an authenticated request's line names
# its tenant and token ids and holds no part of the token, not even one
# pasted into the query string.
. "$(dirname "$0")/lib.sh"
e2e_require
LOG=$OLIVARES_DATA/log/olivares-fcgi.log
SOCK=$OLIVARES_DATA/olivares.sock
HDR=$E2E_TMP/headers

# get ID PATH [CURL-ARGS...]: GET through nginx with X-Request-Id ID (none
# when ID is ""), the path sent byte for byte; sets STATUS, BODY, and the
# reply's headers in $HDR
get() {
	local id=$1 path=$2
	shift 2
	local -a args=(-s -S --path-as-is -D "$HDR" -o "$BODY_FILE" -w '%{http_code}' --max-time 30)
	[[ -n $id ]] && args+=(-H "X-Request-Id: $id")
	STATUS=$(curl "${args[@]}" "$@" "$OLIVARES_URL$path" 2>"$E2E_TMP/curl-err") || STATUS=${STATUS:-000}
	read_body
}

# reply_id: the X-Request-Id of the last reply ("" when it has none)
reply_id() {
	tr -d '\r' <"$HDR" | sed -n 's/^[Xx]-[Rr]equest-[Ii][Dd]: //p' | head -n 1
}

# access_line ID: the access line of the request ID (compact JSON), "" when
# there is none (it is written before the reply is flushed; a few tries
# cover a slow file system)
access_line() {
	local i l
	for i in 1 2 3 4 5 6 7 8 9 10; do
		l=$(grep -aF "\"request_id\":\"$1\"" "$LOG" | jq -c 'select(.msg == "request")' 2>/dev/null | tail -n 1)
		if [[ -n $l ]]; then
			printf '%s\n' "$l"
			return 0
		fi
		sleep 0.2
	done
}

# field LINE FILTER: FILTER applied to the JSON LINE (raw output)
field() { jq -r "$2" <<<"$1" 2>/dev/null; }

if [[ -r $LOG ]]; then ok "the server's log is at $LOG"; else not_ok "the server's log is at $LOG"; done_testing; fi

# ---- (a) a forged path, unauthenticated -------------------------------------
ID=t0115.forged:$$-$RANDOM
FORGED='/v1/x%0A%7B%22level%22%3A%22error%22%7D%1B%5B31m'
get "$ID" "$FORGED"
is_status "the forged path through nginx: a 404" 404
is "the reply carries the client's X-Request-Id" "$ID" "$(reply_id)"
L=$(access_line "$ID")
if [[ -n $L ]]; then ok "the request's access line has the id the client sent"; else not_ok "the request's access line has the id the client sent ($(short "$(tail -n 3 "$LOG")"))"; fi
is "its path is the path as sent (nginx passes it undecoded)" "$FORGED" "$(field "$L" .path)"
is "its method, status and level" "GET 404 info" "$(field "$L" '"\(.method) \(.status) \(.level)"')"
is "its error code" "not_found" "$(field "$L" .error)"
is "no tenant or token id for an unauthenticated request" "null null" "$(field "$L" '"\(.tenant_id) \(.token_id)"')"
if [[ $(field "$L" '.duration_ms | type') == number && $(field "$L" '.duration_ms >= 0') == true ]]; then
	ok "its duration_ms is a number"
else
	not_ok "its duration_ms is a number ($(short "$L"))"
fi
is "its time is UTC with milliseconds" 1 \
	"$(field "$L" .time | grep -cE '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$')"
is "its prog and pid" "olivares-fcgi yes" "$(field "$L" '"\(.prog) \(if (.pid | type) == "number" and .pid > 1 then "yes" else "no" end)"')"

# the same, raw, straight to the pool: a newline, a forged line, ESC, DEL,
# the 8-bit CSI and a byte that is not UTF-8 in the path as it arrives
RAW=$'/v1/x\n{"level":"error","msg":"forged login ok"}\e[31m\x7f\xc2\x9b\xff'
RAW_LOGGED=$'/v1/x\n{"level":"error","msg":"forged login ok"}\e[31m\x7f\xc2\x9b\\xff'
ID2=t0115-raw-$$-$RANDOM
if command -v cgi-fcgi >/dev/null 2>&1 && [[ -S $SOCK ]]; then
	env -i PATH="$PATH" REQUEST_METHOD=GET REQUEST_URI="$RAW" SCRIPT_NAME=/v1/x QUERY_STRING= \
		CONTENT_LENGTH=0 GATEWAY_INTERFACE=CGI/1.1 REMOTE_ADDR=127.0.0.1 HTTP_X_REQUEST_ID="$ID2" \
		timeout 30 cgi-fcgi -bind -connect "$SOCK" </dev/null >"$E2E_TMP/raw.out" 2>/dev/null
	is "the raw path straight to the pool: a 404" 404 \
		"$(sed -n 's/^Status: \([0-9]*\).*/\1/p' "$E2E_TMP/raw.out" | head -n 1)"
	is "with the X-Request-Id it was sent" "$ID2" \
		"$(tr -d '\r' <"$E2E_TMP/raw.out" | sed -n 's/^X-Request-Id: //p' | head -n 1)"
	L=$(access_line "$ID2")
	is "its access line holds the path, decoded back by a JSON reader (the stray byte as \\xff)" \
		yes "$(jq -r --arg p "$RAW_LOGGED" 'if .path == $p then "yes" else .path end' <<<"$L" 2>/dev/null)"
	# a method that is not text either (no web server would pass it)
	env -i PATH="$PATH" REQUEST_METHOD=$'G\xff\nT' REQUEST_URI=/healthz SCRIPT_NAME=/healthz \
		QUERY_STRING= CONTENT_LENGTH=0 GATEWAY_INTERFACE=CGI/1.1 REMOTE_ADDR=127.0.0.1 \
		HTTP_X_REQUEST_ID="$ID2-m" timeout 30 cgi-fcgi -bind -connect "$SOCK" </dev/null >/dev/null 2>&1
	L=$(access_line "$ID2-m")
	is "a method that is not UTF-8: in its access line, escaped" $'G\\xff\nT 405' \
		"$(field "$L" '"\(.method) \(.status)"')"
	if grep -q '^{"level":"error","msg":"forged' "$LOG" || grep -qa 'forged login ok"}' "$LOG"; then
		not_ok "the forged line starts no line of its own and is never written as it is"
	else
		ok "the forged line starts no line of its own and is never written as it is"
	fi
else
	not_ok "a raw path straight to the pool needs cgi-fcgi (libfcgi-bin) and the socket"
fi

# every line of the log is one JSON object, and no control byte (ESC, DEL,
# C1) nor any byte above 0x7e is in the file
n=$(wc -l <"$LOG")
bad=$(jq -R -r '. as $l | try (fromjson | if type == "object" then empty else $l end) catch $l' "$LOG" 2>&1 | head -n 3)
if ((n > 0)) && [[ -z $bad ]]; then
	ok "every line of the log ($n) is one JSON object"
else
	not_ok "every line of the log ($n) is one JSON object ($(short "$bad"))"
fi
XLOG=$OLIVARES_DATA/log/olivares-executor.log
if [[ -s $XLOG ]]; then
	bad=$(jq -R -r '. as $l | try (fromjson | if type == "object" and .prog == "olivares-executor" then empty else $l end) catch $l' "$XLOG" 2>&1 | head -n 3)
	if [[ -z $bad ]]; then ok "every line of the executor's log is one JSON object"; else not_ok "every line of the executor's log is one JSON object ($(short "$bad"))"; fi
	is "the executor logged its registration" 1 \
		"$(jq -r 'select(.level == "info" and (.msg | test("^executor .* registered$"))) | "x"' "$XLOG" 2>/dev/null | head -n 1 | wc -l)"
else
	ok "the executor's log: skipped (no $XLOG on this stack)"
fi
is "no raw ESC byte in the log" 0 "$(grep -c $'\e' "$LOG")"
is "no byte outside printable ASCII in the log (DEL, C1, a stray byte)" 0 \
	"$(LC_ALL=C grep -c '[^ -~]' "$LOG")"

# ---- (b) an authenticated request: tenant and token ids, no token -----------
T=$(unique logs)
TENANT_ID=$(admin_cli tenant create "$T" 2>/dev/null | sed -n 's/^tenant_id=//p')
TK=$(admin_cli token create --tenant "$T" --role viewer 2>/dev/null)
TOKEN_ID=$(admin_cli token list --tenant "$T" 2>/dev/null | cut -f 1 | head -n 1)
if [[ -n $TENANT_ID && $TK == olv_* && -n $TOKEN_ID ]]; then
	ok "a tenant and a viewer token of its own"
else
	not_ok "a tenant and a viewer token of its own (tenant '$TENANT_ID', token id '$TOKEN_ID')"
fi
ID3=t0115-auth-$$-$RANDOM
# a client that pastes its token into the query string as well
get "$ID3" "/v1/modules?token=$TK&access_token=${TK#olv_}" -H "Authorization: Bearer $TK"
is_status "GET /v1/modules with the token" 200
is "the reply carries the id" "$ID3" "$(reply_id)"
L=$(access_line "$ID3")
is "its access line: method, path without the query, status" "GET /v1/modules 200" \
	"$(field "$L" '"\(.method) \(.path) \(.status)"')"
is "its tenant_id is the tenant's" "$TENANT_ID" "$(field "$L" .tenant_id)"
is "its token_id is the token's" "$TOKEN_ID" "$(field "$L" .token_id)"
# no 12 characters in a row of the token's secret anywhere in the log
leaks=0
secret=${TK#olv_}
for ((i = 0; i + 12 <= ${#secret}; i += 4)); do
	grep -qF "${secret:i:12}" "$LOG" && leaks=$((leaks + 1))
done
is "no part of the token in the log (the header nor the query string)" 0 "$leaks"
# nginx's access log names the id the pool replied, to join the two logs
NGINX_LOG=$OLIVARES_DATA/log/nginx-access.log
if [[ -r $NGINX_LOG ]]; then
	is "nginx's access line of the request ends with its id" 1 \
		"$(grep -c "\"GET /v1/modules\" 200 .* rid=$ID3\$" "$NGINX_LOG")"
else
	ok "nginx's access log: skipped (not at $NGINX_LOG: another front end)"
fi
get "$ID3-bad" /v1/modules -H "Authorization: Bearer olv_$(repeat_char 0 64)"
is_status "an unknown token: 401" 401
L=$(access_line "$ID3-bad")
is "its access line: 401, no tenant" "401 null unauthorized" "$(field "$L" '"\(.status) \(.tenant_id) \(.error)"')"

# ---- (c) no id, or one that is not valid: a generated one -------------------
get "" /healthz
GEN=$(reply_id)
if [[ $GEN =~ ^[0-9a-f]{32}$ ]]; then ok "no X-Request-Id sent: a generated one (32 hex) comes back"; else not_ok "no X-Request-Id sent: a generated one (32 hex) comes back (got '$GEN')"; fi
L=$(access_line "$GEN")
is "the generated id is in the request's access line" "GET /healthz" "$(field "$L" '"\(.method) \(.path)"')"
get "" /healthz
isnt "each request gets its own" "$GEN" "$(reply_id)"
for bad in 'two words' "$(repeat_char a 65)" 'a/b' 'x"y'; do
	get "$bad" /healthz
	got=$(reply_id)
	if [[ $got =~ ^[0-9a-f]{32}$ && $got != "$bad" ]]; then
		ok "an X-Request-Id that is not 1..64 of [A-Za-z0-9._:-] ($(short "$bad")) is replaced"
	else
		not_ok "an X-Request-Id that is not 1..64 of [A-Za-z0-9._:-] ($(short "$bad")) is replaced (got '$got')"
	fi
done
get "$(repeat_char b 64)" /healthz
is "64 characters are kept" "$(repeat_char b 64)" "$(reply_id)"

# every reply carries it: an error, a HEAD, the admin view's page
get "t0115-post" /v1/m/sandbox/scenarios -X POST -H 'Content-Type: application/json' --data-binary '{'
is "a 401 carries it" "401 t0115-post" "$STATUS $(reply_id)"
get "t0115-head" /healthz -I
is "a HEAD carries it" "t0115-head" "$(reply_id)"
L=$(access_line t0115-head)
is "a HEAD's access line says HEAD" "HEAD" "$(field "$L" .method)"
get "t0115-view" /admin
if [[ $STATUS =~ ^(200|303)$ && $(reply_id) == t0115-view ]]; then
	ok "the admin view's reply carries it"
else
	not_ok "the admin view's reply carries it (HTTP $STATUS, id '$(reply_id)')"
fi
done_testing
