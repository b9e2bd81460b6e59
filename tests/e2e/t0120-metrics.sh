#!/usr/bin/env bash
# GET /metrics through nginx (docs/metrics.md): the Prometheus text format
# that promtool accepts without a lint problem, the requests this test made
# counted under their route pattern, method and status, its run under its
# status and backend, the queue depth and the store's other figures, no
# tenant name or id in the text (the default config), and nginx refusing
# any source but loopback with the JSON 403.
. "$(dirname "$0")/lib.sh"
e2e_require
cd "$E2E_TMP" || exit 1

ED=$OLV_EDITOR_TOKEN
AD=$OLV_ADMIN_TOKEN
M=/v1/m/sandbox
module_on "$AD" || exit 1
TENANT=$(unique t0120-tenant)
new_tenant_token "$TENANT" admin >"$E2E_TMP/other-token"

# scrape FILE: GET /metrics into FILE; STATUS and the Content-Type in CT
scrape() {
	STATUS=$(curl -s -S -D "$E2E_TMP/mhdr" -o "$1" -w '%{http_code}' --max-time 60 \
		"$OLIVARES_URL/metrics" 2>"$E2E_TMP/curl-err") || STATUS=${STATUS:-000}
	CT=$(tr -d '\r' <"$E2E_TMP/mhdr" | sed -n 's/^content-type: *//Ip')
}
# value FILE SERIES: the value of the sample whose name and labels are
# SERIES exactly (as the text writes them), "" when there is none
value() {
	awk -v s="$2" 'substr($0, 1, length(s) + 1) == s " " { print substr($0, length(s) + 2) }' "$1"
}
# num X: X when it is a number as Prometheus writes one, else "not a number"
num() { if [[ $1 =~ ^[0-9]+(\.[0-9]+)?(e[-+]?[0-9]+)?$ ]]; then echo "$1"; else echo "not a number: $1"; fi; }

scrape before.txt
is_status "GET /metrics from loopback: 200" 200
is "Content-Type is the text format 0.0.4" "text/plain; version=0.0.4; charset=utf-8" "$CT"

# requests of known routes and statuses
id0=$(repeat_char 0 32)
for _ in 1 2 3; do req "$ED" GET "$M/scenarios/$id0"; done
is_error "an unknown scenario is a 404" 404 not_found
req "" GET "$M/scenarios"
is_status "no token: 401" 401
req "$ED" GET /v1/no/such/route
is_status "a path no route has: 404" 404
req "$ED" POST $M/scenarios '{"name":"t0120","steps":[{"key":"a","input":"tool:x"},{"key":"b","input":"tool:x"}],"mocks":[{"resource":"tool:x","response":"x"}]}'
is_status "a scenario" 201
SID=$(jqb .id)
req "$ED" POST "$M/scenarios/$SID/runs" '{"backend":"inproc-mock"}'
is_status "a run, waited for" 201
is "the run completed" completed "$(jqb .status)"
curl -s -o /dev/null --max-time 30 "$OLIVARES_URL/admin" || true

scrape m.txt
is_status "GET /metrics again: 200" 200
sed -n '1,400p' m.txt | grep -v '_bucket{' | head -n 80 | sed 's/^/#   /'

# the text format, linted
if promtool check metrics <m.txt >"$E2E_TMP/promtool.out" 2>&1; then
	ok "promtool check metrics: no problem"
else
	not_ok "promtool check metrics: no problem ($(short "$(cat "$E2E_TMP/promtool.out")"))"
fi

# the counters went up by what this test did (other requests of other
# workers may add to them; none of these series is touched elsewhere)
R='olivares_http_requests_total{route="/v1/m/sandbox/scenarios/{id}",method="GET",status="404"}'
b=$(value before.txt "$R")
a=$(value m.txt "$R")
is "three 404 GETs of /v1/m/sandbox/scenarios/{id} counted" 3 "$((${a:-0} - ${b:-0}))"
R='olivares_http_requests_total{route="/v1/m/sandbox/scenarios",method="GET",status="401"}'
is "the 401 counted under its route" 1 "$(($(value m.txt "$R") - $(value before.txt "$R" | grep . || echo 0)))"
R='olivares_http_requests_total{route="unmatched",method="GET",status="404"}'
is "the unknown path counted as route unmatched" 1 "$(($(value m.txt "$R") - $(value before.txt "$R" | grep . || echo 0)))"
R='olivares_http_requests_total{route="/v1/m/sandbox/scenarios/{id}/runs",method="POST",status="201"}'
is "the run's POST counted with its 201" 1 "$(($(value m.txt "$R") - $(value before.txt "$R" | grep . || echo 0)))"
R='olivares_http_requests_total{route="/metrics",method="GET",status="200"}'
is "the first scrape counted" 1 "$(($(value m.txt "$R") - $(value before.txt "$R" | grep . || echo 0)))"
if grep -q '^olivares_http_requests_total{route="/admin",method="GET",status="[0-9]*"} [1-9]' m.txt; then
	ok "the admin view's request counted under route /admin"
