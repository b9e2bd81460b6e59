#!/usr/bin/env bash
# t0810: paths are routed as the client sent them. nginx decodes a path and
# merges "..", "." and "//" before it picks a location; the pool routes on
# the path as sent (REQUEST_URI), so an encoded slash or dot, a %00, a
# doubled slash or a "/./" in an id position never reaches another record:
# it is a 404 (or nginx's own 400 for %00, which it refuses before the pool
# sees it), and never the second record's body. Every route that takes an
# id is checked, the API's (read from the route table, fcgi/api/routes.c,
# so a new one is not missed) and the admin view's (its table in
# fcgi/view/view.c); %00 is also sent straight to the pool's socket, where
# no web server refuses it first. Names keep working: a percent-encoded
# byte in a literal or a {name} segment is decoded (docs/api.md).
. "$(dirname "$0")/lib.sh"
e2e_require
T=$(unique rawpaths)
TK=$(new_tenant_token "$T" admin)
if [[ -n $TK ]]; then ok "a tenant for the raw-path tests"; else not_ok "a tenant for the raw-path tests"; exit 1; fi
module_on "$TK" || exit 1
M=/v1/m/sandbox
SOCK=$OLIVARES_DATA/olivares.sock
ZERO=00000000000000000000000000000000

# raw TOKEN METHOD PATH [BODY]: req, with the path sent byte for byte (curl
# would remove dot segments itself otherwise)
raw() {
	local token=$1 method=$2 path=$3
	local -a args=(-s -S --path-as-is -o "$BODY_FILE" -w '%{http_code}' -X "$method" --max-time 60)
	[[ -n $token ]] && args+=(-H "Authorization: Bearer $token")
	if (($# >= 4)); then
		printf '%s' "$4" >"$E2E_TMP/req-body"
		args+=(-H 'Content-Type: application/json' --data-binary "@$E2E_TMP/req-body")
	fi
	STATUS=$(curl "${args[@]}" "$OLIVARES_URL$path" 2>"$E2E_TMP/curl-err") || STATUS=${STATUS:-000}
	read_body
}

# ---- two records of every kind an id names ----------------------------------
STEPS='[{"key":"s1","input":"q1"},{"key":"s2","input":"q2"},{"key":"s3","input":"q3"},{"key":"s4","input":"q4"}]'
MOCKS='[{"resource":"q1","response":"a1"},{"resource":"q2","response":"a2","variant":"up"}]'
declare -A FIRST SECOND
for n in first second; do
	req "$TK" POST $M/scenarios "{\"name\":\"raw-$n\",\"steps\":$STEPS,\"mocks\":$MOCKS}"
	is_status "scenario $n created" 201
	if [[ $n == first ]]; then FIRST[scenarios]=$(jqb .id); else SECOND[scenarios]=$(jqb .id); fi
done
for n in first second; do
	if [[ $n == first ]]; then sid=${FIRST[scenarios]}; else sid=${SECOND[scenarios]}; fi
	req "$TK" POST "$M/scenarios/$sid/runs" '{}'
	is_one_of "run $n created" "$STATUS" 201 202
	if [[ $n == first ]]; then FIRST[runs]=$(jqb .id); else SECOND[runs]=$(jqb .id); fi
	req "$TK" POST $M/sessions "$(jq -c . "$OLV_ROOT/tests/fixtures/sessions/replayable.json")"
	is_status "session $n imported" 201
	if [[ $n == first ]]; then FIRST[sessions]=$(jqb .id); else SECOND[sessions]=$(jqb .id); fi
	if [[ -n ${OLV_SUITES_DIR:-} && -f $OLV_SUITES_DIR/compare-steps.json ]]; then
		req "$TK" POST $M/comparisons \
			"{\"scenario_id\":\"$sid\",\"baseline\":\"base\",\"candidate\":\"up\",\"suite\":\"compare-steps\"}"
		is_status "comparison $n created" 201
		if [[ $n == first ]]; then FIRST[comparisons]=$(jqb .id); else SECOND[comparisons]=$(jqb .id); fi
	fi
done
for k in "${!FIRST[@]}"; do
	if [[ ${FIRST[$k]}${SECOND[$k]} =~ ^[0-9a-f]{64}$ ]]; then
		ok "$k: two ids to aim at"
	else
		not_ok "$k: two ids to aim at (got '${FIRST[$k]}' '${SECOND[$k]}')"
	fi
done
MARK=$(state_counts "$TK")
req "$TK" GET "$M/scenarios/${SECOND[scenarios]}"
SECOND_SCENARIO=$(jq -cS . "$BODY_FILE")

# ---- the routes that take an id, from the tables ------------------------------
# {"GET", "/v1/m/sandbox/runs/{id}", V, SB, NOB, api_run_get},
mapfile -t API_ROUTES < <(sed -n 's/^ *{"\([A-Z]*\)", "\([^"]*{id}[^"]*\)".*/\1 \2/p' "$OLV_ROOT/fcgi/api/routes.c")
mapfile -t VIEW_ROUTES < <(sed -n 's/^ *{"\([A-Z]*\)", "\(\/admin\/[^"]*{id}[^"]*\)".*/\1 \2/p' "$OLV_ROOT/fcgi/view/view.c")
api_lines=$(grep -c '^ *{"[A-Z]*", "[^"]*{id}' "$OLV_ROOT/fcgi/api/routes.c")
if ((${#API_ROUTES[@]} >= 9 && ${#API_ROUTES[@]} == api_lines)); then
	ok "the route table has ${#API_ROUTES[@]} API routes that take an id, all read"
else
	not_ok "the route table's id routes read (got ${#API_ROUTES[@]} of $api_lines lines, at least 9 expected)"
fi
if ((${#VIEW_ROUTES[@]} >= 4)); then
	ok "the view's table has ${#VIEW_ROUTES[@]} routes that take an id"
else
	not_ok "the view's table has routes that take an id (got ${#VIEW_ROUTES[@]}, at least 4 expected)"
fi

# aim ROUTE: method, pattern, and the first (a) and second (b) record of
# the collection before its {id} from ROUTE ("METHOD PATTERN"); 1 (and a
# failed check) when the test has no records of that collection
aim() {
	local p
	method=${1%% *}
	pattern=${1#* }
	p=${pattern%%/\{id\}*}
	kind=${p##*/}
	a=${FIRST[$kind]:-}
	b=${SECOND[$kind]:-}
	if [[ -z $a || -z $b ]]; then
		not_ok "$method $pattern: no records of '$kind' to aim at (add two to this test)"
		return 1
	fi
}
# forms A B: the paths' {id} replacements aimed at B from A, one a line:
# "1 FORM" when it stays in the id position (the unknown record's 404 is
# expected, byte for byte), "0 FORM" when it adds segments (the unknown
# path's 404). %00 is separate (nginx refuses it itself).
forms() {
	local a=$1 b=$2
	printf '1 %s\n' "$a%2F..%2F$b" "$a%2f..%2f$b" "$a%2F%2e%2e%2F$b" "$a%2F%2E%2E%2F$b" \
		"%2e%2e%2F$b" "%2E%2F$b" "%2e%2e" "%2E" "..%2F$b" "$b%2F"
	printf '0 %s\n' "$a/%2e%2e/$b" "$a/%2E%2E/$b" "$a/../$b" "%2e%2e/$b" "%2E/$b" "./$b" "/$b" \
		"$a//$b" "$a/./$b" "$b/" "$b//"
}
# body of a write that would change the second record if it reached it
write_body() {
	case "$1 $2" in
	"PUT "*) printf '%s' '{"name":"hijacked"}' ;;
	"POST "*/approval) printf '%s' '{"decision":"approved","reason":"hijacked"}' ;;
	"POST "*) printf '%s' '{}' ;;
	esac
}

# ---- the API's id routes --------------------------------------------------------
for r in "${API_ROUTES[@]}"; do
	aim "$r" || continue
	body=$(write_body "$method" "$pattern")
	# the unknown record's answer on this route: what a malformed id must get
	raw "$TK" "$method" "${pattern/\{id\}/$ZERO}" ${body:+"$body"}
	unknown_status=$STATUS
	unknown=$BODY
	is "$method $pattern: an unknown id is a 404 not_found" "404 not_found" "$STATUS $(jqb .error.code)"
	bad=0
	while read -r same form; do
		path=${pattern/\{id\}/$form}
		raw "$TK" "$method" "$path" ${body:+"$body"}
		if [[ $BODY == *"$b"* || $BODY == *"$a"* ]]; then
			not_ok "$method ${path:0:120}: another record's id in the answer ($(short "$BODY"))"
			bad=1
		elif [[ $STATUS != 404 || $(jqb .error.code) != not_found ]]; then
			not_ok "$method ${path:0:120}: 404 not_found (got HTTP $STATUS $(short "$BODY"))"
			bad=1
		elif ((same)) && [[ $STATUS != "$unknown_status" || $BODY != "$unknown" ]]; then
			not_ok "$method ${path:0:120}: the unknown record's answer ($(short "$unknown"), got $(short "$BODY"))"
			bad=1
		fi
	done < <(forms "$a" "$b")
	((bad)) || ok "$method $pattern: $(forms "$a" "$b" | wc -l) encoded-slash, encoded-dot, '//' and '/./' forms are 404s, none another record"
	# %00: nginx refuses it before the pool (its 400), Apache too (its
	# 404 not_found), never a record
	raw "$TK" "$method" "${pattern/\{id\}/$b%00}" ${body:+"$body"}
	if [[ $BODY != *"$b"* ]] && { [[ $STATUS == 400 && $(jqb .error.code) == malformed ]] ||
		[[ $STATUS == 404 && $BODY == "$unknown" ]] ||
		[[ $OLV_FRONTEND == apache && $STATUS == 404 && $(jqb .error.code) == not_found ]]; }; then
		ok "$method $pattern: ID%00 is refused ($STATUS $(jqb .error.code)), not the record"
	else
		not_ok "$method $pattern: ID%00 is refused, not the record (got HTTP $STATUS $(short "$BODY"))"
	fi
done
is "nothing was written by the paths aimed at the records" "$MARK" "$(state_counts "$TK")"
req "$TK" GET "$M/scenarios/${SECOND[scenarios]}"
is "the second scenario is unchanged (version, name)" "$SECOND_SCENARIO" "$(jq -cS . "$BODY_FILE")"

# ---- %00 straight to the pool: no web server refuses it there ---------------------
# fcgi METHOD URI: one request without a body through cgi-fcgi (libfcgi-bin),
# with the token; STATUS and BODY from its answer
fcgi() {
	local uri=$2
	env -i PATH="$PATH" REQUEST_METHOD="$1" REQUEST_URI="$uri" SCRIPT_NAME="${uri%%\?*}" \
		QUERY_STRING= CONTENT_LENGTH=0 GATEWAY_INTERFACE=CGI/1.1 REMOTE_ADDR=127.0.0.1 \
		HTTP_AUTHORIZATION="Bearer $TK" \
		timeout 30 cgi-fcgi -bind -connect "$SOCK" </dev/null >"$E2E_TMP/fcgi.out" 2>/dev/null
	STATUS=$(sed -n 's/^Status: \([0-9]*\).*/\1/p' "$E2E_TMP/fcgi.out" | head -n 1)
	BODY=$(sed '1,/^\r\{0,1\}$/d' "$E2E_TMP/fcgi.out")
}
if command -v cgi-fcgi >/dev/null 2>&1 && [[ -S $SOCK ]]; then
	a=${FIRST[scenarios]}
	b=${SECOND[scenarios]}
	fcgi GET "$M/scenarios/$b"
	is "straight to the pool: the second scenario itself is 200" 200 "$STATUS"
	fcgi GET "$M/scenarios/$ZERO"
	unknown=$BODY
	is "straight to the pool: an unknown id is the 404 'scenario not found'" \
		'404 {"error":{"code":"not_found","message":"scenario not found"}}' "$STATUS $unknown"
	for form in "$b%00" "%00" "$a%00%2F..%2F$b" "$a%2F..%2F$b" "$b%2F"; do
		fcgi GET "$M/scenarios/$form"
		is "straight to the pool: GET scenarios/${form:0:60} is the unknown record's 404" "404 $unknown" "$STATUS $BODY"
	done
	fcgi GET "$M/runs/${SECOND[runs]}%00/outputs"
	is "straight to the pool: GET runs/ID%00/outputs is the 404 'run not found'" \
		'404 run not found' "$STATUS $(jq -r .error.message <<<"$BODY" 2>/dev/null)"
	# without nginx's $request_uri, the decoded DOCUMENT_URI is still routed
	env -i PATH="$PATH" REQUEST_METHOD=GET DOCUMENT_URI="$M/scenarios/$b" SCRIPT_NAME="$M/scenarios/$b" \
		QUERY_STRING= CONTENT_LENGTH=0 GATEWAY_INTERFACE=CGI/1.1 REMOTE_ADDR=127.0.0.1 \
		HTTP_AUTHORIZATION="Bearer $TK" \
		timeout 30 cgi-fcgi -bind -connect "$SOCK" </dev/null >"$E2E_TMP/fcgi.out" 2>/dev/null
	is "straight to the pool without REQUEST_URI: DOCUMENT_URI is routed (200)" 200 \
		"$(sed -n 's/^Status: \([0-9]*\).*/\1/p' "$E2E_TMP/fcgi.out" | head -n 1)"
else
	not_ok "%00 straight to the pool needs cgi-fcgi (libfcgi-bin) and the socket $SOCK"
fi

# ---- names: a percent-encoded byte in a literal or a {name} segment is decoded -----
b=${SECOND[scenarios]}
raw "$TK" GET "$M/%73cenarios/$b"
is "GET /v1/m/sandbox/%73cenarios/ID: a literal is matched decoded (200, the scenario)" \
	"200 $b" "$STATUS $(jqb .id)"
raw "$TK" PUT /v1/modules/sand%62ox '{"enabled":true}'
is "PUT /v1/modules/sand%62ox: the module's route (200)" "200 sandbox" "$STATUS $(jqb .name)"
raw "$TK" PUT /v1/modules/bo%67us '{"enabled":true}'
is "PUT /v1/modules/bo%67us: the name decoded in the message" \
	"404 unknown module bogus (known: sandbox)" "$STATUS $(jqb .error.message)"
raw "$TK" PUT /v1/modules/a%2Fb '{"enabled":true}'
is "PUT /v1/modules/a%2Fb: a decoded slash stays in the name" \
	"404 unknown module a/b (known: sandbox)" "$STATUS $(jqb .error.message)"
raw "$TK" PUT /v1/modules/a%FFb '{"enabled":true}'
is "PUT /v1/modules/a%FFb: a name that is not UTF-8 is no route (404)" \
	"404 no such resource" "$STATUS $(jqb .error.message)"
raw "$TK" GET "$M/scenarios%2F$b"
is "GET scenarios%2FID: a decoded slash never splits a literal (404)" "404 no such resource" \
	"$STATUS $(jqb .error.message)"
raw "$TK" GET "/v1/m/sandbox/scenarios/$b"
is "GET scenarios/ID: the plain path still reads the record" "200 $b" "$STATUS $(jqb .id)"

# ---- the admin view's id routes ---------------------------------------------------
page_req() {
	local method=$1 path=$2
	shift 2
	STATUS=$(curl -s -S --path-as-is -o "$BODY_FILE" -w '%{http_code}' -X "$method" --max-time 60 \
		-H "Cookie: olivares_session=$SESSION" "$@" "$OLIVARES_URL$path" 2>"$E2E_TMP/curl-err") || STATUS=${STATUS:-000}
	read_body
}
title() { sed -n 's:.*<title>\([^<]*\)</title>.*:\1:p' "$BODY_FILE" | head -n 1; }
SESSION=$(curl -s -o /dev/null -D - -X POST --data-urlencode "token=$TK" "$OLIVARES_URL/admin/login" |
	sed -n 's/^[Ss]et-[Cc]ookie: olivares_session=\([^;]*\).*/\1/p' | head -n 1)
page_req GET /admin/
CSRF=$(xmllint --html --xpath 'string(//form[@id="signout"]//input[@name="csrf"]/@value)' "$BODY_FILE" 2>/dev/null)
if [[ -n $SESSION && -n $CSRF ]]; then ok "signed in to the view"; else not_ok "signed in to the view (session, csrf)"; fi
# the sign-in is audited: count from here
MARK=$(state_counts "$TK")
page_req GET "/admin/scenarios/${SECOND[scenarios]}"
is "view: the second scenario's page itself is 200" 200 "$STATUS"
page_req GET "/admin/%73cenarios/${SECOND[scenarios]}"
is "view: a literal is matched decoded there too (200)" 200 "$STATUS"
for r in "${VIEW_ROUTES[@]}"; do
	aim "$r" || continue
	args=()
	[[ $method == POST ]] && args=(-H "Origin: ${OLIVARES_URL%/}" --data "csrf=$CSRF&variant=hijack&decision=approved&reason=hijack")
	page_req "$method" "${pattern/\{id\}/$ZERO}" "${args[@]}"
	unknown="$STATUS $(title)"
	is "view $method $pattern: an unknown id is the 404 page" "404 Not found · olivares sandbox" "$unknown"
	bad=0
	while read -r _ form; do
		path=${pattern/\{id\}/$form}
		page_req "$method" "$path" "${args[@]}"
		if [[ $BODY == *"$b"* ]]; then
			not_ok "view $method ${path:0:120}: the second record's id in the page"
			bad=1
		elif [[ "$STATUS $(title)" != "$unknown" && $STATUS != 404 ]]; then
			not_ok "view $method ${path:0:120}: a 404 (got HTTP $STATUS $(title))"
			bad=1
		fi
	done < <(forms "$a" "$b")
	((bad)) || ok "view $method $pattern: every form is a 404, none the second record"
	page_req "$method" "${pattern/\{id\}/$b%00}" "${args[@]}"
	if [[ $BODY != *"$b"* && ($STATUS == 400 || $STATUS == 404) ]]; then
		ok "view $method $pattern: ID%00 is refused ($STATUS)"
	else
		not_ok "view $method $pattern: ID%00 is refused (got HTTP $STATUS)"
	fi
done
is "nothing was written through the view's paths either" "$MARK" "$(state_counts "$TK")"

done_testing
