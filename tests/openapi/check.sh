#!/usr/bin/env bash
# tests/openapi/check.sh [BUILD]: the OpenAPI document of the REST API,
# docs/openapi.json, against the route table of the build directory's
# olivares-fcgi (BUILD, default $OLIVARES_BUILD, else ./build) and against
# the OpenAPI 3.1 schema:
#
#   - it is JSON, "openapi" is 3.1.0 and info.version is configure.ac's;
#   - every route of `olivares-fcgi --list-routes` is an operation of the
#     document (a missing one fails, named), and every operation of the
#     document is a route (one that names no route fails, named);
#   - each operation's x-olivares-min-role, x-olivares-scope,
#     x-olivares-module and x-olivares-idempotent are its route's, and its
#     security is none for a public route and bearer for the others;
#   - every {param} of a path is declared as a path parameter of each of
#     its operations, and none that is not in the path;
#   - the npm validator @seriousme/openapi-schema-validator (pinned by
#     tests/openapi/package-lock.json, installed with `npm ci` when
#     tests/openapi/node_modules is missing) passes it, and refuses a
#     broken copy (so that a validator that accepts anything fails here).
#
# One line per check ("ok - ..." or "not ok - ..."), then "N passed, M
# failed"; exit 1 on any failure. Needs jq, node and npm.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
BUILD=${1:-${OLIVARES_BUILD:-build}}
# OLIVARES_OPENAPI_DOC: another document to check (a broken copy, to see
# this script fail)
DOC=${OLIVARES_OPENAPI_DOC:-docs/openapi.json}
DIR=tests/openapi

