# shellcheck shell=bash
# Helpers for the end-to-end tests (tests/e2e/t*.sh). Source it first.
#
# Environment (set by tests/e2e/run.sh):
#   OLIVARES_URL           http://127.0.0.1:PORT of the stack under test (nginx,
#                          or Apache)
#   OLIVARES_FRONTEND      nginx (unset) or apache: the stack's front end
#   OLIVARES_LAUNCHER      olivares-fcgi (unset) or spawn-fcgi: what started
#                          its pool
#   OLV_ADMIN_TOKEN        admin of tenant "demo"   (also OLIVARES_TOKEN)
#   OLV_EDITOR_TOKEN       editor of tenant "demo"
#   OLV_VIEWER_TOKEN       viewer of tenant "demo"
#   OLIVARES_DATA, OLIVARES_PORT, OLIVARES_DSN, OLIVARES_BUILD: the stack's own
#                          environment, so a test can run olivares-admin or
#                          restart the stack with scripts/stack
#   PATH                   starts with the build dir (olivares, olivares-admin)
#
# Every check prints one line: "ok - description" or
# "not ok - description (expected X, got Y)". run.sh counts them.

set -uo pipefail

E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export OLV_ROOT
OLV_ROOT=$(cd "$E2E_DIR/../.." && pwd)
E2E_FAILS=0
E2E_TMP=$(mktemp -d "${TMPDIR:-/tmp}/olv-e2e.XXXXXX")
trap 'rm -rf "$E2E_TMP"' EXIT

# Last HTTP exchange (req, req_file): STATUS, BODY (text), BODY_FILE.
STATUS=
BODY=
BODY_FILE=$E2E_TMP/last-body

ok() { printf 'ok - %s\n' "$1"; }
not_ok() {
	printf 'not ok - %s\n' "$1"
	E2E_FAILS=$((E2E_FAILS + 1))
}

# is DESC EXPECTED GOT: string equality
is() {
	if [[ $2 == "$3" ]]; then
		ok "$1"
	else
		not_ok "$1 (expected $(short "$2"), got $(short "$3"))"
	fi
}

# isnt DESC UNEXPECTED GOT
isnt() {
	if [[ $2 != "$3" ]]; then
		ok "$1"
	else
		not_ok "$1 (expected anything but $(short "$2"), got it)"
	fi
}

# is_one_of DESC GOT A B ...: GOT is one of the listed values
is_one_of() {
	local desc=$1 got=$2 v
	shift 2
	for v in "$@"; do
		if [[ $got == "$v" ]]; then
			ok "$desc"
			return 0
		fi
	done
	not_ok "$desc (expected one of: $*, got $(short "$got"))"
}

