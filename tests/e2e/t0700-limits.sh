#!/usr/bin/env bash
# Every limit at its edge: the exact maximum passes, one byte or one item
# more fails with a clear error, no partial sample, and nothing written
# (scenarios, runs and audit events counted before and after each refusal).
# Runs in a tenant of its own so the counts are exact.
. "$(dirname "$0")/lib.sh"
e2e_require
T=$(unique limits)
TK=$(new_tenant_token "$T" admin)
if [[ -n $TK ]]; then ok "a tenant for the limit tests"; else not_ok "a tenant for the limit tests"; exit 1; fi
module_on "$TK" || exit 1
G=/v1/m/sandbox/synthetic-data
S=/v1/m/sandbox/scenarios
F=$E2E_TMP/body

# gen_body SUBJECT COUNT SEED-FILE: a generate request in $F
gen_body() {
	jq -n --arg s "$1" --argjson c "$2" --rawfile t "$3" '{subject_kind:$s,count:$c,seed:$t}' >"$F"
}

# refused DESC STATUS CODE: the last answer is that error, with no sample,
# and nothing was written since the last `mark`
mark() { MARK=$(state_counts "$TK"); }
refused() {
	local desc=$1 st=$2 code=$3 now
	is_error "$desc: HTTP $st $code" "$st" "$code"
	is "$desc: no partial sample" false "$(jq 'has("samples")' "$BODY_FILE" 2>/dev/null || echo false)"
	now=$(state_counts "$TK")
	is "$desc: nothing written" "$MARK" "$now"
}

# --- count 1..100
mark
req "$TK" POST $G '{"count":100}'
is_status "count 100: 200" 200
is "count 100: 100 samples, last agent-sample-100" "100 agent-sample-100" "$(jqb '"\(.samples|length) \(.samples[99].input)"')"
mark
req "$TK" POST $G '{"count":101}'
refused "count 101" 422 limit_exceeded
req "$TK" POST $G '{"count":0}'
is_client_error "count 0: 422" 422
req "$TK" POST $G '{"count":-1}'
is_client_error "count -1: 422" 422
req "$TK" POST $G '{"count":1000000000000}'
is_client_error "count 10^12: 422" 422
is "counts out of range wrote nothing" "$MARK" "$(state_counts "$TK")"

# --- subject <= 200 bytes (UTF-8 bytes of the decoded text)
printf '%s' '{{subject_kind}}' >"$E2E_TMP/t-subj"
gen_body "$(repeat_char s 200)" 1 "$E2E_TMP/t-subj"
req_file "$TK" POST $G "$F"
is_status "subject 200 bytes: 200" 200
is "subject 200 bytes: the input is the subject" 200 "$(jqb '.samples[0].input|utf8bytelength')"
mark
gen_body "$(repeat_char s 201)" 1 "$E2E_TMP/t-subj"
req_file "$TK" POST $G "$F"
refused "subject 201 bytes" 422 limit_exceeded
e100=$(printf 'é%.0s' $(seq 100))
gen_body "$e100" 1 "$E2E_TMP/t-subj"
req_file "$TK" POST $G "$F"
is_status "subject of 100 two-byte characters (200 bytes): 200" 200
mark
gen_body "${e100}s" 1 "$E2E_TMP/t-subj"
req_file "$TK" POST $G "$F"
refused "subject of 100 two-byte characters + 1 byte (201 bytes, 101 characters)" 422 limit_exceeded

# --- template <= 8192 bytes
repeat_char a 8192 >"$E2E_TMP/t8192"
gen_body agent 1 "$E2E_TMP/t8192"
req_file "$TK" POST $G "$F"
is_status "template 8192 bytes: 200" 200
is "template 8192 bytes: input of 8192 bytes" 8192 "$(jqb '.samples[0].input|utf8bytelength')"
mark
repeat_char a 8193 >"$E2E_TMP/t8193"
gen_body agent 1 "$E2E_TMP/t8193"
req_file "$TK" POST $G "$F"
refused "template 8193 bytes" 422 limit_exceeded

