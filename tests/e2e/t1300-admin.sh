#!/usr/bin/env bash
# The admin HTML view (docs/admin-view.md), through nginx with
# curl, selecting on the markup contract with xmllint's HTML parser:
#   - the security headers on pages, redirects and error pages (CSP exactly,
#     nosniff, Referrer-Policy, X-Frame-Options DENY, no-store, text/html);
#   - sign-in: the cookie's flags, the session stored hashed (SQLite:
#     sqlite3 on the data dir's database; PostgreSQL: psql when the DSN can
#     be read), the CSRF token as the contract computes it; bad token 401;
#     sign-out ends the session;
#   - CSRF: a form without csrf, with a wrong one, with another session's:
#     403 and nothing changed (scenarios, runs, audit through the API);
#   - roles: a viewer posting the run form gets 403, sees no form it may
#     not submit; an editor no compare, module or audit; bearer tokens on
#     pages (no cookie, no csrf needed); another tenant's ids: 404;
#     cross-origin POSTs: 403; not signed in: 303 to /admin/login;
#   - the pages' values (runs, the walkthrough's mock miss, comparisons,
#     replays, audit), filters and pagination, HTML payloads shown as text;
#   - the module switched off and on from the overview form;
#   - every page parses with `xmllint --html` without an error (except
#     libxml2 2.9's HTML4 parser not knowing the HTML5 elements the
#     contract requires: header, nav, main);
#   - then the browser tests (tests/browser/admin.test.mjs: Debian's
#     Chromium headless through playwright-core) on the data made here,
#     their lines relayed. OLIVARES_TEST_BROWSER=0 skips only that part
#     (scripts/test runs it on the first e2e pass only); chromium or node
#     missing is a failure.
. "$(dirname "$0")/lib.sh"
e2e_require
cd "$E2E_TMP" || exit 1

AD=$OLV_ADMIN_TOKEN
ED=$OLV_EDITOR_TOKEN
VW=$OLV_VIEWER_TOKEN
M=/v1/m/sandbox
CSP="default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
HDR_FILE=$E2E_TMP/last-headers
PAGES=$E2E_TMP/pages
mkdir -p "$PAGES"
NPAGES=0
OWN_ORIGIN=${OLIVARES_URL%/}

module_on "$AD" || exit 1

# ---- helpers ------------------------------------------------------------------

# page TOKEN METHOD PATH [CURL-ARGS...]: one request to the view (no
# redirect followed). TOKEN "" sends no Authorization header. Sets STATUS,
# BODY, BODY_FILE and HDR_FILE (the response headers); keeps a copy of
# every HTML answer for the validation at the end.
page() {
	local token=$1 method=$2 path=$3
	shift 3
	local -a args=(-s -S -o "$BODY_FILE" -D "$HDR_FILE" -w '%{http_code}' -X "$method" --max-time 60)
	if [[ -n $token ]]; then
		args+=(-H "Authorization: Bearer $token")
	fi
	: >"$HDR_FILE"
	STATUS=$(curl "${args[@]}" "$@" "$OLIVARES_URL$path" 2>"$E2E_TMP/curl-err") || STATUS=${STATUS:-000}
	read_body
	if [[ -s $BODY_FILE && $(hdr content-type) == text/html* ]]; then
		NPAGES=$((NPAGES + 1))
		cp "$BODY_FILE" "$PAGES/$NPAGES.html"
		printf '%s %s -> %s\n' "$method" "$path" "$STATUS" >"$PAGES/$NPAGES.what"
	fi
}

# cpage COOKIE METHOD PATH [CURL-ARGS...]: page with the session cookie
cpage() {
	local c=$1 method=$2 path=$3
	shift 3
	page "" "$method" "$path" -H "Cookie: olivares_session=$c" "$@"
}

# hdr NAME: the values of the response header NAME (any case), one a line
hdr() {
	tr -d '\r' <"$HDR_FILE" | awk -v n="$1" '{
		i = index($0, ":")
		if (i > 0 && tolower(substr($0, 1, i - 1)) == tolower(n)) {
			v = substr($0, i + 1); sub(/^[ \t]+/, "", v); sub(/[ \t]+$/, "", v); print v
		}
	}'
}

# xp XPATH: XPATH on the last body with libxml2's HTML parser ("" if none)
xp() {
	xmllint --html --xpath "$1" "$BODY_FILE" 2>/dev/null
}

# is_html_status DESC STATUS: the last answer has STATUS
is_html_status() {
	if [[ $STATUS == "$2" ]]; then
		ok "$1"
	else
		not_ok "$1 (expected HTTP $2, got HTTP $STATUS: $(short "$(xp 'string(//*[@id="error"])' || true)") $(short "$BODY"))"
	fi
}

# location_is DESC PATH: the last answer is a 303 to PATH (a path, or the
# same as an absolute URL of this origin)
location_is() {
	local loc
	loc=$(hdr location | head -n 1)
	if [[ $STATUS == 303 && ($loc == "$2" || $loc == "$OWN_ORIGIN$2") ]]; then
		ok "$1"
	else
		not_ok "$1 (expected 303 to $2, got HTTP $STATUS to $(short "$loc"): $(short "$(xp 'string(//*[@id="error"])')"))"
	fi
}

# sec_headers DESC: the security headers of the contract on the last answer,
# each exactly once with exactly its value
sec_headers() {
	local bad="" name want got n
	while IFS='|' read -r name want; do
		got=$(hdr "$name")
		n=$(printf '%s' "$got" | grep -c '' || true)
		if [[ $n != 1 ]]; then
			bad+=" $name x$n;"
		elif [[ ${got,,} != "${want,,}" ]]; then
			bad+=" $name=$(short "$got");"
		fi
	done <<-EOF
		Content-Security-Policy|$CSP
		X-Content-Type-Options|nosniff
		Referrer-Policy|no-referrer
		X-Frame-Options|DENY
		Cache-Control|no-store
		Content-Type|text/html; charset=utf-8
	EOF
	if [[ -z $bad ]]; then
		ok "$1: security headers (CSP, nosniff, Referrer-Policy, X-Frame-Options, no-store, text/html)"
	else
		not_ok "$1: security headers (wrong or not exactly once:$bad)"
	fi
}

# error_has DESC TEXT: the page's #error (p.error) contains TEXT
error_has() {
	local e
	e=$(xp 'string(//p[@id="error" and contains(concat(" ",@class," ")," error ")])')
	if [[ -n $e && $e == *"$2"* ]]; then
		ok "$1"
	else
		not_ok "$1 (expected p#error.error containing $(short "$2"), got $(short "$e"))"
	fi
}

# session_of_reply: the olivares_session value set by the last answer ("")
session_of_reply() {
	hdr set-cookie | sed -n 's/^olivares_session=\([^;]*\).*/\1/p' | head -n 1
}

# signin TOKEN: sign in through the form; SESSION gets the cookie value,
# CSRF the token of the session's forms (from the overview's sign-out form)
signin() {
	page "" POST /admin/login --data-urlencode "token=$1"
	SESSION=$(session_of_reply)
	CSRF=
	if [[ -n $SESSION ]]; then
		cpage "$SESSION" GET /admin/
		CSRF=$(xp 'string(//form[@id="signout"]//input[@name="csrf"]/@value)')
	fi
}

# csrf_of SECRET: what the contract says the CSRF token of a session is:
# hex HMAC-SHA256(key = the 64-char secret, data = "olivares-csrf-v1")
csrf_of() {
	printf '%s' olivares-csrf-v1 | openssl dgst -sha256 -hmac "$1" -r | cut -d' ' -f1
}

sha256_of() { printf '%s' "$1" | sha256sum | cut -d' ' -f1; }

# db_query SQL: run SQL on the stack's store (SQLite: sqlite3 on the data
# dir's file; PostgreSQL: psql with the DSN's server, port, database and
# user); exit status 2 when the store cannot be read from here
db_query() {
	if [[ -z ${OLIVARES_DSN:-} ]]; then
		[[ -f $OLIVARES_DATA/olivares.db ]] && command -v sqlite3 >/dev/null || return 2
		sqlite3 -batch -noheader "$OLIVARES_DATA/olivares.db" "$1"
		return
	fi
	command -v psql >/dev/null || return 2
	local kv h="" p="" d="" u=""
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
	PGCONNECT_TIMEOUT=5 psql -X -q -A -t -h "$h" ${p:+-p "$p"} ${u:+-U "$u"} -d "$d" -c "$1" 2>/dev/null || return 2
}

# db_dump: every row of the store as text
db_dump() {
	if [[ -z ${OLIVARES_DSN:-} ]]; then
		sqlite3 "$OLIVARES_DATA/olivares.db" .dump
	else
		db_query "SELECT row_to_json(w)::text FROM web_sessions w" &&
			db_query "SELECT row_to_json(a)::text FROM audit_events a" 2>/dev/null
	fi
}

state() { state_counts "$AD"; }

# forms_other_than IDS...: ids (or "-" for none) of the forms of the last
# page whose id is not one of IDS
forms_other_than() {
	local ids f out=""
	ids=$(xp '//form/@id' | sed -n 's/^ *id="\(.*\)"$/\1/p')
	nforms=$(xp 'count(//form)')
	nid=$(printf '%s' "$ids" | grep -c '' || true)
	for f in $ids; do
		if [[ " $* " != *" $f "* ]]; then out+="$f "; fi
	done
	if ((${nforms:-0} > nid)); then out+="(form without id) "; fi
	printf '%s' "${out% }"
}

# ---- data: the walkthrough, a comparison, payloads, a replay, many runs -----
WALK_STEPS='[{"key":"step-1","input":"agent:user1@example.test"},{"key":"step-2","input":"agent:user2@example.test"}]'
WALK_MOCKS='[{"resource":"agent:user1@example.test","response":"first synthetic account"}]'
req "$ED" POST $M/scenarios "{\"name\":\"admin-walkthrough\",\"steps\":$WALK_STEPS,\"mocks\":$WALK_MOCKS}"
is_status "walkthrough scenario created (API)" 201
WALK_SID=$(jqb '.id // empty')
req "$ED" POST "$M/scenarios/$WALK_SID/runs" '{"variant":"candidate"}'
is_status "walkthrough run (API, variant candidate)" 201
WALK_RID=$(jqb '.id // empty')
is "walkthrough run: completed, 1 ok 1 error, isolated, destroyed, not scored" "completed 2 1 1 true true false" \
	"$(jqb '"\(.status) \(.steps_total) \(.steps_ok) \(.steps_error) \(.isolated) \(.destroyed) \(.scored)"')"

# a scenario whose variant "better" answers step-2 too: candidate -> better
# is improved by 0.25 on the walkthrough suite (tests/fixtures/suites)
CMP_SUITE=walkthrough
CMP_MOCKS='[{"resource":"agent:user1@example.test","response":"first synthetic account"},{"resource":"agent:user2@example.test","response":"second synthetic account","variant":"better"}]'
req "$ED" POST $M/scenarios "{\"name\":\"admin-compare\",\"steps\":$WALK_STEPS,\"mocks\":$CMP_MOCKS}"
is_status "comparison scenario created (API)" 201
CMP_SID=$(jqb '.id // empty')
HAVE_SCORER=0
if [[ -n ${OLV_SUITES_DIR:-} && -f $OLV_SUITES_DIR/$CMP_SUITE.json ]]; then HAVE_SCORER=1; fi
CID=
if ((HAVE_SCORER)); then
	req "$AD" POST $M/comparisons "{\"scenario_id\":\"$CMP_SID\",\"baseline\":\"candidate\",\"candidate\":\"better\",\"suite\":\"$CMP_SUITE\"}"
	is "comparison candidate -> better (API): 201 improved +0.25" "201 improved 0.25" "$STATUS $(jqb '"\(.verdict) \(.delta)"')"
	CID=$(jqb '.id // empty')
	CMP_BASE_RID=$(jqb '.baseline.run_id // empty')
	req "$ED" POST "$M/scenarios/$WALK_SID/runs" "{\"variant\":\"candidate\",\"suite\":\"$CMP_SUITE\"}"
	is "scored walkthrough run (API): 0.75 passed" "201 0.75 true" "$STATUS $(jqb '"\(.score) \(.passed)"')"
	SCORED_RID=$(jqb '.id // empty')
	req "$ED" POST "$M/scenarios/$WALK_SID/runs" '{"variant":"candidate","suite":"walkthrough-strict"}'
	is "strict walkthrough run (API): 2/3, recorded to 9 decimals, not passed" "201 0.666666667 false" "$STATUS $(jqb '"\(.score) \(.passed)"')"
	THIRDS_RID=$(jqb '.id // empty')
	is "the API writes the score as recorded, not the double's 17 digits" '"score":0.666666667' \
		"$(grep -o '"score":[0-9.e-]*' "$BODY_FILE")"
	is "so does the CLI's -o json" '"score": 0.666666667,' \
		"$(OLIVARES_TOKEN=$ED olivares sandbox runs get "$THIRDS_RID" -o json 2>/dev/null | grep -o '"score": [0-9.e-]*,')"
