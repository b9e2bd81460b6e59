#!/usr/bin/env bash
# The admin view's backend choice and the preflight it knows (README,
# "Admin view"; GET /v1/m/sandbox/backends?preflight=cached): the run form
# lists the backends the tenant may use, each marked with the pool's last
# preflight answer, without starting a runner per page view:
#   - right after a restart no worker has an answer: the API's cached mode
#     gives preflight null for all four, and every option says "not
#     checked" (with how to check as its title), no failure note;
#   - once one request has listed the backends with their preflight (the
#     answers are the pool's, whichever worker serves the next request),
#     the cached mode gives the same ok/reason as the listing, with age_s; a
#     backend that passed has no mark; one that failed (firecracker on a
#     host without /dev/kvm) says "preflight failed", its option's title
#     and the note under the select give the runner's reason, as text.
# Restarts the stack (as t1200 does), so that its workers start cold.
. "$(dirname "$0")/lib.sh"
e2e_require
cd "$E2E_TMP" || exit 1

AD=$OLV_ADMIN_TOKEN
ED=$OLV_EDITOR_TOKEN
M=/v1/m/sandbox
STACK=$OLV_ROOT/scripts/stack

# whatever happens below, leave the stack up for the next test
trap '"$STACK" status >/dev/null 2>&1 || "$STACK" up >/dev/null 2>&1; rm -rf "$E2E_TMP"' EXIT

# page TOKEN PATH: GET a view page with a bearer token into $BODY_FILE
page() {
	STATUS=$(curl -s -S -o "$BODY_FILE" -w '%{http_code}' --max-time 60 \
		-H "Authorization: Bearer $1" "$OLIVARES_URL$2" 2>"$E2E_TMP/curl-err") || STATUS=${STATUS:-000}
}

xp() {
	xmllint --html --xpath "$1" "$BODY_FILE" 2>/dev/null
}

# opt NAME: the run form's option for backend NAME, "text|title"
opt() {
	local o="//form[@id=\"run-form\"]//select[@name=\"backend\"]/option[@value=\"$1\"]"
	printf '%s|%s' "$(xp "string($o)" | xargs)" "$(xp "string($o/@title)")"
}

module_on "$AD" || exit 1
req "$ED" POST $M/scenarios '{"name":"preflight marks","steps":[{"key":"step-1","input":"agent:user1@example.test"}],"mocks":[]}'
is_status "a scenario to show the run form on: 201" 201
SID=$(jqb .id)
# demo may use all four backends (run.sh --fresh); the marks are checked
# on the backends the tenant is allowed
req "$ED" GET "$M/backends?preflight=false"
ALLOWED=$(jqb '[.backends[]|select(.allowed)|.name]|join(" ")')
isnt "the tenant is allowed some backends" "" "$ALLOWED"
DEFAULT=$(jqb '.backends[]|select(.default)|.name')

# ---- cold: no worker has a preflight answer --------------------------------
if "$STACK" restart >restart.out 2>&1; then ok "scripts/stack restart (cold workers)"; else not_ok "scripts/stack restart ($(tail -n 20 restart.out))"; fi
req "$ED" GET "$M/backends?preflight=cached"
is_status "GET /backends?preflight=cached: 200" 200
is "cold: cached mode gives preflight null for all four, starting nothing" \
	"inproc-mock:null namespaces:null gvisor:null firecracker:null" \
	"$(jqb '[.backends[]|"\(.name):\(.preflight)"]|join(" ")')"
page "$ED" "/admin/scenarios/$SID"
is "cold: the scenario page answers 200" 200 "$STATUS"
for b in $ALLOWED; do
	want="$b (not checked)"
	[[ $b == "$DEFAULT" ]] && want="$b (default, not checked)"
	is "cold: option $b says not checked, the title how to check" \
		"$want|no preflight known on this server yet (olivares sandbox backends, or GET /v1/m/sandbox/backends, checks it)" \
		"$(opt "$b")"
done
is "cold: no failure note" 0 "$(xp 'count(//p[@id="backend-preflight"])')"

# ---- warm: one listing, as an operator runs `olivares sandbox backends` ----
# The answers are the pool's (fcgi/run/preflight_cache.h), not the serving
# worker's: after one listing every worker has them. (Kept per worker, 3
# requests in 4 of a 4-worker pool still said "not checked" here.)
req "$ED" GET "$M/backends"
is_status "one listing with its preflights: 200" 200
complete=1
for _ in 1 2 3 4 5 6 7 8; do
	req "$ED" GET "$M/backends?preflight=cached"
	[[ $(jqb '[.backends[]|select(.preflight==null)]|length') == 0 ]] || complete=0
