#!/usr/bin/env bash
# t0460: a store that stops answering. Each PostgreSQL backend serving the
# workers is stopped (SIGSTOP: no ODBC call of theirs returns), and two
# requests come in, one per worker. Without a bound the workers would wait
# for as long as the backends do, and so would every later request: the
# request watchdog (fcgi/main.c) ends a worker whose request has held it
# request_seconds_max + 30 s, the master starts another (with a new
# connection), and requests are answered again while the stopped backends
# are still stopped. Not before that bound, either: the workers live
# through request_seconds_max.
# A stack of its own, with two workers and the shortest limits, on a
# database of its own on the PostgreSQL server of the e2e run (skipped
# when the run is not on PostgreSQL).
. "$(dirname "$0")/lib.sh"
# shellcheck source=../../scripts/lib/common.sh
. "$OLV_ROOT/scripts/lib/common.sh"

if [[ ${OLIVARES_DSN:-} != *PostgreSQL* ]]; then
	ok "# SKIP the e2e run is not on PostgreSQL"
	done_testing
fi
dsn_field() { sed -n "s/.*;$1=\([^;]*\).*/\1/p" <<<";$OLIVARES_DSN"; }
PGHOST=$(dsn_field Servername)
PGPORT=$(dsn_field Port)
PGUSER=$(dsn_field Username)
export PGHOST PGPORT PGUSER
DB=olv_hung_$$
if ! createdb "$DB" 2>"$E2E_TMP/createdb.err"; then
	not_ok "a database of its own ($(short "$(cat "$E2E_TMP/createdb.err")"))"
	done_testing
fi
D=$E2E_TMP/hung
mkdir -p "$D"
STACK=$OLV_ROOT/scripts/stack
stopped=()
cleanup() {
	((${#stopped[@]})) && kill -CONT "${stopped[@]}" 2>/dev/null
	"$STACK" down >/dev/null 2>&1
	dropdb --if-exists --force "$DB" >/dev/null 2>&1
	rm -rf "$E2E_TMP"
}
trap cleanup EXIT
cat >"$D/olivares.conf" <<'CONF'
[server]
workers = 2
wait_max_seconds = 2
[runner]
timeout_ms = 100
[scorer]
timeout_ms = 100
CONF
export OLIVARES_DATA=$D/data OLIVARES_CONF=$D/olivares.conf OLIVARES_PORT
OLIVARES_PORT=$(olv_free_port)
OLIVARES_DSN="Driver=PostgreSQL Unicode;Servername=$PGHOST;Port=$PGPORT;Database=$DB;Username=$PGUSER;SSLmode=disable"
export OLIVARES_DSN
if "$STACK" up >"$D/up.out" 2>&1; then
	ok "a stack of two workers on a database of its own"
else
	not_ok "a stack of two workers on a database of its own ($(short "$(tail -n 3 "$D/up.out")"))"
	done_testing
fi
OLIVARES_URL=http://127.0.0.1:$OLIVARES_PORT
TK=$(cat "$D/data/admin_token")
LOG=$D/data/log/olivares-fcgi.log
longest=$("$OLIVARES_BUILD/olivares-fcgi" --check-config 2>/dev/null | sed -n 's/^# request_seconds_max = //p')
is "the configuration's longest request" 12 "$longest"
req "$TK" PUT /v1/modules/sandbox '{"enabled":true}'
is_status "the module on" 200
bound=$((longest + 30))

# each worker holds its connection: two requests at once reach both
for _ in 1 2; do
	curl -s -o /dev/null -H "Authorization: Bearer $TK" --max-time 10 "$OLIVARES_URL/v1/modules" &
done
wait
req "$TK" GET /v1/modules
is_status "the modules answer" 200
workers_before=$(pgrep -P "$(cat "$D/data/run/olivares-fcgi.pid")" -x olivares-fcgi | sort | tr '\n' ' ')

# stop every backend of this database
mapfile -t stopped < <(psql -d "$DB" -Atc \
	"select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()")
if ((${#stopped[@]} >= 2)); then
	ok "the workers' backends (${#stopped[@]}) found"
else
	not_ok "the workers' backends found (got ${#stopped[@]}: ${stopped[*]})"
fi
kill -STOP "${stopped[@]}"
start=$(date +%s)
for _ in 1 2; do
	curl -s -o /dev/null -H "Authorization: Bearer $TK" --max-time 5 "$OLIVARES_URL/v1/m/sandbox/scenarios" &
done
wait
# the workers are stuck now; they live through the longest request
sleep $((longest - 5 > 0 ? longest - 5 : 0))
n=$(grep -c "held this worker over" "$LOG")
is "no worker stopped before the longest request's time ($longest s)" 0 "$n"

# until the bound plus 20 s, for the watchdog to fire on both
deadline=$((start + bound + 20))
while (($(date +%s) < deadline)); do
	(($(grep -c "stopped by its request watchdog" "$LOG") >= 2)) && break
	sleep 1
done
took=$(($(date +%s) - start))
is "both stuck workers stopped by the watchdog" 2 "$(grep -c "stopped by its request watchdog" "$LOG")"
if ((took >= bound - 5)); then
	ok "not before the bound ($bound s; after $took s)"
else
	not_ok "not before the bound ($bound s; after $took s)"
fi
line=$(grep -m1 "held this worker over" "$LOG")
# one JSON line: the request's id, method and path, and the bound
if [[ $(jq -r --arg b "held this worker over $bound s" \
	'if .level == "error" and .method == "GET" and .path == "/v1/m/sandbox/scenarios" and (.request_id | length) > 0 and (.msg | contains($b)) then "yes" else "no" end' \
	<<<"$line" 2>/dev/null) == yes ]]; then
	ok "the log names the stuck request and the bound"
else
	not_ok "the log names the stuck request and the bound (got $(short "$line"))"
fi

# new workers, new connections: answered while the old backends are still stopped
code=000
for _ in $(seq 1 20); do
	req "$TK" GET /v1/modules
	code=$STATUS
	[[ $code == 200 ]] && break
	sleep 0.5
done
is "answered again, the stopped backends still stopped" 200 "$code"
workers_after=$(pgrep -P "$(cat "$D/data/run/olivares-fcgi.pid")" -x olivares-fcgi | sort | tr '\n' ' ')
isnt "the workers are new ones" "$workers_before" "$workers_after"
req "$TK" POST /v1/m/sandbox/scenarios '{"name":"after the hang","steps":[{"key":"k","input":"x"}]}'
is_status "a write succeeds" 201
kill -CONT "${stopped[@]}"
stopped=()
done_testing