else
	echo "# no builtin scorer on tests/fixtures/suites on this stack: comparison and score checks skipped"
fi

# HTML and script payloads in every text the pages show
PAYLOADS=(
	'<script>alert(1)</script>'
	'"><img src=x onerror=alert(1)>'
	"'><svg onload=alert(1)>"
	'</pre></td></tr></table><script>alert(document.cookie)</script>'
	'<a href="javascript:alert(1)">click</a>'
	'&lt;script&gt;alert(1)&lt;/script&gt; &amp; &#60;b&#62;'
	'<style>body{display:none}</style><iframe src="javascript:alert(1)"></iframe>'
	'<!-- --><math><mi xlink:href="javascript:alert(1)">x</mi></math>'
)
XSS_NAME='<script>alert("name")</script><img src=x onerror=alert(2)>'
XSS_VARIANT='"><img src=x onerror=alert(3)>'
PAYLOADS_JSON=$(printf '%s\n' "${PAYLOADS[@]}" | jq -R . | jq -cs .)
# step i: key "k<i>", input payload i; mock: resource payload i, response
# payload i+1 (so the run outputs are payloads too); the last input misses
xss_body=$(jq -cn --arg name "$XSS_NAME" --arg v "$XSS_VARIANT" --argjson p "$PAYLOADS_JSON" '{
	name: $name, description: $p[0],
	steps: [range(0; $p|length) as $i | {key: "k\($i+1)", input: $p[$i]}],
	mocks: ([range(0; ($p|length) - 1) as $i | {resource: $p[$i], response: $p[$i+1]}]
		+ [{resource: $p[0], response: $p[1], variant: $v}])}')
req "$ED" POST $M/scenarios "$xss_body"
is_status "payload scenario created (API)" 201
XSS_SID=$(jqb '.id // empty')
req "$ED" POST "$M/scenarios/$XSS_SID/runs" "$(jq -cn --arg v "$XSS_VARIANT" '{variant:$v}')"
is_status "payload scenario run (API, payload variant)" 201
XSS_RID=$(jqb '.id // empty')

# a replay and a degraded one, for the replays page
REPLAY_RID=
DEGRADED_RID=
FIX=$OLV_ROOT/tests/fixtures/sessions
if [[ -f $FIX/replayable.json && -f $FIX/gap.json ]]; then
	req_file "$ED" POST $M/sessions "$FIX/replayable.json"
	RS=$(jqb '(if type=="array" then .[0] else . end).id // empty')
	req_file "$ED" POST $M/sessions "$FIX/gap.json"
	GS=$(jqb '(if type=="array" then .[0] else . end).id // empty')
	req "$ED" POST $M/replays "{\"session_id\":\"$RS\",\"variant\":\"candidate\"}"
	is_status "replay of replayable.json (API)" 201
	REPLAY_RID=$(jqb '.id // empty')
	REPLAY_STATUS=$(jqb '.status')
	req "$ED" POST $M/replays "{\"session_id\":\"$GS\"}"
	is "replay of gap.json (API): degraded" "201 degraded" "$STATUS $(jqb .status)"
	DEGRADED_RID=$(jqb '.id // empty')
	DEGRADED_REASON=$(jqb '.reason // empty')
fi

# 26 runs of one scenario: a list of two pages (25 a page)
req "$ED" POST $M/scenarios '{"name":"admin-paging","steps":[{"key":"only","input":"agent:user1@example.test"}],"mocks":[{"resource":"agent:user1@example.test","response":"first synthetic account"}]}'
PAGE_SID=$(jqb '.id // empty')
declare -a PAGE_RIDS=()
for i in $(seq 1 26); do
	req "$ED" POST "$M/scenarios/$PAGE_SID/runs" "{\"variant\":\"p$i\"}"
	PAGE_RIDS+=("$(jqb '.id // empty')")
done
is "26 runs of the paging scenario (API)" 26 "$(count_all "$VW" "$M/runs?scenario=$PAGE_SID" runs)"

# ---- not signed in ----------------------------------------------------------
for p in /admin/ /admin/scenarios "/admin/scenarios/$WALK_SID" /admin/runs "/admin/runs/$WALK_RID" \
	/admin/comparisons /admin/replays /admin/audit; do
	page "" GET "$p"
	location_is "not signed in: GET $p -> 303 to /admin/login, back to it after" "/admin/login?next=$p"
done
sec_headers "the 303 to /admin/login"
page "" GET /admin/nope
if [[ ($STATUS == 303 && $(hdr location) == */admin/login\?next=/admin/nope) || $STATUS == 404 ]]; then
	ok "not signed in: an unknown path -> 303 to /admin/login or 404 ($STATUS)"
else
	not_ok "not signed in: an unknown path -> 303 to /admin/login or 404 (got HTTP $STATUS)"
fi
sec_headers "an unknown path, not signed in"
page "" GET "/admin/scenarios/$WALK_SID" -H "Cookie: olivares_session=$(repeat_char a 64)"
location_is "an unknown session cookie -> 303 to /admin/login, saying it ended" \
	"/admin/login?next=/admin/scenarios/$WALK_SID&ended=1"
# the page's query comes back too (a filtered list, filtered); one that is
# not made of what our pages' queries hold falls back to the page alone
FILTERED="/admin/runs?scenario=$PAGE_SID&offset=25"
page "" GET "$FILTERED"
location_is "not signed in: a filtered list -> 303 to /admin/login, its query kept (escaped)" \
	"/admin/login?next=/admin/runs%3Fscenario%3D$PAGE_SID%26offset%3D25"
page "" GET "/admin/login?next=/admin/runs%3Fscenario%3D$PAGE_SID%26offset%3D25"
is "the sign-in form carries the page and its query" "$FILTERED" \
	"$(xp 'string(//form[@id="signin"]//input[@name="next"]/@value)')"