else
	not_ok "the admin view's request counted under route /admin"
fi
if grep -q '^olivares_http_requests_total{route="/v1/no/' m.txt; then
	not_ok "no raw path as a route label"
else
	ok "no raw path as a route label"
fi
c=$(value m.txt olivares_http_request_duration_seconds_count)
inf=$(value m.txt 'olivares_http_request_duration_seconds_bucket{le="+Inf"}')
is "the duration histogram's +Inf bucket is its count" "$c" "$inf"
if ((${c:-0} >= 8)); then ok "the duration histogram counted the requests ($c)"; else not_ok "the duration histogram counted the requests (count $c)"; fi

# the store's figures
is "olivares_store_up 1" 1 "$(value m.txt olivares_store_up)"
# runs of other tests may end meanwhile: at least this test's one more
R='olivares_runs{status="completed",backend="inproc-mock"}'
b=$(value before.txt "$R")
a=$(value m.txt "$R")
if [[ $a =~ ^[0-9]+$ ]] && ((a >= ${b:-0} + 1)); then
	ok "this run counted under completed and inproc-mock ($a, was ${b:-none})"
else
	not_ok "this run counted under completed and inproc-mock (got $(short "$a"), was $(short "$b"))"
fi
q=$(value m.txt olivares_queue_depth)
is "olivares_queue_depth is a number" "$q" "$(num "$q")"
is "olivares_queue_oldest_age_seconds is a number" "$(value m.txt olivares_queue_oldest_age_seconds)" \
	"$(num "$(value m.txt olivares_queue_oldest_age_seconds)")"
rc=$(value m.txt olivares_run_duration_seconds_count)
if [[ $rc =~ ^[0-9]+$ ]] && ((rc >= a)); then ok "the run duration histogram holds the ended runs ($rc)"; else not_ok "the run duration histogram holds the ended runs (count $(short "$rc"), completed $a)"; fi
sc=$(value m.txt olivares_step_duration_seconds_count)
if ((${sc:-0} >= 2)); then ok "the step duration histogram holds this run's two steps ($sc)"; else not_ok "the step duration histogram holds this run's two steps (count $sc)"; fi
live=$(value m.txt 'olivares_executors{state="live"}')
if ((${live:-0} >= 1)); then ok "a live executor ($live)"; else not_ok "a live executor (got $(short "$live"))"; fi
hb=$(grep -c '^olivares_executor_last_heartbeat_timestamp_seconds{executor="' m.txt)
if ((hb >= 1)); then ok "an executor's last heartbeat"; else not_ok "an executor's last heartbeat (none)"; fi
now=$(date +%s)
t=$(grep '^olivares_executor_last_heartbeat_timestamp_seconds{' m.txt | head -n 1 | awk '{ printf "%d", $2 }')
if ((t > now - 120 && t <= now + 5)); then ok "the heartbeat is seconds since the epoch, recent"; else not_ok "the heartbeat is seconds since the epoch, recent (got $t, now $now)"; fi
is "olivares_worker_restarts_total is a number" "$(value m.txt olivares_worker_restarts_total)" \
	"$(num "$(value m.txt olivares_worker_restarts_total)")"
want=$(sed -n 's/^AC_INIT(\[[^]]*\], \[\([^]]*\)\].*/\1/p' "$OLV_ROOT/configure.ac")
is "olivares_build_info names configure.ac's version" 1 "$(value m.txt "olivares_build_info{version=\"$want\"}")"
for f in olivares_store_retries_total olivares_store_unavailable_total olivares_build_info; do
	if grep -q "^# TYPE $f " m.txt && grep -q "^# HELP $f " m.txt; then ok "$f has HELP and TYPE"; else not_ok "$f has HELP and TYPE"; fi
done
bad=$(grep -v '^#' m.txt | grep -v '^olivares_' | head -n 1)
is "every sample's name starts with olivares_" "" "$bad"

# no tenant in the text by default
DEMO_ID=$(admin_cli tenant list 2>/dev/null | awk -F '\t' '$2 == "demo" { print $1 }')
OTHER_ID=$(admin_cli tenant list 2>/dev/null | awk -F '\t' -v t="$TENANT" '$2 == t { print $1 }')
if [[ $DEMO_ID =~ ^[0-9a-f]{32}$ && $OTHER_ID =~ ^[0-9a-f]{32}$ ]]; then ok "the tenants' ids (olivares-admin tenant list)"; else not_ok "the tenants' ids (olivares-admin tenant list: $(short "$DEMO_ID $OTHER_ID"))"; fi
for s in "$DEMO_ID" "$OTHER_ID" "$TENANT" 'tenant="' '"demo"'; do
	if [[ -n $s ]] && grep -qF -- "$s" m.txt; then not_ok "no $(short "$s") in the text"; else ok "no $(short "$s") in the text"; fi