done
is "warm: after one listing the cached answers are complete on 8 requests in a row" 1 "$complete"
marked=0
for _ in 1 2 3 4 5 6 7 8; do
	page "$ED" "/admin/scenarios/$SID"
	[[ $(xp 'count(//form[@id="run-form"]//option[contains(., "not checked")])') == 0 ]] && marked=$((marked + 1))
done
is "warm: after one listing no run form of 8 page views says \"not checked\"" 8 "$marked"
req "$ED" GET "$M/backends"
cp "$BODY_FILE" listing.json
req "$ED" GET "$M/backends?preflight=cached"
cp "$BODY_FILE" cached.json
is "warm: cached mode gives the listing's ok and reason" \
	"$(jq -c '[.backends[]|{name,allowed,default,ok:.preflight.ok,reason:.preflight.reason}]' listing.json)" \
	"$(jq -c '[.backends[]|{name,allowed,default,ok:.preflight.ok,reason:.preflight.reason}]' cached.json)"
is "warm: with age_s, whole seconds under the 30 s the listing reuses them" true \
	"$(jq '[.backends[]|.preflight.age_s|type=="number" and .>=0 and .<30 and .==floor]|all' cached.json)"
is "warm: cached mode adds only age_s to the preflight object" '["age_s","ok","reason"]' \
	"$(jq -c '[.backends[]|.preflight|keys]|unique|.[0]' cached.json)"

page "$ED" "/admin/scenarios/$SID"
failed=0
for b in $ALLOWED; do
	okv=$(jq -r --arg b "$b" '.backends[]|select(.name==$b)|.preflight.ok' listing.json)
	reason=$(jq -r --arg b "$b" '.backends[]|select(.name==$b)|.preflight.reason' listing.json)
	if [[ $okv == true ]]; then
		want="$b"
		[[ $b == "$DEFAULT" ]] && want="$b (default)"
		is "warm: option $b passed its preflight: no mark, no title" "$want|" "$(opt "$b")"
	else
		failed=$((failed + 1))
		want="$b (preflight failed)"
		[[ $b == "$DEFAULT" ]] && want="$b (default, preflight failed)"
		got=$(opt "$b")
		is "warm: option $b failed its preflight: marked" "$want" "${got%%|*}"
		if [[ ${got#*|} =~ ^preflight\ failed\ [0-9]+\ s\ ago:\ (.*)$ && ${BASH_REMATCH[1]} == "$reason" ]]; then
			ok "warm: option $b's title is the runner's reason, as text ($reason)"
		else
			not_ok "warm: option $b's title is the runner's reason (got $(short "${got#*|}"), want $(short "$reason"))"
		fi
		note=$(xp 'string(//form[@id="run-form"]//p[@id="backend-preflight"])')
		if [[ $note == *"$b: $reason"* ]]; then
			ok "warm: the note under the select names $b and its reason"
		else
			not_ok "warm: the note names $b and its reason (got $(short "$note"))"
		fi
	fi
done
if ((failed == 0)); then
	echo "# skip - failed marks: every allowed backend passes its preflight on this host"
	is "warm: no failure note when every backend passed" 0 "$(xp 'count(//p[@id="backend-preflight"])')"
else
	is "warm: one failure note, in the run form" 1 "$(xp 'count(//form[@id="run-form"]//p[@id="backend-preflight"])')"
	# an admin's page holds the comparison form too: its own note, ids unique
	page "$AD" "/admin/scenarios/$SID"
	is "warm: admin's page: one p#backend-preflight" 1 "$(xp 'count(//p[@id="backend-preflight"])')"
	is "warm: admin's page: the compare form's note has its own id" 1 \
		"$(xp 'count(//form[@id="compare-form"]//p[@id="compare-backend-preflight"])')"
	page "$ED" "/admin/scenarios/$SID"
fi
if [[ -e /dev/kvm ]] && [[ -x /usr/bin/firecracker || -x /usr/local/bin/firecracker ]]; then
	echo "# skip - firecracker may pass its preflight here (/dev/kvm and firecracker)"
elif [[ " $ALLOWED " == *" firecracker "* ]]; then
	is "warm: firecracker (no /dev/kvm or no binary here) is marked failed" "firecracker (preflight failed)" \
		"$(opt firecracker | cut -d'|' -f1)"
fi
# the page parses without an error other than libxml2 2.9 not knowing HTML5's elements
errs=$(xmllint --html --noout "$BODY_FILE" 2>&1 | grep -E 'HTML parser (error|warning)|parser error|validity error' |
	grep -Ev 'Tag (header|nav|main|section|footer|article|aside|time|datalist) invalid' || true)
is "the page parses" "" "$errs"

done_testing