PASSED=0
FAILED=0
pass() {
	PASSED=$((PASSED + 1))
	echo "ok - $1"
}
fail() {
	FAILED=$((FAILED + 1))
	echo "not ok - $1"
}
finish() {
	echo "$PASSED passed, $FAILED failed"
	((FAILED == 0))
	exit
}
TMP=$(mktemp -d /tmp/olivares-openapi.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

# --- the document itself
if ! jq -e . "$DOC" >/dev/null 2>"$TMP/jq.err"; then
	fail "$DOC is JSON ($(head -n 1 "$TMP/jq.err"))"
	finish
fi
pass "$DOC is JSON"
v=$(jq -r .openapi "$DOC")
if [[ $v == 3.1.0 ]]; then pass "openapi is 3.1.0"; else fail "openapi is 3.1.0 (got $v)"; fi
want=$(sed -n 's/^AC_INIT(\[[^]]*\], \[\([^]]*\)\].*/\1/p' configure.ac)
v=$(jq -r .info.version "$DOC")
if [[ -n $want && $v == "$want" ]]; then
	pass "info.version is configure.ac's ($want)"
else
	fail "info.version is configure.ac's (document $v, configure.ac $want)"
fi

# --- the routes, both ways
if ! "$BUILD/olivares-fcgi" --list-routes >"$TMP/routes.tsv" 2>"$TMP/routes.err" || [[ ! -s $TMP/routes.tsv ]]; then
	fail "$BUILD/olivares-fcgi --list-routes ($(head -n 1 "$TMP/routes.err"))"
	finish
fi
pass "$BUILD/olivares-fcgi --list-routes: $(wc -l <"$TMP/routes.tsv") routes"
# one line an operation, as --list-routes prints a route: METHOD PATTERN
# ROLE SCOPE MODULE IDEMPOTENT
jq -r '.paths | to_entries[] | .key as $p | .value | to_entries[]
	| select(.key | IN("get","put","post","delete","patch","head","options","trace"))
	| [(.key | ascii_upcase), $p, (.value["x-olivares-min-role"] // "?"),
	   (.value["x-olivares-scope"] // "?"), (.value["x-olivares-module"] // "-"),
	   (if .value["x-olivares-idempotent"] == true then "idempotent" else "-" end)] | @tsv' \
	"$DOC" >"$TMP/doc.tsv"
cut -f1,2 "$TMP/routes.tsv" | sort >"$TMP/routes.keys"
cut -f1,2 "$TMP/doc.tsv" | sort >"$TMP/doc.keys"
missing=$(comm -23 "$TMP/routes.keys" "$TMP/doc.keys" | tr '\t' ' ')
extra=$(comm -13 "$TMP/routes.keys" "$TMP/doc.keys" | tr '\t' ' ')
dups=$(uniq -d "$TMP/routes.keys" | tr '\t' ' ')
if [[ -z $missing ]]; then
	pass "every route is in the document"
else
	while IFS= read -r r; do fail "route missing from $DOC: $r"; done <<<"$missing"
	# a skeleton of each missing operation, from what the route table
	# says of it, to fill in (summary, body, answers) and add under "paths"
	echo "# skeletons of the missing operations (fill in and add under \"paths\"):"
	comm -23 "$TMP/routes.keys" "$TMP/doc.keys" | while IFS=$'\t' read -r m p; do
		awk -F '\t' -v m="$m" -v p="$p" '$1 == m && $2 == p' "$TMP/routes.tsv" | head -n 1 |
			jq -R 'split("\t")
			| (.[1] | split("/") | map(select(. != "" and . != "v1" and . != "m"
				and . != "sandbox" and (startswith("{") | not)))) as $segs
			| {(.[1]): {(.[0] | ascii_downcase): ({
				operationId: ((.[0] | ascii_downcase) + ($segs | map(gsub("[^A-Za-z0-9]"; "")
					| (.[0:1] | ascii_upcase) + .[1:]) | join(""))),
				summary: (.[0] + " " + .[1]), tags: [$segs[0] // "api"],
				"x-olivares-min-role": .[2], "x-olivares-scope": .[3],
				"x-olivares-module": (if .[4] == "-" then null else .[4] end)}
				+ (if .[5] == "idempotent" then {"x-olivares-idempotent": true} else {} end)
				+ {security: (if .[2] == "none" then [] else [{bearer: []}] end),
				   parameters: ([.[1] | scan("\\{([^}]+)\\}") | .[0]
				     | if . == "id" then {"$ref": "#/components/parameters/Id"}
				       else {name: ., in: "path", required: true, schema: {type: "string"}} end]
				     + (if .[5] == "idempotent" then [{"$ref": "#/components/parameters/IdempotencyKey"}] else [] end)),
				   responses: {"200": {description: ("the answer of " + .[0] + " " + .[1])},
				     "400": {"$ref": "#/components/responses/BadRequest"},
				     "401": {"$ref": "#/components/responses/Unauthorized"},
				     "403": {"$ref": "#/components/responses/Forbidden"},
				     "404": {"$ref": "#/components/responses/NotFound"},
				     "405": {"$ref": "#/components/responses/MethodNotAllowed"},
				     "503": {"$ref": "#/components/responses/ServiceUnavailable"}}})}}' | sed 's/^/#   /'
	done
fi
if [[ -z $extra ]]; then
	pass "every operation of the document is a route"
else
	while IFS= read -r r; do fail "$DOC names a route that does not exist: $r"; done <<<"$extra"
fi
if [[ -z $dups ]]; then
	pass "no route is listed twice"
else
	while IFS= read -r r; do fail "route listed twice by --list-routes: $r"; done <<<"$dups"
fi
# role, scope, module, idempotency of each route the document has
bad=$(join -t $'\t' -j 1 \
	<(sort "$TMP/routes.tsv" | awk -F '\t' -v OFS='\t' '{ print $1 " " $2, $3, $4, $5, $6 }' | sort) \
	<(awk -F '\t' -v OFS='\t' '{ print $1 " " $2, $3, $4, $5, $6 }' "$TMP/doc.tsv" | sort) |
	awk -F '\t' '$2 != $6 || $3 != $7 || $4 != $8 || $5 != $9 {
		printf "%s: route %s/%s/%s/%s, document %s/%s/%s/%s\n", $1, $2, $3, $4, $5, $6, $7, $8, $9 }')
if [[ -z $bad ]]; then
	pass "each operation's min role, scope, module and idempotency are its route's"
else
	while IFS= read -r r; do fail "x-olivares-* (role/scope/module/idempotent) differ: $r"; done <<<"$bad"
fi
# security: none for a public route, bearer for the others
bad=$(jq -r '.paths | to_entries[] | .key as $p | .value | to_entries[]
	| select(.key | IN("get","put","post","delete","patch"))
	| select(.value.security != (if .value["x-olivares-min-role"] == "none" then [] else [{"bearer": []}] end))
	| "\(.key | ascii_upcase) \($p)"' "$DOC")
if [[ -z $bad ]]; then
	pass "security: none on the public routes, bearer on the others"
else
	while IFS= read -r r; do fail "security does not match the route's role: $r"; done <<<"$bad"
fi
# path parameters: resolve the component references, then compare
bad=$(jq -r '. as $d | .paths | to_entries[] | .key as $p | .value | to_entries[]
	| select(.key | IN("get","put","post","delete","patch")) | (.key | ascii_upcase) as $m
	| [(.value.parameters // [])[] | if has("$ref") then ($d.components.parameters[.["$ref"] | split("/") | last]) else . end
	   | select(.in == "path") | .name] | sort as $declared
	| ([$p | scan("\\{([^}]+)\\}") | .[0]] | sort) as $in_path
	| select($declared != $in_path)
	| "\($m) \($p): path has \($in_path | join(",")), declared \($declared | join(","))"' "$DOC")
if [[ -z $bad ]]; then
	pass "every {param} of a path is declared as a path parameter, and only those"
else
	while IFS= read -r r; do fail "path parameters: $r"; done <<<"$bad"
fi

# --- the npm validator
# shellcheck source=scripts/lib/deps.sh
. scripts/lib/deps.sh
if ! olv_openapi_deps >"$TMP/npm.log" 2>&1; then
	tail -n 20 "$TMP/npm.log"
	fail "the npm packages of tests/openapi are installed (npm ci)"
	finish
fi
validator_version=$(jq -r .version "$DIR/node_modules/@seriousme/openapi-schema-validator/package.json")
if "$DIR/node_modules/.bin/validate-api" "$DOC" >"$TMP/validate.out" 2>&1 && jq -e '.valid == true' "$TMP/validate.out" >/dev/null 2>&1; then
	pass "@seriousme/openapi-schema-validator $validator_version: $DOC is a valid OpenAPI 3.1 document"
else
	head -c 4000 "$TMP/validate.out"
	echo
	fail "@seriousme/openapi-schema-validator $validator_version: $DOC is a valid OpenAPI 3.1 document"
fi
# the validator must refuse what is not one: a response without its
# description and an operation's parameter in a place that does not exist
jq '.paths["/healthz"].get.responses["200"] |= del(.description)
	| .paths["/v1/m/sandbox/runs"].get.parameters[0] = {"name": "x", "in": "body"}' "$DOC" >"$TMP/broken.json"
if "$DIR/node_modules/.bin/validate-api" "$TMP/broken.json" >"$TMP/broken.out" 2>&1 && jq -e '.valid == true' "$TMP/broken.out" >/dev/null 2>&1; then
	fail "the validator refuses a broken copy of the document (it accepted it)"
else
	pass "the validator refuses a broken copy of the document"
fi

finish