# short TEXT: TEXT quoted on one line, cut to 200 bytes
short() {
	local s
	s=$(printf '%s' "$1" | head -c 200 | tr '\n' '~')
	if ((${#1} > 200)); then s="$s...(${#1} bytes)"; fi
	printf '"%s"' "$s"
}

# test_fail DESC: a check that failed for a reason given in DESC
test_fail() { not_ok "$1"; }

# done_testing: exit status of the test file
done_testing() {
	if ((E2E_FAILS > 0)); then exit 1; fi
	exit 0
}

# the stack's front end: nginx or apache (scripts/stack's OLIVARES_FRONTEND)
OLV_FRONTEND=${OLIVARES_FRONTEND:-nginx}

# need_frontend NAME WHAT: end the test file with one ok line (WHAT:
# skipped ...) unless the stack runs behind NAME (nginx or apache): a test
# of that web server's own answers, configuration or processes
need_frontend() {
	if [[ $OLV_FRONTEND != "$1" ]]; then
		echo "# skip - this stack runs behind $OLV_FRONTEND, not $1"
		ok "$2: skipped (not behind $1)"
		done_testing
	fi
}

# usage_of TENANT JQ: one figure of TENANT's line of `olivares-admin
# tenant usage --json` (JQ: a filter of that line, e.g. .total_bytes)
usage_of() {
	admin_cli tenant usage --json 2>/dev/null | jq -r --arg n "$1" ".tenants[] | select(.name == \$n) | $2"
}

# need_os_agent AGENT WHAT: end the test file with one ok line (WHAT:
# skipped ...) unless this stack was started by run.sh --fresh, which
# provisions AGENT in its agents directory, and the namespaces backend's
# preflight passes on this host
need_os_agent() {
	if [[ ! -x ${OLV_AGENTS_DIR:-}/$1 ]]; then
		echo "# skip - this stack was not started by run.sh --fresh (no $1 agent)"
		ok "$2: skipped (no $1 agent on this stack)"
		done_testing
	fi
	if ! "$OLIVARES_BUILD/olivares-runner" --preflight namespaces >/dev/null 2>&1; then
		echo "# skip - the namespaces backend's preflight fails on this host"
		ok "$2: skipped (no namespaces backend)"
		done_testing
	fi
}

# os_backends: OS_BACKENDS is "namespaces", and "namespaces gvisor" where
# gvisor's preflight passes on this host (a comment line says when not)
# shellcheck disable=SC2034 # OS_BACKENDS is read by the test files
os_backends() {
	OS_BACKENDS=namespaces
	if "$OLIVARES_BUILD/olivares-runner" --preflight gvisor >/dev/null 2>&1; then
		OS_BACKENDS="namespaces gvisor"
	else
		echo "# gvisor: skipped here (its preflight fails)"
	fi
}

# The POSTs that start runs answer 202 with the queued record at once; the
# tests wait for the end as the CLI does, with Prefer: wait=60 (201 and the
# finished record), unless E2E_NO_WAIT=1 (a test of the queue itself).
# run_wait_header METHOD PATH: that header in WAIT_HEADER, or "" (no
# command substitution: on a slow host every fork counts)
run_wait_header() {
	WAIT_HEADER=
	if [[ $1 == POST && ${E2E_NO_WAIT:-0} != 1 && $2 =~ /(runs|replays|comparisons)(\?.*)?$ ]]; then
		WAIT_HEADER='Prefer: wait=60'
	fi
}

# read_body: BODY from BODY_FILE, empty when there is none ($(<FILE) reads
# it without a fork)
read_body() {
	BODY=
	if [[ -f $BODY_FILE ]]; then BODY=$(<"$BODY_FILE"); fi
}

# req TOKEN METHOD PATH [BODY]: HTTP request through nginx. TOKEN "" sends no
# Authorization header. BODY (a string) is sent as is. Sets STATUS and BODY.
req() {
	local token=$1 method=$2 path=$3
	local -a args=(-s -S -o "$BODY_FILE" -w '%{http_code}' -X "$method" --max-time 90)
	if [[ -n $token ]]; then
		args+=(-H "Authorization: Bearer $token")
	fi
	run_wait_header "$method" "$path"
	if [[ -n $WAIT_HEADER ]]; then
		args+=(-H "$WAIT_HEADER")
	fi
	if (($# >= 4)); then
		printf '%s' "$4" >"$E2E_TMP/req-body"
		args+=(-H 'Content-Type: application/json' --data-binary "@$E2E_TMP/req-body")
	fi
	STATUS=$(curl "${args[@]}" "$OLIVARES_URL$path" 2>"$E2E_TMP/curl-err") || STATUS=${STATUS:-000}
	read_body
}

# req_file TOKEN METHOD PATH FILE [CURL-ARGS...]: same, body read from FILE
# byte for byte (binary safe).
req_file() {
	local token=$1 method=$2 path=$3 file=$4
	shift 4
	local -a args=(-s -S -o "$BODY_FILE" -w '%{http_code}' -X "$method" --max-time 90
		-H 'Content-Type: application/json' --data-binary "@$file")
	if [[ -n $token ]]; then
		args+=(-H "Authorization: Bearer $token")
	fi
	run_wait_header "$method" "$path"
	if [[ -n $WAIT_HEADER ]]; then
		args+=(-H "$WAIT_HEADER")
	fi
	STATUS=$(curl "${args[@]}" "$@" "$OLIVARES_URL$path" 2>"$E2E_TMP/curl-err") || STATUS=${STATUS:-000}
	read_body
}

# jqb FILTER: FILTER applied to the last body (raw output); "" when the body
# is not JSON.
jqb() {
	jq -r "$1" "$BODY_FILE" 2>/dev/null
}

# is_status DESC EXPECTED: the last status
is_status() {
	if [[ $STATUS == "$2" ]]; then
		ok "$1"
	else
		not_ok "$1 (expected HTTP $2, got HTTP $STATUS: $(short "$BODY"))"
	fi
}

# is_error DESC STATUS CODE: the last answer is the JSON error shape
# {"error":{"code":CODE,"message":…}} with that status
is_error() {
	local desc=$1 st=$2 code=$3 got msg
	got=$(jqb '.error.code // empty')
	msg=$(jqb '.error.message // empty')
	if [[ $STATUS == "$st" && $got == "$code" && -n $msg ]]; then
		ok "$desc"
	else
		not_ok "$desc (expected HTTP $st with error code $code and a message, got HTTP $STATUS: $(short "$BODY"))"
	fi
}

# is_client_error DESC STATUS: the last answer has this status and a JSON
# error with a code and a message (any code)
is_client_error() {
	local desc=$1 st=$2 got
	got=$(jqb '.error.code // empty')
	if [[ $STATUS == "$st" && -n $got ]]; then
		ok "$desc"
	else
		not_ok "$desc (expected HTTP $st with a JSON error, got HTTP $STATUS: $(short "$BODY"))"
	fi
}

# no_5xx DESC: the last status is a real answer below 500
no_5xx() {
	if [[ $STATUS =~ ^[1-4][0-9][0-9]$ ]]; then
		ok "$1"
	else
		not_ok "$1 (expected a status below 500, got HTTP $STATUS)"
	fi
}

# admin_cli ARGS...: olivares-admin on the stack under test
admin_cli() {
	olivares-admin "$@"
}

# new_tenant_token NAME ROLE: create tenant NAME (if new) and print a fresh
# API token of ROLE for it (empty output when olivares-admin failed).
new_tenant_token() {
	local name=$1 role=$2
	admin_cli tenant create "$name" >/dev/null 2>&1 || true
	admin_cli token create --tenant "$name" --role "$role"
}

# unique NAME: NAME with a random suffix (tenant names across test runs on
# one database)
unique() {
	printf '%s-%s%s\n' "$1" "$$" "$RANDOM"
}

# module_on TOKEN / module_off TOKEN: switch the sandbox module (admin token)
module_set() {
	req "$1" PUT /v1/modules/sandbox "{\"enabled\":$2}"
	if [[ $STATUS != 200 ]]; then
		not_ok "PUT /v1/modules/sandbox enabled=$2 (expected HTTP 200, got HTTP $STATUS: $(short "$BODY"))"
		return 1
	fi
}
module_on() { module_set "$1" true; }
module_off() { module_set "$1" false; }

# count_all TOKEN PATH KEY: number of items in PATH's KEY array, paging with
# limit/offset until a short page
count_all() {
	local token=$1 path=$2 key=$3 off=0 n total=0 sep='?'
	[[ $path == *\?* ]] && sep='&'
	while :; do
		req "$token" GET "$path${sep}limit=100&offset=$off"
		if [[ $STATUS != 200 ]]; then
			echo "ERR$STATUS"
			return 1
		fi
		n=$(jqb ".$key | length")
		total=$((total + n))
		if ((n < 100)); then break; fi
		off=$((off + 100))
	done
	echo "$total"
}

# state_counts TOKEN: "scenarios=N runs=M audit=K/NEWEST" of the token's
# tenant: K audit events (one page, at most 500) and the id of the newest
# (events come newest first), so any new event changes the line. Audit needs
# an admin token.
state_counts() {
	local token=$1 s r a
	s=$(count_all "$token" /v1/m/sandbox/scenarios scenarios)
	r=$(count_all "$token" /v1/m/sandbox/runs runs)
	req "$token" GET '/v1/m/sandbox/audit?limit=500'
	if [[ $STATUS == 200 ]]; then
		a=$(jqb '"\(.events|length)/\(.events[0].id // "none")"')
	else
		a=ERR$STATUS
	fi
	printf 'scenarios=%s runs=%s audit=%s\n' "$s" "$r" "$a"
}

# audit_since TOKEN ID: the actions of the audit events newer than event ID
# (oldest first, space separated); ERR when ID is not in the last 500
audit_since() {
	req "$1" GET '/v1/m/sandbox/audit?limit=500'
	jq -r --arg id "$2" '.events as $e | ([$e[].id]|index($id)) as $i
		| if $i == null then "ERR" else [$e[0:$i][].action]|reverse|join(" ") end' "$BODY_FILE" 2>/dev/null || echo ERR
}

# is_append_only ADMIN VIEWER PATH ID NOUN ITEM_BODY COLLECTION_BODY: the
# record PATH/ID admits no rewrite: PUT, DELETE and PATCH of PATH/ID and PUT
# and DELETE of PATH, with the admin token, each answer 405, and the record
# reads back (viewer) exactly as before. The caller checks that nothing else
# changed, with the counts it keeps.
is_append_only() {
	local admin=$1 viewer=$2 path=$3 id=$4 noun=$5 item_body=$6 coll_body=$7
	local name=${path##*/} doc_before m
	req "$viewer" GET "$path/$id"
	doc_before=$(jq -cS . "$BODY_FILE")
	for m in PUT DELETE PATCH; do
		req "$admin" "$m" "$path/$id" "$item_body"
		is "admin $m /$name/ID: 405" 405 "$STATUS"
	done
	for m in PUT DELETE; do
		req "$admin" "$m" "$path" "$coll_body"
		is "admin $m /$name: 405" 405 "$STATUS"
	done
	req "$viewer" GET "$path/$id"
	is "the $noun is unchanged after PUT/DELETE" "$doc_before" "$(jq -cS . "$BODY_FILE")"
}

# repeat_char CHAR N: CHAR (one byte) N times
repeat_char() {
	head -c "$2" /dev/zero | tr '\0' "$1"
}

# db_sql SQL: run SQL on the stack's store, printing what it selects
# (SQLite: sqlite3 on the data dir's file, waiting up to 10 s for the
# server's writers; PostgreSQL: psql with OLIVARES_DSN's server, port,
# database and user). Exit status 2 when the store cannot be reached from
# here, else psql's or sqlite3's. For a test that must make the store say
# what no request can (a run finished long ago).
db_sql() {
	if [[ -z ${OLIVARES_DSN:-} ]]; then
		[[ -f $OLIVARES_DATA/olivares.db ]] && command -v sqlite3 >/dev/null || return 2
		sqlite3 -batch -noheader -cmd '.timeout 10000' "$OLIVARES_DATA/olivares.db" "$1"
		return
	fi
	command -v psql >/dev/null || return 2
	local kv x h="" p="" d="" u=""
	IFS=';' read -ra kv <<<"$OLIVARES_DSN"
	for x in "${kv[@]}"; do
		case ${x,,} in
		servername=* | server=* | host=*) h=${x#*=} ;;
		port=*) p=${x#*=} ;;
		database=* | dbname=*) d=${x#*=} ;;
		username=* | uid=* | user=*) u=${x#*=} ;;
		esac
	done
	[[ -n $h && -n $d ]] || return 2
	PGCONNECT_TIMEOUT=5 psql -X -q -A -t -v ON_ERROR_STOP=1 -h "$h" ${p:+-p "$p"} ${u:+-U "$u"} \
		-d "$d" -c "$1"
}

# in_tmp FILE: path of FILE in this test's temp dir
in_tmp() { printf '%s/%s\n' "$E2E_TMP" "$1"; }

# Checks that the environment is complete; run by every test.
e2e_require() {
	local v
	for v in OLIVARES_URL OLV_ADMIN_TOKEN OLV_EDITOR_TOKEN OLV_VIEWER_TOKEN OLIVARES_DATA; do
		if [[ -z ${!v:-} ]]; then
			echo "not ok - environment: $v is not set (run tests/e2e/run.sh)"
			exit 1
		fi
	done
}