done

# HEAD, and another method
code=$(curl -s -S -I -o /dev/null -w '%{http_code}' --max-time 30 "$OLIVARES_URL/metrics" || true)
is "HEAD /metrics: 200" 200 "$code"
req "" POST /metrics '{}'
is_error "POST /metrics: 405" 405 method_not_allowed

# loopback only: 127.0.0.2 is loopback, but not 127.0.0.1
PORT=${OLIVARES_URL##*:}
STATUS=$(curl -s -S --interface 127.0.0.2 -o "$BODY_FILE" -w '%{http_code}' --max-time 30 \
	"http://127.0.0.1:$PORT/metrics" 2>"$E2E_TMP/curl-err") || STATUS=${STATUS:-000}
read_body
is_error "from 127.0.0.2: nginx's JSON 403" 403 forbidden
if grep -q '^olivares_' "$BODY_FILE"; then not_ok "the refusal holds no metric"; else ok "the refusal holds no metric"; fi
# the pool routes the path as sent, nginx checks the one it decoded and
# merged: the same refusal for every spelling that reaches the route
for p in /%6detrics '/metrics?x=1' //metrics /v1/../metrics; do
	code=$(curl -s -S --path-as-is --interface 127.0.0.2 -o /dev/null -w '%{http_code}' --max-time 30 \
		"http://127.0.0.1:$PORT$p" 2>"$E2E_TMP/curl-err") || code=000
	is "from 127.0.0.2, $p: 403" 403 "$code"
done
# the API itself stays open to that address
STATUS=$(curl -s -S --interface 127.0.0.2 -o /dev/null -w '%{http_code}' --max-time 30 \
	"http://127.0.0.1:$PORT/healthz" 2>"$E2E_TMP/curl-err") || STATUS=000
is "from 127.0.0.2, /healthz still answers: 200" 200 "$STATUS"

# a worker killed: the master replaces it and counts it
master=$(cat "$OLIVARES_DATA/run/olivares-fcgi.pid" 2>/dev/null)
worker=$(pgrep -P "${master:-0}" -x olivares-fcgi | head -n 1)
if [[ -z $worker ]]; then
	not_ok "a worker of the pool (master ${master:-unknown})"
else
	scrape r0.txt
	r0=$(value r0.txt olivares_worker_restarts_total)
	kill -KILL "$worker"
	r1=$r0
	for _ in $(seq 1 50); do
		scrape r1.txt
		r1=$(value r1.txt olivares_worker_restarts_total)
		[[ $r1 != "$r0" ]] && break
		sleep 0.2
	done
	is "a worker killed: olivares_worker_restarts_total one more" "$((${r0:-0} + 1))" "$r1"
fi

# a store that does not answer: the pool's counters and olivares_store_up 0,
# never a 503 for the scrape (SQLite: the database file moved away for a
# moment; a worker's store then answers STORE_UNAVAILABLE)
DB=$OLIVARES_DATA/olivares.db
if [[ ${OLIVARES_DSN:-} == *PostgreSQL* || ! -f $DB ]]; then
	ok "# SKIP the store taken away: the e2e run is not on the stack's SQLite file"
else
	trap '[[ -f $DB.away && ! -e $DB ]] && mv "$DB.away" "$DB"; rm -rf "$E2E_TMP"' EXIT
	mv "$DB" "$DB.away"
	scrape down.txt
	DOWN=$STATUS
	req "$ED" GET "$M/scenarios"
	mv "$DB.away" "$DB"
	is_error "the store gone: the API answers 503 storage_unavailable" 503 storage_unavailable
	is "the store gone: /metrics still answers 200" 200 "$DOWN"
	is "the store gone: olivares_store_up 0" 0 "$(value down.txt olivares_store_up)"
	if grep -q '^olivares_http_requests_total{' down.txt; then ok "the store gone: the request counters are there"; else not_ok "the store gone: the request counters are there"; fi
	if grep -q '^olivares_runs' down.txt; then not_ok "the store gone: no store figure"; else ok "the store gone: no store figure"; fi
	if promtool check metrics <down.txt >"$E2E_TMP/promtool.out" 2>&1; then
		ok "the store gone: promtool check metrics passes"
	else
		not_ok "the store gone: promtool check metrics passes ($(short "$(cat "$E2E_TMP/promtool.out")"))"
	fi
	scrape back.txt
	is_status "the store back: 200" 200
	is "the store back: olivares_store_up 1" 1 "$(value back.txt olivares_store_up)"
	b=$(value m.txt olivares_store_unavailable_total)
	a=$(value back.txt olivares_store_unavailable_total)
	if [[ $a =~ ^[0-9]+$ ]] && ((a >= ${b:-0} + 1)); then
		ok "the 503 storage_unavailable counted ($a, was $b)"
	else
		not_ok "the 503 storage_unavailable counted (got $(short "$a"), was $(short "$b"))"
	fi
fi

done_testing
