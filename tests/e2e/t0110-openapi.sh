#!/usr/bin/env bash
# The OpenAPI document (GET /v1/openapi.json) through nginx: public (no
# token, or a bad one), application/json, byte for byte the repository's
# docs/openapi.json, OpenAPI 3.1.0 with configure.ac's version; HEAD and
# the 405 of another method; and each operation it marks as needing a
# token answers 401 without one (its security is the server's).
. "$(dirname "$0")/lib.sh"
e2e_require
DOC=$OLV_ROOT/docs/openapi.json
P=/v1/openapi.json

req "" GET $P
is_status "no token: 200" 200
is "openapi is 3.1.0" "3.1.0" "$(jqb .openapi)"
want=$(sed -n 's/^AC_INIT(\[[^]]*\], \[\([^]]*\)\].*/\1/p' "$OLV_ROOT/configure.ac")
is "info.version is configure.ac's" "$want" "$(jqb .info.version)"
if cmp -s "$BODY_FILE" "$DOC"; then
	ok "the body is docs/openapi.json byte for byte"
else
	not_ok "the body is docs/openapi.json byte for byte ($(wc -c <"$BODY_FILE") bytes served, $(wc -c <"$DOC") in the file)"
fi
is "it lists the paths of the file" "$(jq -c '.paths|keys' "$DOC")" "$(jqb '.paths|keys|tojson')"

hdrs=$(in_tmp headers)
curl -s -S -D "$hdrs" -o /dev/null --max-time 30 "$OLIVARES_URL$P" || true
ct=$(grep -i '^content-type:' "$hdrs" | tr -d '\r' | cut -d' ' -f2-)
is "Content-Type application/json" "application/json" "$ct"

req "olv_$(repeat_char 0 64)" GET $P
is_status "a bad token is not looked at: 200" 200

code=$(curl -s -S -I -o "$hdrs" -w '%{http_code}' --max-time 30 "$OLIVARES_URL$P" || true)
is "HEAD: 200" 200 "$code"
len=$(grep -i '^content-length:' "$hdrs" | tr -d '\r' | cut -d' ' -f2)
if [[ $OLV_FRONTEND == apache ]]; then
	# mod_proxy_fcgi drops the pool's Content-Length from an answer
	# without a body (docs/apache.md)
	is "HEAD behind Apache: no Content-Length" "" "$len"
else
	is "HEAD: Content-Length is the document's size" "$(wc -c <"$DOC" | tr -d ' ')" "$len"
fi

req "" POST $P '{}'
is_error "POST: 405" 405 method_not_allowed

# every operation that needs a token answers 401 without one
jq -r '.paths | to_entries[] | .key as $p | .value | to_entries[]
	| select(.key | IN("get","put","post","delete")) | select(.value.security != [])
	| "\(.key | ascii_upcase) \($p)"' "$DOC" >"$(in_tmp ops)"
n=0
bad=
while read -r method path; do
	path=${path//\{id\}/$(repeat_char 0 32)}
	path=${path//\{name\}/bogus}
	if [[ $method == GET || $method == DELETE ]]; then req "" "$method" "$path"; else req "" "$method" "$path" '{}'; fi
	n=$((n + 1))
	if [[ $STATUS != 401 || $(jqb .error.code) != unauthorized ]]; then
		bad="$bad $method $path -> $STATUS;"
	fi
done <"$(in_tmp ops)"
is "each of the $n operations with bearer security answers 401 without a token" "" "$bad"
isnt "the document has operations that need a token" 0 "$n"

done_testing