page "" POST /admin/login --data-urlencode "token=$VW" --data-urlencode "next=$FILTERED"
location_is "signed in: back to the filtered list" "$FILTERED"
page "" GET "/admin/runs?a=b:c"
location_is "not signed in: a query with a ':' -> back to the page alone" "/admin/login?next=/admin/runs"
while IFS='|' read -r what bad; do
	bad=${bad//\\r/$'\r'}
	bad=${bad//\\n/$'\n'}
	page "" POST /admin/login --data-urlencode "token=$VW" --data-urlencode "next=$bad"
	location_is "signed in with a next holding $what: the overview instead" /admin/
done <<-'EOF'
	CR LF in its query|/admin/runs?x=1\r\n
	"//" in its path|/admin//runs
	a '/' in its query|/admin/runs?u=/x
	a ':' in its query|/admin/runs?u=http:x
	another site|https://evil.example/admin/
	markup in its query|/admin/runs?a=<b>
	a fragment|/admin/runs#x
EOF

before=$(state)
page "" POST "/admin/scenarios/$WALK_SID/runs" --data 'variant=x'
is_html_status "not signed in: POST the run form -> 401" 401
sec_headers "the 401 page"
error_has "the 401 page has #error" ""
page "olv_$(repeat_char 0 64)" GET /admin/
is_html_status "an Authorization header that is not a valid token -> 401" 401
error_has "its #error" ""
page "not-a-token" GET /admin/runs
is_html_status "a garbage bearer token on a page -> 401" 401
is "refused requests changed nothing (scenarios, runs, audit)" "$before" "$(state)"
# /admin without the slash: the overview as well (or a redirect to it)
page "" GET /admin
if [[ $STATUS == 303 && $(hdr location) == */admin/login ]] || [[ $STATUS =~ ^30[1378]$ && $(hdr location) == */admin/ ]]; then
	ok "not signed in: GET /admin -> the login page or /admin/ ($STATUS $(hdr location))"
else
	not_ok "not signed in: GET /admin -> the login page or /admin/ (got HTTP $STATUS to $(short "$(hdr location)"))"
fi
page "$VW" GET /admin
if [[ ($STATUS == 200 && $(xp 'string(//*[@id="module-status"])' | xargs) == enabled) || ($STATUS =~ ^30[1378]$ && $(hdr location) == */admin/) ]]; then
	ok "bearer GET /admin: the overview or a redirect to /admin/ ($STATUS)"
else
	not_ok "bearer GET /admin: the overview or a redirect to /admin/ (got HTTP $STATUS to $(short "$(hdr location)"))"
fi

# ---- the login page -----------------------------------------------------------
page "" GET /admin/login
is_html_status "GET /admin/login: 200" 200
sec_headers "the login page"
is "login: form#signin posts to /admin/login" "post /admin/login" \
	"$(xp 'string(//form[@id="signin"]/@method)' | tr '[:upper:]' '[:lower:]') $(xp 'string(//form[@id="signin"]/@action)')"
is "login: input#token type password name token" "1" \
	"$(xp 'count(//form[@id="signin"]//input[@id="token" and @type="password" and @name="token"])')"
is "login: the Sign in button" "Sign in" "$(xp 'string(//form[@id="signin"]//button[@type="submit"])' | xargs)"
is "login: no Set-Cookie before signing in" "" "$(hdr set-cookie)"

before=$(state)
page "" POST /admin/login --data-urlencode "token=olv_$(repeat_char 0 64)"
is_html_status "sign-in with an unknown token: 401" 401
sec_headers "the sign-in error page"
error_has "sign-in with an unknown token: #error says invalid token" "invalid token"
is "sign-in with an unknown token: the form again" 1 "$(xp 'count(//form[@id="signin"])')"
is "sign-in with an unknown token: no cookie" "" "$(hdr set-cookie)"
page "" POST /admin/login --data-urlencode "token=${ED%?}x"
is_html_status "sign-in with the editor token's last character changed: 401" 401
page "" POST /admin/login --data ''
is_html_status "sign-in without a token: 401" 401
is "failed sign-ins changed nothing (no session, no audit)" "$before" "$(state)"

# ---- sign-in: cookie, stored hash, CSRF ---------------------------------------
SESSION_MIN=480
if [[ -n ${OLIVARES_CONF:-} && -f $OLIVARES_CONF ]]; then
	sm=$(awk '/^\[/{s=($0=="[admin]")} s && /^[ \t]*session_minutes[ \t]*=/{sub(/.*=[ \t]*/,""); print}' "$OLIVARES_CONF" | tail -n 1)
	[[ -n $sm ]] && SESSION_MIN=$sm
fi
page "" POST /admin/login --data-urlencode "token=$ED"
location_is "editor signs in: 303 to /admin/" /admin/
sec_headers "the sign-in redirect"
ED_SESSION=$(session_of_reply)
if [[ $ED_SESSION =~ ^[0-9a-f]{64}$ ]]; then ok "the session cookie is 64 hex"; else not_ok "the session cookie is 64 hex (got $(short "$(hdr set-cookie)"))"; fi
cookie=$(hdr set-cookie | grep '^olivares_session=' | head -n 1)
attrs=$(printf '%s' "${cookie#*;}" | tr ';' '\n' | sed 's/^ *//; s/ *$//' | awk -F= '{ $1=tolower($1); print }' OFS== | sort | tr '\n' ';')
is "the cookie's attributes: HttpOnly, Max-Age, Path=/admin/, SameSite=Strict, no Secure over http" \
	"httponly;max-age=$((SESSION_MIN * 60));path=/admin/;samesite=Strict;" "$attrs"
is "one Set-Cookie only" 1 "$(hdr set-cookie | grep -c '')"

rc=0
hashes=$(db_query "SELECT sha256 FROM web_sessions") || rc=$?
if ((rc == 2)); then
	echo "# skip - the store cannot be read from here (${OLIVARES_DSN:+PostgreSQL}): stored-hash checks"
	ok "session stored hashed: not checkable on this store (skipped)"
else
	if grep -qx "$(sha256_of "$ED_SESSION")" <<<"$hashes"; then
		ok "the store holds the SHA-256 of the cookie's secret"
	else
		not_ok "the store holds the SHA-256 of the cookie's secret (web_sessions.sha256: $(short "$hashes"))"
	fi
	if db_dump | grep -q "$ED_SESSION"; then
		not_ok "the cookie's secret itself is nowhere in the store"
	else
		ok "the cookie's secret itself is nowhere in the store"
	fi
	times=$(db_query "SELECT created_at || ' ' || expires_at FROM web_sessions WHERE sha256 = '$(sha256_of "$ED_SESSION")'")
	read -r t0 t1 <<<"$times"
	d=$(($(date -u -d "$t1" +%s 2>/dev/null || echo 0) - $(date -u -d "$t0" +%s 2>/dev/null || echo 0)))
	is "the session expires session_minutes ($SESSION_MIN) after its creation" "$((SESSION_MIN * 60))" "$d"
fi
req "$AD" GET '/v1/m/sandbox/audit?limit=20'
if grep -q -e "$ED_SESSION" -e "$(sha256_of "$ED_SESSION")" "$BODY_FILE"; then
	not_ok "the audit holds neither the cookie's secret nor its hash"
else
	ok "the audit holds neither the cookie's secret nor its hash"
fi
is "the sign-in is audited as admin.signin" admin.signin "$(jqb '[.events[]|select(.action=="admin.signin")][0].action')"
is "the audit names the sign-in token's role (actor_role)" yes \
	"$(jqb '[.events[]|select(.action=="admin.signin")|.actor_role]|map(select(. == "viewer" or . == "editor" or . == "admin"))|if length > 0 then "yes" else "no" end')"

# over TLS (nginx's fastcgi_params set HTTPS=on): the cookie is Secure. No
# TLS here: the request goes straight to the pool's socket with cgi-fcgi.
SOCK=$OLIVARES_DATA/olivares.sock
if command -v cgi-fcgi >/dev/null && [[ -S $SOCK ]]; then
	fbody="token=$ED"
	printf '%s' "$fbody" | env -i REQUEST_METHOD=POST REQUEST_URI=/admin/login PATH_INFO=/admin/login \
		DOCUMENT_URI=/admin/login SCRIPT_NAME= QUERY_STRING= CONTENT_TYPE=application/x-www-form-urlencoded \
		CONTENT_LENGTH=${#fbody} HTTPS=on HTTP_HOST="${OWN_ORIGIN#http://}" SERVER_PROTOCOL=HTTP/1.1 \
		GATEWAY_INTERFACE=CGI/1.1 REMOTE_ADDR=127.0.0.1 cgi-fcgi -bind -connect "$SOCK" >"$E2E_TMP/tls.out" 2>/dev/null
	tls_cookie=$(tr -d '\r' <"$E2E_TMP/tls.out" | sed -n 's/^Set-Cookie: //Ip' | head -n 1)
	if [[ $tls_cookie =~ ^olivares_session=[0-9a-f]{64}\; && ${tls_cookie,,} =~ \;\ *secure(\;|$) && ${tls_cookie,,} == *httponly* ]]; then
		ok "over TLS (FastCGI HTTPS=on): the cookie is Secure"
	else
		not_ok "over TLS (FastCGI HTTPS=on): the cookie is Secure (got $(short "$tls_cookie"), $(short "$(head -c 300 "$E2E_TMP/tls.out")"))"
	fi
else
	echo "# skip - cgi-fcgi or the pool's socket missing: the Secure flag over TLS is not checked"
fi

cpage "$ED_SESSION" GET /admin/
is_html_status "the editor's session opens the overview" 200
is "overview: #whoami editor" editor "$(xp 'string(//span[@id="whoami"])' | xargs)"
is "overview: #role editor" editor "$(xp 'string(//*[@id="role"])' | xargs)"
is "overview: #module-status enabled" enabled "$(xp 'string(//*[@id="module-status"])' | xargs)"
is "overview: no module form for an editor" 0 "$(xp 'count(//form[@id="module-form"])')"
is "overview: the recent runs, at most five, each linking its page" "yes" \
	"$(n=$(xp 'count(//table[@id="recent-runs"]//tr[contains(concat(" ",@class," ")," run ")])'); l=$(xp 'count(//table[@id="recent-runs"]//tr[@data-id]/td[@class="id"]/a[starts-with(@href,"/admin/runs/")])'); ((n >= 1 && n <= 5 && l == n)) && echo yes || echo "no ($n rows, $l links)")"
is "overview: the sign-out form posts to /admin/logout" "post /admin/logout" \
	"$(xp 'string(//form[@id="signout"]/@method)' | tr '[:upper:]' '[:lower:]') $(xp 'string(//form[@id="signout"]/@action)')"
ED_CSRF=$(xp 'string(//form[@id="signout"]//input[@name="csrf" and @type="hidden"]/@value)')
is "the CSRF token is HMAC-SHA256(session secret, \"olivares-csrf-v1\")" "$(csrf_of "$ED_SESSION")" "$ED_CSRF"
is "nav: the five links of an editor, no audit" "/admin/ /admin/scenarios /admin/runs /admin/comparisons /admin/replays" \
	"$(xp '//header//nav//a/@href' | sed -n 's/^ *href="\(.*\)"$/\1/p' | tr '\n' ' ' | sed 's/ $//')"
cpage "$ED_SESSION" GET "/admin/scenarios/$WALK_SID"
is "scenario page (editor): the run form carries the session's csrf" "$ED_CSRF" \
	"$(xp 'string(//form[@id="run-form"]//input[@name="csrf"]/@value)')"
is "scenario page (editor): run form, no compare form" "1 0" \
	"$(xp 'count(//form[@id="run-form"])') $(xp 'count(//form[@id="compare-form"])')"
is "run form: post to /admin/scenarios/ID/runs" "post /admin/scenarios/$WALK_SID/runs" \
	"$(xp 'string(//form[@id="run-form"]/@method)' | tr '[:upper:]' '[:lower:]') $(xp 'string(//form[@id="run-form"]/@action)')"
is "run form: backend options" "|inproc-mock|namespaces|gvisor|firecracker" \
	"$(xp '//form[@id="run-form"]//select[@name="backend"]/option/@value' | sed -n 's/^ *value="\(.*\)"$/\1/p' | tr '\n' '|' | sed 's/|$//')"
# the preflight marks (not checked / preflight failed) are t1320's
opt2=$(xp 'string(//form[@id="run-form"]//select[@name="backend"]/option[2])' | xargs)
if [[ $opt2 =~ ^inproc-mock\ \(default(,\ not\ checked)?\)$ ]]; then
	ok "run form: the tenant default marked, first of the backends ($opt2)"
else
	not_ok "run form: the tenant default marked, first of the backends (got $(short "$opt2"))"
fi
is "run form: a variant input and a Run button" "1 Run" \
	"$(xp 'count(//form[@id="run-form"]//input[@name="variant"])') $(xp 'string(//form[@id="run-form"]//button[@type="submit"])' | xargs)"

# ---- CSRF ---------------------------------------------------------------------
signin "$ED"
ED2_SESSION=$SESSION
ED2_CSRF=$CSRF
isnt "a second sign-in: a second session" "$ED_SESSION" "$ED2_SESSION"
isnt "a second session: another CSRF token" "$ED_CSRF" "$ED2_CSRF"
before=$(state)
cpage "$ED_SESSION" POST "/admin/scenarios/$WALK_SID/runs" --data 'variant=csrf-missing&backend='
is_html_status "run form without csrf: 403" 403
sec_headers "the 403 page"
error_has "run form without csrf: #error says CSRF" CSRF
cpage "$ED_SESSION" POST "/admin/scenarios/$WALK_SID/runs" --data "variant=csrf-wrong&csrf=$(repeat_char 0 64)"
is_html_status "run form with a wrong csrf: 403" 403
error_has "run form with a wrong csrf: #error says CSRF" CSRF
cpage "$ED_SESSION" POST "/admin/scenarios/$WALK_SID/runs" --data "variant=csrf-other&csrf=$ED2_CSRF"
is_html_status "run form with another session's csrf: 403" 403
cpage "$ED_SESSION" POST "/admin/scenarios/$WALK_SID/runs" --data "variant=csrf-short&csrf=${ED_CSRF:0:63}"
is_html_status "run form with the csrf cut by one character: 403" 403
cpage "$ED_SESSION" POST "/admin/scenarios/$WALK_SID/runs" --data "variant=csrf-empty&csrf="
is_html_status "run form with an empty csrf: 403" 403
cpage "$ED_SESSION" POST /admin/logout --data ''
is_html_status "sign-out without csrf: 403" 403
is "refused forms changed nothing (scenarios, runs, audit)" "$before" "$(state)"
cpage "$ED_SESSION" GET /admin/
is_html_status "the session still works after a refused sign-out" 200

before_runs=$(count_all "$VW" "$M/runs?scenario=$WALK_SID" runs)
cpage "$ED_SESSION" POST "/admin/scenarios/$WALK_SID/runs" --data "variant=from-the-form&backend=&csrf=$ED_CSRF"
loc=$(hdr location)
if [[ $STATUS == 303 && $loc =~ /admin/runs/([0-9a-f]{32})$ ]]; then
	ok "run form with the session's csrf: 303 to /admin/runs/ID"
	FORM_RID=${BASH_REMATCH[1]}
	req "$VW" GET "$M/runs/$FORM_RID"
	is "the form's run: this scenario, variant, default backend, completed" "$WALK_SID from-the-form inproc-mock completed" \
		"$(jqb '"\(.scenario_id) \(.variant) \(.backend) \(.status)"')"
else
	not_ok "run form with the session's csrf: 303 to /admin/runs/ID (got HTTP $STATUS to $(short "$loc"): $(short "$(xp 'string(//*[@id="error"])')"))"
fi
is "one run more" "$((before_runs + 1))" "$(count_all "$VW" "$M/runs?scenario=$WALK_SID" runs)"
cpage "$ED_SESSION" POST "/admin/scenarios/$WALK_SID/runs" --data "variant=$(repeat_char c 65)&backend=&csrf=$ED_CSRF"
is "a session's refused run form comes back with the session's csrf, ready to send again" "422 $ED_CSRF 1" \
	"$STATUS $(xp 'string(//form[@id="run-form"]//input[@name="csrf"]/@value)') $(xp 'count(//form[@id="run-form"]/p[@id="error"])')"
is "no run more" "$((before_runs + 1))" "$(count_all "$VW" "$M/runs?scenario=$WALK_SID" runs)"

# ---- bearer tokens --------------------------------------------------------------
page "$ED" GET "/admin/runs/$WALK_RID"
is_html_status "bearer token on a page: 200" 200
is "bearer: no cookie set" "" "$(hdr set-cookie)"
is "bearer: no sign-out form, #whoami editor" "0 editor" "$(xp 'count(//form[@id="signout"])') $(xp 'string(//span[@id="whoami"])' | xargs)"
before_runs=$(count_all "$VW" "$M/runs?scenario=$WALK_SID" runs)
page "$ED" POST "/admin/scenarios/$WALK_SID/runs" --data 'variant=bearer'
if [[ $STATUS == 303 && $(hdr location) =~ /admin/runs/[0-9a-f]{32}$ ]]; then
	ok "bearer POST of the run form without csrf: 303 to the run"
else
	not_ok "bearer POST of the run form without csrf: 303 to the run (got HTTP $STATUS $(short "$(hdr location)") $(short "$(xp 'string(//*[@id="error"])')"))"
fi
is "the bearer's run was made" "$((before_runs + 1))" "$(count_all "$VW" "$M/runs?scenario=$WALK_SID" runs)"
page "$ED" POST "/admin/scenarios/$WALK_SID/runs" --data 'variant=first&variant=second&backend='
if [[ $STATUS == 303 && $(hdr location) =~ /admin/runs/([0-9a-f]{32})$ ]]; then
	req "$VW" GET "$M/runs/${BASH_REMATCH[1]}"
	is "duplicate form fields: the first wins" first "$(jqb .variant)"
else
	not_ok "duplicate form fields: a run (got HTTP $STATUS)"
fi

# ---- form bodies that are refused ------------------------------------------------
before=$(state)
page "$ED" POST "/admin/scenarios/$WALK_SID/runs" --data 'variant=%FF%FE'
is_html_status "a field that is not UTF-8: 400" 400
page "$ED" POST "/admin/scenarios/$WALK_SID/runs" --data 'variant=a%00b'
is_html_status "a field holding NUL: 400" 400
page "$ED" POST "/admin/scenarios/$WALK_SID/runs" -H 'Content-Type: application/json' --data '{"variant":"json"}'
is_html_status "a JSON body: 400" 400
page "$ED" POST "/admin/scenarios/$WALK_SID/runs" --data "variant=$(repeat_char v 65)"
is_html_status "a variant of 65 bytes: the API's 422" 422
error_has "the API's message in #error" ""
# a refused form comes back on its page, the error in it, what was posted kept
is "refused run form: the scenario's page again, one #error, in the run form" "Scenario: admin-walkthrough|1|1" \
	"$(xp 'string(//main[@id="main"]/h1)' | xargs)|$(xp 'count(//*[@id="error"])')|$(xp 'count(//form[@id="run-form"]/p[@id="error"])')"
is "refused run form: the variant as posted, focused" "$(repeat_char v 65) autofocus" \
	"$(xp 'string(//form[@id="run-form"]//input[@name="variant"]/@value)') $(xp 'string(//form[@id="run-form"]//input[@name="variant"]/@autofocus)')"
page "$ED" POST "/admin/scenarios/$WALK_SID/runs" --data "variant=$(repeat_char w 65)&backend=gvisor"
is "refused run form: the backend as posted is selected, and only it" "422 gvisor 1" \
	"$STATUS $(xp 'string(//form[@id="run-form"]//option[@selected]/@value)') $(xp 'count(//form[@id="run-form"]//option[@selected])')"
REFUSED_MARKUP="\"><script>alert(1)</script><b id=\"pwn\">$(repeat_char x 40)"
page "$ED" POST "/admin/scenarios/$WALK_SID/runs" --data-urlencode "variant=$REFUSED_MARKUP" --data 'backend=%22%3E%3Cscript%3E'
is "refused run form with markup: the value comes back as text only (no script, no element)" "422 0 0 0" \
	"$STATUS $(xp 'count(//script)') $(xp 'count(//*[@id="pwn"])') $(xp 'count(//form[@id="run-form"]//option[@selected])')"
is "refused run form with markup: the attribute holds it unchanged" "$REFUSED_MARKUP" \
	"$(xp 'string(//form[@id="run-form"]//input[@name="variant"]/@value)')"
is "refused bodies changed nothing" "$before" "$(state)"
page "$ED" PUT /admin/ --data ''
is_html_status "PUT /admin/: 405" 405
sec_headers "the 405 page"
page "$ED" DELETE "/admin/runs/$WALK_RID"
is_html_status "DELETE /admin/runs/ID: 405" 405
page "$ED" GET /admin/nope
is_html_status "an unknown /admin/ path: 404" 404
sec_headers "the 404 page"
error_has "the 404 page has #error" ""

# ---- cross-origin POSTs --------------------------------------------------------------
before=$(state)
page "" POST /admin/login -H 'Origin: http://evil.example' --data-urlencode "token=$ED"
is_html_status "sign-in with a foreign Origin: 403" 403
is "sign-in with a foreign Origin: no cookie" "" "$(hdr set-cookie)"
page "$ED" POST "/admin/scenarios/$WALK_SID/runs" -H 'Origin: http://evil.example' --data 'variant=evil'
is_html_status "bearer run form with a foreign Origin: 403" 403
cpage "$ED_SESSION" POST "/admin/scenarios/$WALK_SID/runs" -H "Origin: https://${OWN_ORIGIN#http://}" --data "variant=evil&csrf=$ED_CSRF"
is_html_status "run form with the own host but https Origin: 403" 403
cpage "$ED_SESSION" POST "/admin/scenarios/$WALK_SID/runs" -H 'Origin: null' --data "variant=evil&csrf=$ED_CSRF"
is_html_status "run form with Origin null: 403" 403
own_host=${OWN_ORIGIN#http://}
cpage "$ED_SESSION" POST "/admin/scenarios/$WALK_SID/runs" -H "Origin: http://${own_host%:*}" --data "variant=evil&csrf=$ED_CSRF"
is_html_status "run form with the own host on another port (the default one, ${own_host%:*}): 403" 403
cpage "$ED_SESSION" POST "/admin/scenarios/$WALK_SID/runs" -H "Origin: http://${own_host%:*}:1" --data "variant=evil&csrf=$ED_CSRF"
is_html_status "run form with the own host on port 1: 403" 403
page "" POST /admin/login -H 'Sec-Fetch-Site: cross-site' --data-urlencode "token=$ED"
is_html_status "sign-in with Sec-Fetch-Site cross-site (no Origin): 403" 403
page "" POST /admin/login -H 'Origin: http://evil.example' -H 'Sec-Fetch-Site: same-origin' --data-urlencode "token=$ED"
is_html_status "sign-in with a foreign Origin, even with Sec-Fetch-Site same-origin: 403" 403
cpage "$ED_SESSION" POST "/admin/scenarios/$WALK_SID/runs" -H 'Sec-Fetch-Site: same-site' --data "variant=evil&csrf=$ED_CSRF"
is_html_status "run form with Sec-Fetch-Site same-site (another port or subdomain): 403" 403
is "cross-origin POSTs changed nothing (no session, no run, no audit)" "$before" "$(state)"
# what Chromium sends for our own forms under Referrer-Policy: no-referrer
# (Origin "null") with Sec-Fetch-Site, which pages cannot forge
cpage "$ED_SESSION" POST "/admin/scenarios/$WALK_SID/runs" -H 'Origin: null' -H 'Sec-Fetch-Site: same-origin' --data "variant=same-origin-null&csrf=$ED_CSRF"
if [[ $STATUS == 303 ]]; then ok "run form with Origin null and Sec-Fetch-Site same-origin (a browser, own page): 303"; else not_ok "run form with Origin null and Sec-Fetch-Site same-origin: 303 (got HTTP $STATUS $(short "$(xp 'string(//*[@id="error"])')"))"; fi
cpage "$ED_SESSION" POST "/admin/scenarios/$WALK_SID/runs" -H "Origin: $OWN_ORIGIN" --data "variant=same-origin&csrf=$ED_CSRF"
if [[ $STATUS == 303 ]]; then ok "run form with its own Origin: 303"; else not_ok "run form with its own Origin: 303 (got HTTP $STATUS $(short "$(xp 'string(//*[@id="error"])')"))"; fi

# ---- viewer ---------------------------------------------------------------------------
signin "$VW"
VW_SESSION=$SESSION
VW_CSRF=$CSRF
if [[ -n $VW_SESSION && -n $VW_CSRF ]]; then ok "viewer signs in (session and csrf)"; else not_ok "viewer signs in (session $(short "$VW_SESSION"), csrf $(short "$VW_CSRF"))"; fi
cpage "$VW_SESSION" GET /admin/
is "viewer overview: #whoami viewer, no module form" "viewer 0" "$(xp 'string(//span[@id="whoami"])' | xargs) $(xp 'count(//form[@id="module-form"])')"
for p in /admin/ /admin/scenarios "/admin/scenarios/$WALK_SID" /admin/runs "/admin/runs/$WALK_RID" /admin/comparisons /admin/replays; do
	cpage "$VW_SESSION" GET "$p"
	is "viewer $p: 200, no form but filter and sign-out" "200 " "$STATUS $(forms_other_than filter signout)"
done
before=$(state)
cpage "$VW_SESSION" POST "/admin/scenarios/$WALK_SID/runs" --data "variant=viewer&backend=&csrf=$VW_CSRF"
is_html_status "viewer posts the run form (valid session and csrf): 403" 403
error_has "viewer: the API's message" "requires role editor; your token has viewer"
cpage "$VW_SESSION" POST /admin/comparisons --data "scenario_id=$CMP_SID&baseline=candidate&candidate=better&suite=$CMP_SUITE&csrf=$VW_CSRF"
is_html_status "viewer posts the compare form: 403" 403
cpage "$VW_SESSION" POST /admin/modules/sandbox --data "enabled=0&csrf=$VW_CSRF"
is_html_status "viewer posts the module form: 403" 403
cpage "$VW_SESSION" GET /admin/audit
is_html_status "viewer GET /admin/audit: 403" 403
cpage "$ED_SESSION" POST /admin/comparisons --data "scenario_id=$CMP_SID&baseline=candidate&candidate=better&suite=$CMP_SUITE&csrf=$ED_CSRF"
is_html_status "editor posts the compare form: 403" 403
error_has "editor compare: the API's message" "requires role admin"
cpage "$ED_SESSION" POST /admin/modules/sandbox --data "enabled=0&csrf=$ED_CSRF"
is_html_status "editor posts the module form: 403" 403
# the role before the fields, as in the API: a bad field from a lower role is a 403 too
cpage "$VW_SESSION" POST /admin/modules/sandbox --data "enabled=maybe&csrf=$VW_CSRF"
is "viewer posts the module form with a bad field: 403, the role named" "403|requires role admin; your token has viewer" \
	"$STATUS|$(xp 'string(//p[@id="error"])' | xargs)"
cpage "$ED_SESSION" POST /admin/comparisons --data "scenario_id=$CMP_SID&baseline=candidate&candidate=better&suite=$CMP_SUITE&tolerance=abc&csrf=$ED_CSRF"
is "editor posts the compare form with a bad tolerance: 403, the role named" "403|requires role admin; your token has editor" \
	"$STATUS|$(xp 'string(//p[@id="error"])' | xargs)"
cpage "$ED_SESSION" GET /admin/audit
is_html_status "editor GET /admin/audit: 403" 403
is "role refusals changed nothing" "$before" "$(state)"

# ---- another tenant --------------------------------------------------------------
OT=$(new_tenant_token "$(unique admin-other)" admin)
if [[ -z $OT ]]; then
	not_ok "another tenant's admin token"
else
	module_on "$OT" || true
	page "$OT" GET "/admin/runs/$WALK_RID"
	is_html_status "another tenant: our run id -> 404" 404
	error_has "another tenant: #error" ""
	page "$OT" GET "/admin/scenarios/$WALK_SID"
	is_html_status "another tenant: our scenario id -> 404" 404
	if [[ -n $CID ]]; then
		page "$OT" GET "/admin/comparisons/$CID"
		is_html_status "another tenant: our comparison id -> 404" 404
	fi
	page "$OT" GET "/admin/runs?scenario=$WALK_SID"
	is "another tenant: the runs of our scenario: none (#empty)" "200 0 1" \
		"$STATUS $(xp 'count(//tr[contains(concat(" ",@class," ")," run ")])') $(xp 'count(//*[@id="empty"])')"
	before=$(state)
	page "$OT" POST "/admin/scenarios/$WALK_SID/runs" --data 'variant=other'
	is_html_status "another tenant posts our run form: 404" 404
	is "and nothing changed in ours" "$before" "$(state)"
fi

# ---- the pages' values ----------------------------------------------------------------
page "$ED" GET "/admin/runs/$WALK_RID"
ddv() { xp "string(//dl[@id=\"run-summary\"]//dd[@id=\"$1\"])" | sed 's/^[[:space:]]*//; s/[[:space:]]*$//'; }
is "run page: status kind backend isolated destroyed" "completed simulation inproc-mock true true" \
	"$(ddv run-status) $(ddv run-kind) $(ddv run-backend) $(ddv run-isolated) $(ddv run-destroyed)"
is "run page: #run-counters" "1/2 ok, 1 error" "$(ddv run-counters)"
is "run page: #run-score (a run that named no suite)" "executed, not scored (no suite named)" "$(ddv run-score)"
is "run page: the heading names the scenario" "Run of admin-walkthrough" "$(xp 'string(//main[@id="main"]/h1)' | xargs)"
is "run page: #run-scenario shows its name, the id in title" "admin-walkthrough $WALK_SID" \
	"$(xp 'string(//dd[@id="run-scenario"]//a)' | xargs) $(xp 'string(//dd[@id="run-scenario"]//a/@title)')"
is "run page: #run-started without milliseconds, the full value in title" "yes" \
	"$([[ $(xp 'string(//dd[@id="run-started"]/time)' | xargs) =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}\ [0-9]{2}:[0-9]{2}:[0-9]{2}$ && $(xp 'string(//dd[@id="run-started"]/time/@title)') == *T*Z ]] && echo yes || echo no)"
is "run page: #run-reason" "—" "$(ddv run-reason)"
is "run page: #run-variant" candidate "$(ddv run-variant)"
is "run page: #run-scenario links the scenario" "/admin/scenarios/$WALK_SID" "$(xp 'string(//dd[@id="run-scenario"]//a/@href)')"
is "run page: step 1's output is the mock's response" "first synthetic account" \
	"$(xp 'string(//table[@id="outputs"]//tr[@data-seq="1"]/td[@class="output"]/pre)')"
is "run page: step 1's input and key" "agent:user1@example.test step-1" \
	"$(xp 'string(//table[@id="outputs"]//tr[@data-seq="1"]/td[@class="input"]/pre)') $(xp 'string(//table[@id="outputs"]//tr[@data-seq="1"]/td[@class="key"])' | xargs)"
is "run page: step 2 is marked mock miss (row class, marker)" "output mock-miss|mock miss" \
	"$(xp 'string(//table[@id="outputs"]//tr[@data-seq="2"]/@class)')|$(xp 'string(//table[@id="outputs"]//tr[@data-seq="2"]//td[contains(concat(" ",@class," ")," step-status ")]//span[@class="mock-miss-marker"])')"
# the steps' times as the API gives them (then the page again, for xp)
req "$ED" GET "/v1/m/sandbox/runs/$WALK_RID/outputs"
want_ms=""
for d in $(jqb '.outputs[]|.duration_ms|if type == "number" then tostring else "unknown" end'); do
	[[ $d == unknown ]] || d=$(printf '%.3f' "$d")
	want_ms+="${want_ms:+ }$d"
done
page "$ED" GET "/admin/runs/$WALK_RID"
is "run page: each step's Time (ms) is its duration_ms to 3 decimals" "$want_ms" \
	"$(xp 'string(//table[@id="outputs"]//tr[@data-seq="1"]/td[@class="duration"])') $(xp 'string(//table[@id="outputs"]//tr[@data-seq="2"]/td[@class="duration"])')"
is "run page: step 1 is not marked" "output 0" \
	"$(xp 'string(//table[@id="outputs"]//tr[@data-seq="1"]/@class)') $(xp 'count(//table[@id="outputs"]//tr[@data-seq="1"]//*[@class="mock-miss-marker"])')"
is "run page: step 2's output text" "[[mock-miss:agent:user2@example.test]]" \
	"$(xp 'string(//table[@id="outputs"]//tr[@data-seq="2"]/td[contains(concat(" ",@class," ")," output ")]/pre)')"
if [[ -n ${SCORED_RID:-} ]]; then
	page "$ED" GET "/admin/runs/$SCORED_RID"
	is "scored run page: #run-score" "0.7500 passed" "$(ddv run-score)"
	page "$ED" GET "/admin/runs/$THIRDS_RID"
	is "a score of 2/3 reads as recorded, not rounded to 4 decimals" "0.666666667 failed" "$(ddv run-score)"
fi

page "$VW" GET "/admin/runs?scenario=$WALK_SID"
row="//table[@id=\"runs\"]//tr[contains(concat(\" \",@class,\" \"),\" run \") and @data-id=\"$WALK_RID\"]"
cell() { xp "string($row/td[contains(concat(\" \",@class,\" \"),\" $1 \")])" | sed 's/^[[:space:]]*//; s/[[:space:]]*$//'; }
is "runs list: the walkthrough's row links its page" "/admin/runs/$WALK_RID" "$(xp "string($row//a[@href=\"/admin/runs/$WALK_RID\"]/@href)")"
is "runs list: status, backend" "completed inproc-mock" "$(cell status) $(cell backend)"
is "runs list: attestation" "isolated: true · destroyed: true" "$(cell attestation)"
is "runs list: counters" "1/2 ok, 1 error" "$(cell counters)"
is "runs list: score" "executed, not scored" "$(cell score)"
is "runs list: the scenario by name, linked, the id in title" "admin-walkthrough|/admin/scenarios/$WALK_SID|$WALK_SID" \
	"$(cell scenario)|$(xp "string($row/td[@class=\"scenario\"]/a/@href)")|$(xp "string($row/td[@class=\"scenario\"]/a/@title)")"
if [[ -n ${SCORED_RID:-} ]]; then
	row="//table[@id=\"runs\"]//tr[@data-id=\"$SCORED_RID\"]"
	is "runs list: the scored run's score" "0.7500 passed" "$(cell score)"
fi
is "runs list filtered by scenario: only its runs" "" \
	"$(xp '//table[@id="runs"]//tr[@data-id]/@data-id' | sed -n 's/^ *data-id="\(.*\)"$/\1/p' | while read -r id; do
		r=$(curl -s -H "Authorization: Bearer $VW" "$OLIVARES_URL$M/runs/$id" | jq -r .scenario_id)
		[[ $r == "$WALK_SID" ]] || echo "$id"
	done)"

# pagination and filters on the 26 runs of the paging scenario
page "$VW" GET "/admin/runs?scenario=$PAGE_SID"
ids1=$(xp '//table[@id="runs"]//tr[@data-id]/@data-id' | sed -n 's/^ *data-id="\(.*\)"$/\1/p')
is "runs page 1: 25 rows" 25 "$(printf '%s\n' "$ids1" | grep -c .)"
is "runs page 1: no #prev-page" 0 "$(xp 'count(//a[@id="prev-page"])')"
next=$(xp 'string(//a[@id="next-page"]/@href)')
if [[ $next == *"scenario=$PAGE_SID"* && $next == *offset=25* ]]; then ok "runs page 1: #next-page keeps the filter, offset 25"; else not_ok "runs page 1: #next-page keeps the filter, offset 25 (got $(short "$next"))"; fi
if [[ $next == /admin/runs\?* ]]; then nexturl=$next; else nexturl=/admin/runs${next#*runs}; fi
page "$VW" GET "$nexturl"
ids2=$(xp '//table[@id="runs"]//tr[@data-id]/@data-id' | sed -n 's/^ *data-id="\(.*\)"$/\1/p')
is "runs page 2: 1 row, #prev-page, no #next-page" "1 1 0" \
	"$(printf '%s\n' "$ids2" | grep -c .) $(xp 'count(//a[@id="prev-page"])') $(xp 'count(//a[@id="next-page"])')"
is "the two pages hold the 26 runs once each" "$(printf '%s\n' "${PAGE_RIDS[@]}" | sort | tr '\n' ' ')" \
	"$(printf '%s\n%s\n' "$ids1" "$ids2" | grep . | sort | tr '\n' ' ')"
is "the list is newest first: the first run is last" "${PAGE_RIDS[0]}" "$(printf '%s\n' "$ids2" | head -n 1)"
page "$VW" GET "/admin/runs?scenario=$PAGE_SID&status=failed"
is "runs filtered by status failed: #empty, no row" "1 0" "$(xp 'count(//*[@id="empty"])') $(xp 'count(//table[@id="runs"]//tr[@data-id])')"
page "$VW" GET "/admin/runs?scenario=$PAGE_SID&status=completed&offset=25"
is "runs status completed, offset 25: one row" 1 "$(xp 'count(//table[@id="runs"]//tr[@data-id])')"
is "the filter form: the scenario select has the filter selected, by name" "admin-paging" \
	"$(xp 'string(//form[@id="filter"]//select[@name="scenario"]/option[@selected])' | xargs)"
is "the filter form: scenario select, status select with the seven choices" "1 |queued|running|completed|failed|degraded|cancelled" \
	"$(xp 'count(//form[@id="filter"]//select[@name="scenario"]/option[@value=""])') $(xp '//form[@id="filter"]//select[@name="status"]/option/@value' | sed -n 's/^ *value="\(.*\)"$/\1/p' | tr '\n' '|' | sed 's/|$//')"
is "the filter form is a GET" get "$(xp 'string(//form[@id="filter"]/@method)' | tr '[:upper:]' '[:lower:]')"

page "$VW" GET /admin/scenarios
is "scenarios list: rows, and a link to the walkthrough" "yes 1" \
	"$( (($(xp 'count(//table[@id="scenarios"]//tr[@class="scenario"])') > 0)) && echo yes || echo no) $(xp "count(//table[@id=\"scenarios\"]//tr[@class=\"scenario\"]//a[@href=\"/admin/scenarios/$WALK_SID\"])")"
page "$VW" GET "/admin/scenarios/$WALK_SID"
is "scenario page: the heading names it" "Scenario: admin-walkthrough" "$(xp 'string(//main[@id="main"]/h1)' | xargs)"
is "scenario page: name and version" "admin-walkthrough 1" "$(xp 'string(//*[@id="scenario-name"])' | xargs) $(xp 'string(//*[@id="scenario-version"])' | xargs)"
is "scenario page: the two steps (key, input)" "step-1=agent:user1@example.test|step-2=agent:user2@example.test" \
	"$(xp 'string((//table[@id="steps"]//tr[@class="step"])[1]/td[@class="key"])' | xargs)=$(xp 'string((//table[@id="steps"]//tr[@class="step"])[1]/td[@class="input"]/pre)')|$(xp 'string((//table[@id="steps"]//tr[@class="step"])[2]/td[@class="key"])' | xargs)=$(xp 'string((//table[@id="steps"]//tr[@class="step"])[2]/td[@class="input"]/pre)')"
is "scenario page: the mock" "agent:user1@example.test=first synthetic account" \
	"$(xp 'string(//table[@id="mocks"]//tr[@class="mock"]/td[@class="resource"])' | xargs)=$(xp 'string(//table[@id="mocks"]//tr[@class="mock"]/td[@class="response"]/pre)')"

# a run whose scenario was deleted keeps a heading
req "$ED" POST $M/scenarios '{"name":"to-be-deleted","steps":[{"key":"k","input":"x"}]}'
GONE_SID=$(jqb '.id // empty')
req "$ED" POST "$M/scenarios/$GONE_SID/runs" '{"variant":"candidate"}'
GONE_RID=$(jqb '.id // empty')
page "$VW" GET "/admin/runs/$GONE_RID"
is "run page while its scenario exists: Run of NAME" "Run of to-be-deleted" "$(xp 'string(//main[@id="main"]/h1)' | xargs)"
req "$ED" DELETE "$M/scenarios/$GONE_SID"
page "$VW" GET "/admin/runs/$GONE_RID"
is "run page of a deleted scenario: 200, the heading says so with the id's prefix" "200|Run of a deleted scenario (${GONE_SID:0:8})" \
	"$STATUS|$(xp 'string(//main[@id="main"]/h1)' | xargs)"

if [[ -n $CID ]]; then
	page "$AD" GET "/admin/scenarios/$CMP_SID"
	is "scenario page (admin): run form and compare form" "1 1" "$(xp 'count(//form[@id="run-form"])') $(xp 'count(//form[@id="compare-form"])')"
	is "compare form: hidden scenario_id, inputs, Compare button" "$CMP_SID 4 Compare" \
		"$(xp 'string(//form[@id="compare-form"]//input[@name="scenario_id" and @type="hidden"]/@value)') $(xp 'count(//form[@id="compare-form"]//input[@name="baseline" or @name="candidate" or @name="suite" or @name="tolerance"])') $(xp 'string(//form[@id="compare-form"]//button[@type="submit"])' | xargs)"
	is "compare form: baseline, candidate and suite required; a scorer is configured: no note" "3 0" \
		"$(xp 'count(//form[@id="compare-form"]//input[@required and (@name="baseline" or @name="candidate" or @name="suite")])') $(xp 'count(//*[@id="no-scorer"])')"
	page "$AD" GET "/admin/comparisons/$CID"
	is_html_status "comparison page: 200" 200
	is "comparison page: the differing step says so in words" "1 differs 0" \
		"$(xp 'count(//table[@id="side-by-side"]//tr[@data-seq="2"]/td[@class="key"]/span[@class="differs-marker"])') $(xp 'string(//table[@id="side-by-side"]//tr[@data-seq="2"]//span[@class="differs-marker"])') $(xp 'count(//table[@id="side-by-side"]//tr[@data-seq="1"]//span[@class="differs-marker"])')"
	is "comparison page: the baseline's mock miss is marked" "1 mock miss" \
		"$(xp 'count(//table[@id="side-by-side"]//span[@class="mock-miss-marker"])') $(xp 'string(//table[@id="side-by-side"]//tr[@data-seq="2"]/td[@class="baseline"]/span[@class="mock-miss-marker"])')"
	is "comparison page: verdict, delta, suite" "improved +0.2500 $CMP_SUITE" \
		"$(xp 'string(//*[@id="verdict"])' | xargs) $(xp 'string(//*[@id="delta"])' | xargs) $(xp 'string(//*[@id="suite"])' | xargs)"
	is "comparison page: step 2 differs, step 1 does not" "step differs|step" \
		"$(xp 'string(//table[@id="side-by-side"]//tr[@data-seq="2"]/@class)')|$(xp 'string(//table[@id="side-by-side"]//tr[@data-seq="1"]/@class)')"
	is "comparison page: step 2 side by side" "[[mock-miss:agent:user2@example.test]]|second synthetic account" \
		"$(xp 'string(//table[@id="side-by-side"]//tr[@data-seq="2"]/td[@class="baseline"]/pre)')|$(xp 'string(//table[@id="side-by-side"]//tr[@data-seq="2"]/td[@class="candidate"]/pre)')"
	is "comparison page: links both runs" "1" "$(xp "count(//table[@id=\"side-by-side\"]//a[@href=\"/admin/runs/$CMP_BASE_RID\"])")"
	page "$VW" GET "/admin/comparisons?scenario=$CMP_SID"
	crow="//table[@id=\"comparisons\"]//tr[contains(concat(\" \",@class,\" \"),\" comparison \") and @data-id=\"$CID\"]"
	is "comparisons list: the row's verdict and delta" "improved +0.2500" \
		"$(xp "string($crow/td[@class=\"verdict\"])" | xargs) $(xp "string($crow/td[@class=\"delta\"])" | xargs)"
	is "comparisons list: the row's variants" "candidate better" \
		"$(xp "string($crow/td[@class=\"baseline\"])" | xargs) $(xp "string($crow/td[@class=\"candidate\"])" | xargs)"
	is "comparisons list: the row links its page" 1 "$(xp "count($crow//a[@href=\"/admin/comparisons/$CID\"])")"
	isnt "comparisons list: the row's .created" "" "$(xp "string($crow/td[@class=\"created\"])" | xargs)"
	page "$VW" GET "/admin/comparisons?scenario=$CMP_SID&verdict=regressed"
	is "comparisons filtered by verdict regressed: #empty" "1 0" "$(xp 'count(//*[@id="empty"])') $(xp 'count(//tr[@data-id])')"
	is "the verdict filter's choices" "|improved|regressed|unchanged|inconclusive" \
		"$(xp '//form[@id="filter"]//select[@name="verdict"]/option/@value' | sed -n 's/^ *value="\(.*\)"$/\1/p' | tr '\n' '|' | sed 's/|$//')"
	# launch one from the form (bearer admin: no csrf needed)
	page "$AD" POST /admin/comparisons --data "scenario_id=$CMP_SID&baseline=candidate&candidate=better&suite=$CMP_SUITE&tolerance=&backend="
	if [[ $STATUS == 303 && $(hdr location) =~ /admin/comparisons/([0-9a-f]{32})$ ]]; then
		ok "compare form (admin): 303 to /admin/comparisons/ID"
		req "$VW" GET "$M/comparisons/${BASH_REMATCH[1]}"
		is "the form's comparison: improved +0.25" "improved 0.25" "$(jqb '"\(.verdict) \(.delta)"')"
	else
		not_ok "compare form (admin): 303 to /admin/comparisons/ID (got HTTP $STATUS $(short "$(hdr location)") $(short "$(xp 'string(//*[@id="error"])')"))"
	fi
	before=$(state)
	page "$AD" POST /admin/comparisons --data "scenario_id=$CMP_SID&baseline=candidate&candidate=better&suite=$CMP_SUITE&tolerance=2&backend=namespaces"
	is_html_status "compare form with tolerance 2: the API's 422" 422
	is "refused compare form: its page again, #error in the compare form, the run form empty" "1 1 " \
		"$(xp 'count(//form[@id="compare-form"]/p[@id="error"])') $(xp 'count(//*[@id="error"])') $(xp 'string(//form[@id="run-form"]//input[@name="variant"]/@value)')"
	is "refused compare form: every field as posted" "candidate|better|$CMP_SUITE|2|namespaces|autofocus" \
		"$(xp 'string(//form[@id="compare-form"]//input[@name="baseline"]/@value)')|$(xp 'string(//form[@id="compare-form"]//input[@name="candidate"]/@value)')|$(xp 'string(//form[@id="compare-form"]//input[@name="suite"]/@value)')|$(xp 'string(//form[@id="compare-form"]//input[@name="tolerance"]/@value)')|$(xp 'string(//form[@id="compare-form"]//option[@selected]/@value)')|$(xp 'string(//form[@id="compare-form"]//input[@name="baseline"]/@autofocus)')"
	page "$AD" POST /admin/comparisons --data "scenario_id=$CMP_SID&baseline=candidate&candidate=better&suite=$CMP_SUITE&tolerance=0x1p-3"
	is "compare form with a tolerance the view refuses: 400 on the form's page, the value kept" "400 1 0x1p-3" \
		"$STATUS $(xp 'count(//form[@id="compare-form"]/p[@id="error"])') $(xp 'string(//form[@id="compare-form"]//input[@name="tolerance"]/@value)')"
	page "$AD" POST /admin/comparisons --data "scenario_id=$CMP_SID&baseline=candidate&candidate=&suite=$CMP_SUITE"
	is "compare form with an empty candidate: the API's refusal on the form's page" "422 1 candidate $CMP_SUITE" \
		"$STATUS $(xp 'count(//form[@id="compare-form"]/p[@id="error"])') $(xp 'string(//form[@id="compare-form"]//input[@name="baseline"]/@value)') $(xp 'string(//form[@id="compare-form"]//input[@name="suite"]/@value)')"
	page "$AD" POST /admin/comparisons --data "scenario_id=nope&baseline=candidate&candidate=better&suite=$CMP_SUITE"
	is "compare form naming no valid scenario: an error page with a way back, no form" "0 /admin/scenarios" \
		"$(xp 'count(//form[@id="compare-form"])') $(xp 'string(//a[@id="back"]/@href)')"
	is "refused compare forms changed nothing" "$before" "$(state)"
fi

if [[ -n $REPLAY_RID ]]; then
	page "$VW" GET /admin/replays
	rrow="//table[@id=\"replays\"]//tr[contains(concat(\" \",@class,\" \"),\" replay \") and @data-id=\"$REPLAY_RID\"]"
	is "replays list: the replay's row and status" "1 $REPLAY_STATUS" "$(xp "count($rrow)") $(xp "string($rrow/td[@class=\"status\"])" | xargs)"
	is "replays list: the replay's reason is —" "—" "$(xp "string($rrow/td[@class=\"reason\"])" | xargs)"
	isnt "replays list: the replay's session shown" "" "$(xp "string($rrow/td[@class=\"session\"])" | xargs)"
	is "replays list: the replay's backend" inproc-mock "$(xp "string($rrow/td[@class=\"backend\"])" | xargs)"
	drow="//table[@id=\"replays\"]//tr[@data-id=\"$DEGRADED_RID\"]"
	is "replays list: the degraded one with its reason" "degraded|$DEGRADED_REASON" \
		"$(xp "string($drow/td[@class=\"status\"])" | xargs)|$(xp "string($drow/td[@class=\"reason\"])" | sed 's/^[[:space:]]*//; s/[[:space:]]*$//')"
	is "replays list: the replay's divergence, the degraded one's —" "yes|—" \
		"$([[ $(xp "string($rrow/td[@class=\"divergence\"])" | xargs) =~ ^[0-9]+\ of\ [0-9]+\ steps\ diverge$ ]] && echo yes || echo no)|$(xp "string($drow/td[@class=\"divergence\"])" | xargs)"
	is "replays list: the session by its external id, the id in title" "$(jq -r '(if type=="array" then .[0] else . end).external_id' "$FIX/replayable.json")|$RS" \
		"$(xp "string($rrow/td[@class=\"session\"])" | xargs)|$(xp "string($rrow/td[@class=\"session\"]/span/@title)")"
	page "$VW" GET "/admin/runs?status=degraded"
	is "runs list: the degraded replay did not execute" "not executed" \
		"$(xp "string(//table[@id=\"runs\"]//tr[@data-id=\"$DEGRADED_RID\"]/td[@class=\"score\"])" | xargs)"
	page "$VW" GET /admin/replays
	is "replays list: only replays" 0 "$(xp "count(//table[@id=\"replays\"]//tr[@data-id=\"$WALK_RID\"])")"
	page "$VW" GET /admin/replays?status=degraded
	is "replays filtered by status degraded: the degraded, not the other" "1 0" \
		"$(xp "count($drow)") $(xp "count(//tr[@data-id=\"$REPLAY_RID\"])")"
	page "$VW" GET "/admin/runs/$REPLAY_RID"
	is "replay run page: kind replay, #run-session" "replay 1" "$(ddv run-kind) $(xp 'count(//*[@id="run-session"])')"
	is "replay run page (no scenario): the heading and title name the session by its external id" \
		"Replay of session $(jq -r '(if type=="array" then .[0] else . end).external_id' "$FIX/replayable.json")|yes" \
		"$(xp 'string(//main[@id="main"]/h1)' | xargs)|$([[ $(xp 'string(//title)') == "$(xp 'string(//main[@id="main"]/h1)')"* ]] && echo yes || echo no)"
	page "$VW" GET "/admin/runs/$DEGRADED_RID"
	is "degraded replay page: #run-score not executed, with its reason" "not executed ($DEGRADED_REASON)" "$(ddv run-score)"
fi

page "$AD" GET /admin/audit
is_html_status "admin GET /admin/audit: 200" 200
if (($(xp 'count(//table[@id="audit"]//tr[@class="event"])') > 0)); then ok "audit: rows"; else not_ok "audit: rows"; fi
is "audit: the sign-ins are there" yes \
	"$(xp '//table[@id="audit"]//tr[@class="event"]/td[@class="action"]' | grep -q 'admin.signin' && echo yes || echo no)"
is "audit (admin): nav has the audit link" 1 "$(xp 'count(//header//nav//a[@href="/admin/audit"])')"
erow='(//table[@id="audit"]//tr[@class="event"])[1]'
is "audit: a row has the cells time, actor, action, target, detail" "1 1 1 1 1" \
	"$(for c in time actor action target detail; do printf '%s ' "$(xp "count($erow/td[@class=\"$c\"])")"; done | sed 's/ $//')"
srow='(//table[@id="audit"]//tr[@class="event"][td[@class="action"]="admin.signin"])[1]'
actor_text=$(xp "string($srow/td[@class=\"actor\"])" | xargs)
actor_title=$(xp "string($srow/td[@class=\"actor\"]/@title)")
if [[ $actor_text =~ ^(viewer|editor|admin) && $actor_title =~ ^[0-9a-f]{32}$ ]]; then
	ok "audit: a sign-in's actor shows its token's role ($actor_text), the token id in title"
else
	not_ok "audit: a sign-in's actor shows its token's role, the token id in title (got $(short "$actor_text") / $(short "$actor_title"))"
fi
detail=$(xp '//table[@id="audit"]//tr[@class="event"]/td[@class="detail"]' | sed 's/<[^>]*>//g; s/&quot;/"/g; s/&lt;/</g; s/&gt;/>/g; s/&amp;/\&/g' | grep -v '^[[:space:]]*$' | head -n 1)
if [[ -n $detail ]] && jq -e . >/dev/null 2>&1 <<<"$detail"; then ok "audit: .detail is JSON text ($(short "$detail"))"; else not_ok "audit: .detail is JSON text (got $(short "$detail"))"; fi

# ---- payloads as text ------------------------------------------------------------------------
page "$ED" GET "/admin/scenarios/$XSS_SID"
is_html_status "payload scenario page: 200" 200
is "payload scenario page: no script, img, svg, iframe, style, math element" 0 \
	"$(xp 'count(//script|//img|//svg|//iframe|//style|//math|//body//a[starts-with(@href,"javascript")])')"
is "payload scenario page: no event attribute" 0 "$(xp 'count(//@*[starts-with(name(),"on")])')"
is "payload scenario page: the name as text" "$XSS_NAME" "$(xp 'string(//*[@id="scenario-name"])' | sed 's/^[[:space:]]*//; s/[[:space:]]*$//')"
bad=""
for i in "${!PAYLOADS[@]}"; do
	n=$((i + 1))
	got=$(xp "string((//table[@id=\"steps\"]//tr[@class=\"step\"])[$n]/td[@class=\"input\"]/pre)")
	[[ $got == "${PAYLOADS[$i]}" ]] || bad+=" step$n=$(short "$got")"
	if ((n < ${#PAYLOADS[@]})); then
		got=$(xp "string((//table[@id=\"mocks\"]//tr[@class=\"mock\"])[$n]/td[@class=\"response\"]/pre)")
		[[ $got == "${PAYLOADS[$n]}" ]] || bad+=" mock$n=$(short "$got")"
	fi
done
is "payload scenario page: every input and mock response shown as the same text" "" "$bad"
if grep -qF '<script>alert(1)</script>' "$BODY_FILE"; then not_ok "the raw page holds no unescaped <script>alert(1)</script>"; else ok "the raw page holds no unescaped <script>alert(1)</script>"; fi
page "$ED" GET "/admin/runs/$XSS_RID"
is_html_status "payload run page: 200" 200
is "payload run page: no script, img, svg, iframe, style, math element, no event attribute" "0 0" \
	"$(xp 'count(//script|//img|//svg|//iframe|//style|//math)') $(xp 'count(//@*[starts-with(name(),"on")])')"
is "payload run page: the variant as text" "$XSS_VARIANT" "$(ddv run-variant)"
bad=""
for i in "${!PAYLOADS[@]}"; do
	n=$((i + 1))
	got=$(xp "string(//table[@id=\"outputs\"]//tr[@data-seq=\"$n\"]/td[@class=\"input\"]/pre)")
	[[ $got == "${PAYLOADS[$i]}" ]] || bad+=" in$n=$(short "$got")"
done
got=$(xp 'string(//table[@id="outputs"]//tr[@data-seq="1"]/td[@class="output"]/pre)')
[[ $got == "${PAYLOADS[1]}" ]] || bad+=" out1=$(short "$got")"
is "payload run page: inputs and outputs shown as the same text" "" "$bad"
page "$ED" GET "/admin/runs?scenario=$XSS_SID"
is "payload runs list: no script or img" 0 "$(xp 'count(//script|//img|//svg)')"
page "$ED" GET "/admin/runs?scenario=%3Cscript%3Ealert(1)%3C%2Fscript%3E&status=%22%3E%3Cimg%20src%3Dx%3E"
is "a payload in the filters: no script or img, 200 or 4xx" "0 ok" \
	"$(xp 'count(//script|//img)') $([[ $STATUS =~ ^(200|4[0-9][0-9])$ ]] && echo ok || echo "$STATUS")"

# ---- runs in progress: their pages follow them, an editor cancels them -------------------------
# 13 steps of 700 ms (the mock's delay_ms): about 9 s a run, inside the
# runs' 10 s wall clock. Five waves of them take every slot of the
# executors for some 45 s. A run of the second wave is the one seen
# running: it starts about 9 s after the first was asked for, when asking
# for the others is over, however slow a loaded machine makes that; a run
# asked for after them stays queued behind the waves (runs are claimed in
# order), which no load can shorten: the run form's 10 s wait ends with it
# queued (202).
slow_steps=$(jq -cn '[range(1; 14) | {key: "s\(.)", input: "tool:slow"}]')
req "$ED" POST $M/scenarios "{\"name\":\"admin-live\",\"steps\":$slow_steps,\"mocks\":[{\"resource\":\"tool:slow\",\"response\":\"slow answer\",\"delay_ms\":700}]}"
is_status "a scenario of 13 steps of 700 ms each (API)" 201
LIVE_SID=$(jqb '.id // empty')
# ex_conf KEY: KEY of [executor] in the stack's configuration ("" if unset)
ex_conf() {
	[[ -n ${OLIVARES_CONF:-} && -f $OLIVARES_CONF ]] || return 0
	awk -v k="$1" '/^\[/{s=($0=="[executor]")} s && $1==k {print $3}' "$OLIVARES_CONF" | tail -n 1
}
# the executors' slots as the configuration sets them (defaults: 1 process of 4)
nslots=$(ex_conf slots)
[[ $nslots =~ ^[1-9][0-9]*$ ]] || nslots=4
nproc=$(ex_conf processes)
[[ $nproc =~ ^[1-9][0-9]*$ ]] || nproc=1
declare -a BLOCKERS=()
for ((i = 0; i < 5 * nslots * nproc; i++)); do
	E2E_NO_WAIT=1 req "$ED" POST "$M/scenarios/$LIVE_SID/runs" "{\"variant\":\"wave-$i\"}"
	BLOCKERS+=("$(jqb '.id // empty')")
done
is "five waves of slow runs for the executors' $((nslots * nproc)) slots (API, 202 each)" "$((5 * nslots * nproc))" \
	"$(for r in "${BLOCKERS[@]}"; do [[ $r =~ ^[0-9a-f]{32}$ ]] && echo "$r"; done | grep -c '')"
# run_wait ID CONDITION SECONDS: until run ID satisfies the jq CONDITION
run_wait() {
	local i
	for ((i = 0; i < $3 * 10; i++)); do
		req "$VW" GET "$M/runs/$1"
		[[ $(jqb "$2") == true ]] && return 0
		sleep 0.1
	done
	return 1
}
RUN1=${BLOCKERS[$((nslots * nproc))]}
if run_wait "$RUN1" '.status == "running" and .steps_done >= 1' 40; then
	ok "a run of the second wave is running with a step done"
else
	not_ok "a run of the second wave is running with a step done (last: $(short "$BODY"))"
fi
cpage "$ED_SESSION" GET "/admin/runs/$RUN1"
is_html_status "a running run's page: 200" 200
sec_headers "a running run's page"
prog=$(ddv run-progress)
n_done=$(sed -n 's/^\([0-9]*\) of 13 steps done$/\1/p' <<<"$prog")
if [[ -n $n_done ]] && ((n_done >= 1 && n_done < 13)); then
	ok "running: #run-progress \"$prog\""
else
	not_ok "running: #run-progress N of 13 steps done, 1 <= N < 13 (got $(short "$prog"))"
fi
n_rows=$(xp 'count(//table[@id="outputs"]//tr[@data-seq])')
if [[ -n $n_done ]] && ((n_rows >= n_done)); then
	ok "running: the outputs so far ($n_rows rows, $n_done done when the record was read)"
else
	not_ok "running: the outputs so far (got $n_rows rows, progress $(short "$prog"))"
fi
is "running: status, score not yet, not finished" "running|not scored yet (running)|—" \
	"$(ddv run-status)|$(ddv run-score)|$(ddv run-finished)"
is "running: started and queued times, an executor" "yes yes yes" \
	"$([[ $(xp 'string(//dd[@id="run-started"]/time/@datetime)') == *T*Z ]] && echo yes || echo no) $([[ $(xp 'string(//dd[@id="run-queued"]/time/@datetime)') == *T*Z ]] && echo yes || echo no) $([[ -n $(ddv run-executor) && $(ddv run-executor) != — ]] && echo yes || echo no)"
is "running: the page reloads itself every 2 s (one meta refresh), no script" "1 2 0" \
	"$(xp 'count(/html/head/meta[@http-equiv="refresh"])') $(xp 'string(/html/head/meta[@http-equiv="refresh"]/@content)') $(xp 'count(//script)')"
is "running (editor): the cancel form posts to /admin/runs/ID/cancel with the session's csrf" "post /admin/runs/$RUN1/cancel $ED_CSRF Cancel run" \
	"$(xp 'string(//form[@id="cancel-form"]/@method)' | tr '[:upper:]' '[:lower:]') $(xp 'string(//form[@id="cancel-form"]/@action)') $(xp 'string(//form[@id="cancel-form"]//input[@name="csrf"]/@value)') $(xp 'string(//form[@id="cancel-form"]//button[@type="submit"])' | xargs)"
cpage "$VW_SESSION" GET "/admin/runs/$RUN1"
is "running (viewer): the page reloads too, no form but sign-out" "200 1 " \
	"$STATUS $(xp 'count(/html/head/meta[@http-equiv="refresh"])') $(forms_other_than signout)"
page "$VW" GET "/admin/runs?scenario=$LIVE_SID&status=running"
prow="//table[@id=\"runs\"]//tr[@data-id=\"$RUN1\"]/td[@class=\"status\"]"
if [[ $(xp "string($prow)" | xargs) =~ ^running\ [0-9]+/13$ && $(xp "string($prow/span[@class=\"progress\"])") =~ ^[0-9]+/13$ ]]; then
	ok "runs list filtered running: the row shows its progress ($(xp "string($prow)" | xargs))"
else
	not_ok "runs list filtered running: the row shows its progress, running N/13 (got $(short "$(xp "string($prow)")"))"
fi
cpage "$ED_SESSION" POST "/admin/runs/$RUN1/cancel" -H 'Origin: null' -H 'Sec-Fetch-Site: same-origin' --data "csrf=$ED_CSRF"
location_is "the editor cancels the running run (as a browser sends it): 303 back to its page" "/admin/runs/$RUN1"
if run_wait "$RUN1" '.status == "cancelled"' 20; then
	ok "the running run ends cancelled"
else
	not_ok "the running run ends cancelled (last: $(short "$BODY"))"
fi
R1_REASON=$(jqb '.reason // empty')
k=$(jqb .steps_done)
is "cancelled: the API's reason names the steps done" "cancelled while running ($k of 13 steps done)" "$R1_REASON"
cpage "$ED_SESSION" GET "/admin/runs/$RUN1"
is "cancelled page: status, its reason, progress, finished" "cancelled|$R1_REASON|$k of 13 steps done|yes" \
	"$(ddv run-status)|$(ddv run-reason)|$(ddv run-progress)|$([[ $(xp 'string(//dd[@id="run-finished"]/time/@datetime)') == *T*Z ]] && echo yes || echo no)"
is "cancelled page: no reload, no cancel form, the steps done" "0 0 $k" \
	"$(xp 'count(//meta[@http-equiv="refresh"])') $(xp 'count(//form[@id="cancel-form"])') $(xp 'count(//table[@id="outputs"]//tr[@data-seq])')"

# the run form's wait ends before the run: 202, and its page all the same
cpage "$ED_SESSION" POST "/admin/scenarios/$LIVE_SID/runs" --data "variant=live&backend=&csrf=$ED_CSRF"
LIVE_RID=
if [[ $STATUS == 303 && $(hdr location) =~ /admin/runs/([0-9a-f]{32})$ ]]; then
	LIVE_RID=${BASH_REMATCH[1]}
	ok "the run form of a run that outlasts its wait: 303 to /admin/runs/ID"
else
	not_ok "the run form of a run that outlasts its wait: 303 to /admin/runs/ID (got HTTP $STATUS to $(short "$(hdr location)"): $(short "$(xp 'string(//*[@id="error"])')"))"
fi
req "$VW" GET "$M/runs/$LIVE_RID"
is "the form's run is still queued behind the others (the 202 path)" queued "$(jqb .status)"
cpage "$ED_SESSION" GET "/admin/runs/$LIVE_RID"
is "queued: status, not started, no step yet, reloads, the cancel form" "queued|not started|0 of 13 steps done|1|1" \
	"$(ddv run-status)|$(ddv run-started)|$(ddv run-progress)|$(xp 'count(//meta[@http-equiv="refresh"])')|$(xp 'count(//form[@id="cancel-form"])')"
# refused cancels change nothing: still queued, no cancel asked, no audit
before=$(state)
cpage "$ED_SESSION" POST "/admin/runs/$LIVE_RID/cancel" --data ''
is_html_status "cancel without csrf: 403" 403
error_has "cancel without csrf: #error says CSRF" CSRF
cpage "$ED_SESSION" POST "/admin/runs/$LIVE_RID/cancel" --data "csrf=$(repeat_char 0 64)"
is_html_status "cancel with a wrong csrf: 403" 403
cpage "$ED_SESSION" POST "/admin/runs/$LIVE_RID/cancel" -H 'Origin: http://evil.example' --data "csrf=$ED_CSRF"
is_html_status "cancel with a foreign Origin: 403" 403
cpage "$VW_SESSION" POST "/admin/runs/$LIVE_RID/cancel" --data "csrf=$VW_CSRF"
is_html_status "a viewer's cancel (valid session and csrf): 403" 403
error_has "a viewer's cancel: the API's message" "requires role editor; your token has viewer"
req "$VW" GET "$M/runs/$LIVE_RID"
is "refused cancels: still queued, no cancel asked" "queued false" "$(jqb '"\(.status) \(.cancel_requested)"')"
is "refused cancels changed nothing (scenarios, runs, audit)" "$before" "$(state)"
cpage "$ED_SESSION" POST "/admin/runs/$LIVE_RID/cancel" --data "csrf=$ED_CSRF"
location_is "the editor cancels the queued run: 303 back to its page" "/admin/runs/$LIVE_RID"
req "$VW" GET "$M/runs/$LIVE_RID"
is "the queued run is cancelled at once (API)" "cancelled|cancelled before it started" "$(jqb '"\(.status)|\(.reason)"')"
cpage "$ED_SESSION" GET "/admin/runs/$LIVE_RID"
is "cancelled before it started: its reason, not executed, no reload, no form" \
	"cancelled|cancelled before it started|not executed (cancelled before it started)|not started|0|0" \
	"$(ddv run-status)|$(ddv run-reason)|$(ddv run-score)|$(ddv run-started)|$(xp 'count(//meta[@http-equiv="refresh"])')|$(xp 'count(//form[@id="cancel-form"])')"
before=$(state)
cpage "$ED_SESSION" POST "/admin/runs/$LIVE_RID/cancel" --data "csrf=$ED_CSRF"
is_html_status "cancel of a run that has ended: 409" 409
sec_headers "the 409 of a late cancel"
error_has "the late cancel says the run has ended, and how" "has already ended (cancelled)"
is "the late cancel: the run's page, one #error, no form, no reload" "1 1 0 0" \
	"$(xp 'count(//dl[@id="run-summary"])') $(xp 'count(//*[@id="error"])') $(xp 'count(//form[@id="cancel-form"])') $(xp 'count(//meta[@http-equiv="refresh"])')"
is "the late cancel changed nothing" "$before" "$(state)"
page "$ED" POST "/admin/runs/$(repeat_char 0 32)/cancel" --data ''
is_html_status "cancel of a run that does not exist: 404" 404
page "$VW" GET "/admin/runs?scenario=$LIVE_SID&status=cancelled"
is "runs list filtered cancelled: both, no progress span" "2 0" \
	"$(xp "count(//table[@id=\"runs\"]//tr[@data-id=\"$LIVE_RID\" or @data-id=\"$RUN1\"])") $(xp 'count(//table[@id="runs"]//span[@class="progress"])')"
page "$VW" GET "/admin/runs?status=bogus"
error_has "a status filter not in the list: 400 naming the seven" "queued, running, completed, failed, degraded or cancelled"
page "$ED" GET "/admin/runs/$WALK_RID"
is "a completed run's page: no reload, no cancel form" "0 0" \
	"$(xp 'count(//meta[@http-equiv="refresh"])') $(xp 'count(//form[@id="cancel-form"])')"
# the rest of the waves are not needed
for r in "${BLOCKERS[@]}"; do req "$ED" POST "$M/runs/$r/cancel"; done

# a comparison is pending until both runs have ended
if ((HAVE_SCORER)); then
	E2E_NO_WAIT=1 req "$AD" POST $M/comparisons "{\"scenario_id\":\"$LIVE_SID\",\"baseline\":\"a\",\"candidate\":\"b\",\"suite\":\"$CMP_SUITE\"}"
	is "a slow comparison (API, no wait): 202 pending" "202 pending" "$STATUS $(jqb .status)"
	PCID=$(jqb '.id // empty')
	PB=$(jqb '.baseline.run_id // empty')
	PC=$(jqb '.candidate.run_id // empty')
	page "$VW" GET "/admin/comparisons/$PCID"
	is_html_status "the pending comparison's page: 200" 200
	is "pending: status and verdict say so, both runs linked" "pending|pending|/admin/runs/$PB|/admin/runs/$PC" \
		"$(xp 'string(//dd[@id="comparison-status"])' | xargs)|$(xp 'string(//dd[@id="verdict"])' | xargs)|$(xp 'string(//dd[@id="baseline-run"]/a/@href)')|$(xp 'string(//dd[@id="candidate-run"]/a/@href)')"
	is "pending: the page reloads itself every 2 s" "1 2" \
		"$(xp 'count(/html/head/meta[@http-equiv="refresh"])') $(xp 'string(/html/head/meta[@http-equiv="refresh"]/@content)')"
	req "$AD" POST "$M/runs/$PB/cancel"
	req "$AD" POST "$M/runs/$PC/cancel"
	for ((i = 0; i < 300; i++)); do
		req "$VW" GET "$M/comparisons/$PCID"
		[[ $(jqb .status) == decided ]] && break
		sleep 0.1
	done
	is "both runs cancelled: the comparison is decided" decided "$(jqb .status)"
	PVERDICT=$(jqb '.verdict // empty')
	page "$VW" GET "/admin/comparisons/$PCID"
	is "decided: its verdict, no reload" "decided|$PVERDICT|0" \
		"$(xp 'string(//dd[@id="comparison-status"])' | xargs)|$(xp 'string(//dd[@id="verdict"])' | xargs)|$(xp 'count(//meta[@http-equiv="refresh"])')"
fi

# ---- every page: the frame of the contract ------------------------------------------------------
frame_bad=""
nframe=0
for f in "$PAGES"/*.html; do
	what=$(cat "${f%.html}.what")
	[[ $what == *" -> 200" ]] || continue
	nframe=$((nframe + 1))
	BODY_FILE_SAVE=$BODY_FILE
	BODY_FILE=$f
	probs=""
	[[ $(head -c 15 "$f") == '<!DOCTYPE html>' ]] || probs+=" doctype"
	[[ $(xp 'string(/html/@lang)') == en ]] || probs+=" lang"
	[[ $(xp 'count(/html/head/link[@rel="stylesheet" and @href="/static/style.css"])') == 1 ]] || probs+=" stylesheet"
	[[ $(xp 'count(//main[@id="main"]//h1)') -ge 1 ]] || probs+=" main-h1"
	[[ $(xp 'count(//script)') == 0 ]] || probs+=" script"
	[[ $(xp 'count(//@style|//style)') == 0 ]] || probs+=" inline-style"
	[[ $(xp 'count(//@*[starts-with(name(),"on")])') == 0 ]] || probs+=" event-attr"
	if [[ $what != *"/admin/login "* && $what != *"/admin/login?"* ]]; then
		[[ $(xp 'count(//header//nav)') == 1 && -n $(xp 'string(//header//span[@id="whoami"])') ]] || probs+=" header-nav-whoami"
	fi
	BODY_FILE=$BODY_FILE_SAVE
	[[ -z $probs ]] || frame_bad+=" [$what:$probs]"
done
if ((nframe >= 20)); then
	is "every 200 page ($nframe): doctype, lang, stylesheet, header/nav/#whoami, main h1, no script/style/event attributes" "" "$frame_bad"
else
	not_ok "every 200 page: the frame of the contract (only $nframe pages with HTTP 200 were fetched, expected 20 or more)${frame_bad:+:$frame_bad}"
fi

# ---- xmllint --html on every page fetched (pages and error pages) -------------------------------
# libxml2 2.9's HTML parser is HTML 4: it calls the HTML5 elements the
# contract requires (header, nav, main, time, datalist) "invalid"; every other message is an
# error of the page.
lint_bad=""
nlint=0
for f in "$PAGES"/*.html; do
	nlint=$((nlint + 1))
	msgs=$(xmllint --html --noout "$f" 2>&1 | grep -E 'HTML parser (error|warning)|parser error|validity error' |
		grep -Ev 'Tag (header|nav|main|section|footer|article|aside|time|datalist) invalid' || true)
	if [[ -n $msgs ]]; then
		lint_bad+=" [$(cat "${f%.html}.what"): $(printf '%s' "$msgs" | head -n 2 | sed 's/^[^:]*:[0-9]*: //' | tr '\n' ' ')]"
	fi
done
if ((nlint >= 30)); then
	is "xmllint --html: no error on the $nlint pages fetched (pages and error pages)" "" "$lint_bad"
else
	not_ok "xmllint --html: only $nlint HTML pages were fetched (expected 30 or more)${lint_bad:+:$lint_bad}"
fi

# ---- module off and on from the overview form ----------------------------------------------------
signin "$AD"
AD_SESSION=$SESSION
AD_CSRF=$CSRF
cpage "$AD_SESSION" GET /admin/
is "admin overview: #role admin, module form to turn it off" "admin|enabled|0|Turn off" \
	"$(xp 'string(//*[@id="role"])' | xargs)|$(xp 'string(//*[@id="module-status"])' | xargs)|$(xp 'string(//form[@id="module-form"]//input[@name="enabled" and @type="hidden"]/@value)')|$(xp 'string(//form[@id="module-form"]//button)' | xargs)"
is "module form: post to /admin/modules/sandbox" "post /admin/modules/sandbox" \
	"$(xp 'string(//form[@id="module-form"]/@method)' | tr '[:upper:]' '[:lower:]') $(xp 'string(//form[@id="module-form"]/@action)')"
before=$(state)
cpage "$AD_SESSION" POST /admin/modules/sandbox --data 'enabled=0'
is_html_status "module form without csrf: 403" 403
is "module form without csrf: still enabled, nothing changed" "true|$before" "$(req "$AD" GET /v1/modules; jqb '.modules[]|select(.name=="sandbox")|.enabled')|$(state)"
cpage "$AD_SESSION" POST /admin/modules/sandbox --data "enabled=0&csrf=$AD_CSRF"
location_is "module form enabled=0: 303 to /admin/" /admin/
req "$AD" GET /v1/modules
is "the API: sandbox disabled" false "$(jqb '.modules[]|select(.name=="sandbox")|.enabled')"
cpage "$AD_SESSION" GET /admin/
is "overview: disabled, the form turns it on" "disabled|1|Turn on" \
	"$(xp 'string(//*[@id="module-status"])' | xargs)|$(xp 'string(//form[@id="module-form"]//input[@name="enabled"]/@value)')|$(xp 'string(//form[@id="module-form"]//button)' | xargs)"
for p in /admin/scenarios "/admin/scenarios/$WALK_SID" /admin/runs "/admin/runs/$WALK_RID" /admin/comparisons /admin/replays; do
	cpage "$AD_SESSION" GET "$p"
	is_html_status "module off: $p -> 404" 404
done
error_has "module off: #error says the module is disabled" disabled
sec_headers "the module-off 404"
cpage "$AD_SESSION" POST "/admin/scenarios/$WALK_SID/runs" --data "variant=off&csrf=$AD_CSRF"
is_html_status "module off: the run form -> 404" 404
cpage "$AD_SESSION" POST /admin/modules/sandbox --data "enabled=1&csrf=$AD_CSRF"
location_is "module form enabled=1: 303 to /admin/" /admin/
req "$AD" GET /v1/modules
is "the API: sandbox enabled again" true "$(jqb '.modules[]|select(.name=="sandbox")|.enabled')"
module_on "$AD" >/dev/null || true

# ---- sign-out --------------------------------------------------------------------------------------
before_rows=$(db_query "SELECT count(*) FROM web_sessions" 2>/dev/null || echo NA)
cpage "$ED2_SESSION" POST /admin/logout --data "csrf=$ED2_CSRF"
location_is "sign-out: 303 to /admin/login" /admin/login
sec_headers "the sign-out redirect"
cookie=$(hdr set-cookie | grep '^olivares_session=' | head -n 1)
if [[ $cookie =~ ^olivares_session=\; && ${cookie,,} == *"max-age=0"* && ${cookie,,} == *"path=/admin/"* ]]; then
	ok "sign-out: the cookie is emptied with Max-Age=0"
else
	not_ok "sign-out: the cookie is emptied with Max-Age=0 (got $(short "$cookie"))"
fi
cpage "$ED2_SESSION" GET /admin/
location_is "the signed-out cookie: 303 to /admin/login, saying it ended" "/admin/login?next=/admin/&ended=1"
cpage "$ED2_SESSION" POST "/admin/scenarios/$WALK_SID/runs" --data "variant=after&csrf=$ED2_CSRF"
is_html_status "the signed-out cookie on the run form: 401" 401
if [[ $before_rows != NA ]]; then
	is "sign-out deleted the stored session" "$((before_rows - 1))" "$(db_query "SELECT count(*) FROM web_sessions")"
fi
cpage "$ED_SESSION" GET /admin/
is_html_status "the other session of the same token still works" 200
# an expired session (its expires_at put in the past in the store) is over
signin "$VW"
if [[ -n $SESSION ]] && db_query "UPDATE web_sessions SET expires_at = '2000-01-01T00:00:00.000Z' WHERE sha256 = '$(sha256_of "$SESSION")'" >/dev/null 2>&1; then
	cpage "$SESSION" GET /admin/
	location_is "an expired session: 303 to /admin/login, saying it ended" "/admin/login?next=/admin/&ended=1"
else
	echo "# skip - the store cannot be written from here: session expiry not checked"
fi

# ---- the browser tests (tests/browser/admin.test.mjs) ------------------------------------------------
if [[ ${OLIVARES_TEST_BROWSER:-1} == 0 ]]; then
	ok "browser tests run in the first e2e pass (OLIVARES_TEST_BROWSER=0 here)"
	done_testing
fi
CHROMIUM=${OLIVARES_CHROMIUM:-/usr/bin/chromium}
if [[ ! -x $CHROMIUM ]] || ! command -v node >/dev/null; then
	not_ok "browser tests: chromium or node missing ($CHROMIUM, $(command -v node || echo 'no node'))"
	done_testing
fi
if [[ ! -d $OLV_ROOT/tests/browser/node_modules/playwright-core ]]; then
	# shellcheck disable=SC1091 # sourced from the repository root
	(cd "$OLV_ROOT" && . scripts/lib/deps.sh && olv_browser_deps) >"$E2E_TMP/npm.log" 2>&1 ||
		sed 's/^/# npm: /' "$E2E_TMP/npm.log"
fi
if [[ ! -d $OLV_ROOT/tests/browser/node_modules/playwright-core ]]; then
	not_ok "browser tests: playwright-core not installed (npm ci --prefix tests/browser)"
	done_testing
fi
rc=0
env OLIVARES_URL="$OLIVARES_URL" OLV_ADMIN_TOKEN="$AD" OLV_EDITOR_TOKEN="$ED" OLV_VIEWER_TOKEN="$VW" \
	OLV_CHROMIUM="$CHROMIUM" OLIVARES_ARTIFACTS="${OLIVARES_ARTIFACTS:-$OLV_ROOT/artifacts/admin-screenshots}" \
	OLV_WALK_SID="$WALK_SID" OLV_WALK_RID="$WALK_RID" OLV_CMP_SID="${CID:+$CMP_SID}" OLV_CMP_SUITE="$CMP_SUITE" \
	OLV_CMP_BASELINE=candidate OLV_CMP_CANDIDATE=better OLV_CMP_ID="$CID" \
	OLV_XSS_SID="$XSS_SID" OLV_XSS_RID="$XSS_RID" OLV_XSS_PAYLOADS="$PAYLOADS_JSON" \
	OLV_XSS_NAME="$XSS_NAME" OLV_XSS_VARIANT="$XSS_VARIANT" OLV_REPLAY_RID="$REPLAY_RID" \
	timeout 300 node "$OLV_ROOT/tests/browser/admin.test.mjs" >"$E2E_TMP/browser.out" 2>"$E2E_TMP/browser.err" || rc=$?
nb=0
while IFS= read -r line; do
	case $line in
	"ok - "*) ok "browser: ${line#ok - }" ;;
	"not ok - "*)
		not_ok "browser: ${line#not ok - }"
		nb=$((nb + 1))
		;;
	*) printf '# %s\n' "$line" ;;
	esac
done <"$E2E_TMP/browser.out"
if [[ -s $E2E_TMP/browser.err ]]; then tail -n 30 "$E2E_TMP/browser.err" | sed 's/^/# browser stderr: /'; fi
if ((rc != 0 && nb == 0)); then
	not_ok "browser tests exited with status $rc without reporting a failure"
elif ((rc == 0)); then
	ok "browser tests exited 0"
fi
done_testing