# --- each generated input <= 8192 bytes (a 200-byte subject in a short template)
{ repeat_char a 7992; printf '%s' '{{subject_kind}}'; } >"$E2E_TMP/t-in8192"
gen_body "$(repeat_char x 200)" 2 "$E2E_TMP/t-in8192"
req_file "$TK" POST $G "$F"
is_status "generated input of 8192 bytes (template 8008): 200" 200
is "generated input of 8192 bytes" "8192 8192" "$(jqb '"\(.samples[0].input|utf8bytelength) \(.samples[1].input|utf8bytelength)"')"
mark
{ repeat_char a 7993; printf '%s' '{{subject_kind}}'; } >"$E2E_TMP/t-in8193"
gen_body "$(repeat_char x 200)" 2 "$E2E_TMP/t-in8193"
req_file "$TK" POST $G "$F"
refused "generated input of 8193 bytes (template 8009)" 422 limit_exceeded
# only the 10th input crosses the limit: the whole request fails
{ repeat_char a 8183; printf '%s' '{{index}}'; } >"$E2E_TMP/t-idx"
gen_body agent 9 "$E2E_TMP/t-idx"
req_file "$TK" POST $G "$F"
is_status "inputs of 8184 bytes (count 9): 200" 200
mark
{ repeat_char a 8191; printf '%s' '{{index}}'; } >"$E2E_TMP/t-idx"
gen_body agent 10 "$E2E_TMP/t-idx"
req_file "$TK" POST $G "$F"
refused "only input 10 is 8193 bytes: the batch fails whole" 422 limit_exceeded

# --- the encoded batch must fit the scenarios API's 1 MiB
gen_body agent 100 "$E2E_TMP/t8192"
req_file "$TK" POST $G "$F"
is_status "100 inputs of 8192 plain bytes (fits 1 MiB encoded): 200" 200
is "100 inputs of 8192 bytes returned" "100 8192" "$(jqb '"\(.samples|length) \(.samples[99].input|utf8bytelength)"')"
mark
repeat_char '"' 8192 >"$E2E_TMP/tq"
gen_body agent 100 "$E2E_TMP/tq"
req_file "$TK" POST $G "$F"
refused "100 inputs of 8192 quotes (1.6 MiB once JSON-escaped)" 422 limit_exceeded

# --- scenario name <= 128 bytes, description <= 1024 bytes
scen() { jq -n --arg n "$1" --arg d "$2" '{name:$n,description:$d,steps:[{input:"a"}]}' >"$F"; }
scen "$(repeat_char n 128)" ""
req_file "$TK" POST $S "$F"
is_status "name 128 bytes: 201" 201
mark
scen "$(repeat_char n 129)" ""
req_file "$TK" POST $S "$F"
refused "name 129 bytes" 422 limit_exceeded
scen n "$(repeat_char d 1024)"
req_file "$TK" POST $S "$F"
is_status "description 1024 bytes: 201" 201
mark
scen n "$(repeat_char d 1025)"
req_file "$TK" POST $S "$F"
refused "description 1025 bytes" 422 limit_exceeded

# --- request body: exactly 1 MiB passes the size check, 1 MiB + 1 gets 413
# big_body N: a scenario-create body of exactly N bytes (real content, then
# JSON whitespace up to N)
big_body() {
	local n=$1
	jq -nc --arg x "$(repeat_char a 7000)" \
		'{name:"one-mebibyte",steps:[range(0;127)|{key:"s\(.)",input:$x}]}' >"$F"
	local have
	have=$(stat -c %s "$F")
	if ((have > n)); then
		echo "big_body: base too large ($have)" >&2
		return 1
	fi
	repeat_char ' ' $((n - have)) >>"$F"
}
big_body 1048576
is "the 1 MiB body is 1048576 bytes" 1048576 "$(stat -c %s "$F")"
mark
req_file "$TK" POST $S "$F"
is_one_of "nginx: a body of exactly 1 MiB passes the size check (201, or 422 from validation; not 413)" "$STATUS" 201 422
if [[ $STATUS == 201 ]]; then
	is "the 1 MiB scenario was stored whole" "127 7000" "$(jqb '"\(.steps|length) \(.steps[126].input|length)"')"
fi
big_body 1048577
mark
req_file "$TK" POST $S "$F"
refused "nginx: a body of 1 MiB + 1 byte" 413 too_large
req_file "$TK" POST $G "$F"
refused "nginx: generate with a body of 1 MiB + 1 byte" 413 too_large

# --- the same directly on the FastCGI socket (no nginx in front)
SOCK=$OLIVARES_DATA/olivares.sock
# fcgi METHOD URI BODYFILE [CONTENT_LENGTH]: one FastCGI request with
# cgi-fcgi (libfcgi-bin); STATUS and BODY from its answer
fcgi() {
	local method=$1 uri=$2 file=$3 len=${4:-}
	[[ -n $len ]] || len=$(stat -c %s "$file")
	env -i PATH="$PATH" REQUEST_METHOD="$method" REQUEST_URI="$uri" SCRIPT_NAME="$uri" \
		DOCUMENT_URI="$uri" QUERY_STRING= CONTENT_TYPE=application/json CONTENT_LENGTH="$len" \
		SERVER_PROTOCOL=HTTP/1.1 GATEWAY_INTERFACE=CGI/1.1 REMOTE_ADDR=127.0.0.1 \
		SERVER_NAME=localhost SERVER_PORT=0 HTTP_AUTHORIZATION="Bearer $TK" \
		timeout 30 cgi-fcgi -bind -connect "$SOCK" <"$file" >"$E2E_TMP/fcgi.out" 2>/dev/null
	STATUS=$(sed -n '1,/^\r\{0,1\}$/{s/^Status: \([0-9][0-9][0-9]\).*/\1/p}' "$E2E_TMP/fcgi.out" | head -n 1)
	[[ -n $STATUS ]] || STATUS=$(grep -q . "$E2E_TMP/fcgi.out" && echo 200 || echo 000)
	sed '1,/^\r\{0,1\}$/d' "$E2E_TMP/fcgi.out" >"$BODY_FILE"
	read_body
}
if command -v cgi-fcgi >/dev/null 2>&1 && [[ -S $SOCK ]]; then
	printf '{}' >"$E2E_TMP/empty"
	fcgi GET /v1/modules "$E2E_TMP/empty" 0
	is_status "direct FastCGI: GET /v1/modules answers" 200
	get_len=$(wc -c <"$BODY_FILE")
	# a HEAD: the GET's head, Content-Length included, and no body
	fcgi HEAD /v1/modules "$E2E_TMP/empty" 0
	is_status "direct FastCGI: HEAD /v1/modules answers as the GET" 200
	is "direct FastCGI: HEAD /v1/modules writes no body" 0 "$(wc -c <"$BODY_FILE")"
	is "direct FastCGI: HEAD /v1/modules: the GET's Content-Length" "$get_len" \
		"$(sed -n '1,/^\r\{0,1\}$/{s/^Content-Length: *\([0-9]*\).*/\1/p}' "$E2E_TMP/fcgi.out")"
	fcgi HEAD /admin/login "$E2E_TMP/empty" 0
	is_status "direct FastCGI: HEAD on the sign-in page answers" 200
	is "direct FastCGI: HEAD on the sign-in page writes no body" 0 "$(wc -c <"$BODY_FILE")"
	big_body 1048576
	mark
	fcgi POST $S "$F"
	is_one_of "direct FastCGI: a body of exactly 1 MiB passes the size check (201 or 422, not 413)" "$STATUS" 201 422
	big_body 1048577
	mark
	fcgi POST $S "$F"
	refused "direct FastCGI: a body of 1 MiB + 1 byte" 413 too_large
	mark
	fcgi POST $S "$E2E_TMP/empty" 104857600
	refused "direct FastCGI: CONTENT_LENGTH of 100 MiB refused without the body" 413 too_large
	mark
	fcgi POST $S "$E2E_TMP/empty" 10737418240
	is_one_of "direct FastCGI: CONTENT_LENGTH of 10 GiB refused (413, or 400 as an unparsable length)" "$STATUS" 413 400
	is "direct FastCGI: CONTENT_LENGTH of 10 GiB: nothing written" "$MARK" "$(state_counts "$TK")"
else
	not_ok "direct FastCGI checks need cgi-fcgi (libfcgi-bin) and the socket $SOCK"
fi
done_testing
