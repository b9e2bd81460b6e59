#!/usr/bin/env bash
# t0440: a SQLite database whose disk fills up, then whose file is deleted
# and replaced under the server. Writes that do not fit get the JSON 503
# storage_unavailable (not a 500), nothing half-written stays, and once
# there is space again the same server answers and writes without a
# restart. A deleted file is a 503 (no write acknowledged into it), and a
# file put in its place (a backup restored) is the one read and written.
# A stack of its own, its database on a 1 MiB tmpfs (root only: skipped
# otherwise).
. "$(dirname "$0")/lib.sh"
# shellcheck source=../../scripts/lib/common.sh
. "$OLV_ROOT/scripts/lib/common.sh"

if ((EUID != 0)); then
	ok "# SKIP mounting a tmpfs needs root"
	done_testing
fi
D=$E2E_TMP/full
mkdir -p "$D/db"
if ! mount -t tmpfs -o size=1m tmpfs "$D/db"; then
	not_ok "a 1 MiB tmpfs for the database"
	done_testing
fi
STACK=$OLV_ROOT/scripts/stack
export OLIVARES_DATA=$D/data OLIVARES_PORT
OLIVARES_PORT=$(olv_free_port)
export OLIVARES_DSN="Driver=SQLite3;Database=$D/db/olivares.db;Timeout=2000;JournalMode=WAL;SyncPragma=NORMAL;FKSupport=1"
unset OLIVARES_CONF
trap '"$STACK" down >/dev/null 2>&1; umount "$D/db" 2>/dev/null; rm -rf "$E2E_TMP"' EXIT
if "$STACK" up >"$D/up.out" 2>&1; then
	ok "a stack with its database on the tmpfs"
else
	not_ok "a stack with its database on the tmpfs ($(short "$(tail -n 3 "$D/up.out")"))"
	done_testing
fi
OLIVARES_URL=http://127.0.0.1:$OLIVARES_PORT
TK=$(cat "$D/data/admin_token")
req "$TK" PUT /v1/modules/sandbox '{"enabled":true}'
is_status "the module on" 200

# scenarios of 10 steps of 8000 bytes (about 80 KB each) until the disk is full
step=$(repeat_char x 8000)
jq -nc --arg s "$step" '{name:"filler",steps:[range(1;11)|{key:"k\(.)",input:$s}]}' >"$D/body.json"
codes=""
for i in $(seq 1 40); do
	req_file "$TK" POST /v1/m/sandbox/scenarios "$D/body.json"
	codes="$codes $STATUS"
	[[ $STATUS == 201 ]] || break
done
is "writes until the disk is full: then 503 storage_unavailable, not 500" "503 storage_unavailable" "$STATUS $(jqb .error.code)"
if [[ $codes == *" 201"* ]]; then ok "some writes fitted first ($codes)"; else not_ok "some writes fitted first ($codes)"; fi
req_file "$TK" POST /v1/m/sandbox/scenarios "$D/body.json"
is "another write on a full disk: 503 again" 503 "$STATUS"
for i in $(seq 1 12); do req_file "$TK" POST /v1/m/sandbox/scenarios "$D/body.json"; done
# each failed write reconnects: the old connection must be closed, not
# left open with its descriptors (db, -wal, -shm: at most 3 a worker)
most=0
for w in $(pgrep -P "$(cat "$D/data/run/olivares-fcgi.pid")" -x olivares-fcgi); do
	n=$(find "/proc/$w/fd" -lname "$D/db/*" 2>/dev/null | wc -l)
	((n > most)) && most=$n
done
if ((most <= 3)); then ok "after 12 more failed writes no worker holds more than one connection's files ($most)"; else not_ok "after 12 more failed writes no worker holds more than one connection's files (one holds $most)"; fi

# space again: the same server reads and writes, on every worker
mount -o remount,size=16m "$D/db"
all=""
for i in $(seq 1 12); do
	req "$TK" GET "/v1/m/sandbox/scenarios?limit=500"
	all="$all $STATUS"
done
is "with space again: every read answers 200, no restart" "$(printf ' 200%.0s' $(seq 1 12))" "$all"
n_before=$(jqb '.scenarios|length')
req_file "$TK" POST /v1/m/sandbox/scenarios "$D/body.json"
is_status "with space again: a write succeeds" 201
req "$TK" GET "/v1/m/sandbox/scenarios?limit=500"
is "the scenarios: those that fitted, plus the new one" "$((n_before + 1))" "$(jqb '.scenarios|length')"
req "$TK" GET "/v1/m/sandbox/audit?limit=500"
is "one audit event per scenario created, none for a refused one" "$((n_before + 1))" \
	"$(jqb '[.events[]|select(.action=="sandbox.scenario.create")]|length')"

# ---- the file deleted under the server, then a backup put in its place
DB=$D/db/olivares.db
in_backup=$((n_before + 1))
sqlite3 "$DB" ".backup '$D/backup.db'"
req_file "$TK" POST /v1/m/sandbox/scenarios "$D/body.json"
is_status "a write after the backup" 201
rm -f "$DB" "$DB-wal" "$DB-shm"
gone=""
for i in $(seq 1 8); do
	req_file "$TK" POST /v1/m/sandbox/scenarios "$D/body.json"
	gone="$gone $STATUS"
done
is "the file deleted: every write is a 503, none acknowledged" "$(printf ' 503%.0s' $(seq 1 8))" "$gone"
req "" GET /healthz
is_status "the file deleted: /healthz is a 503" 503
# a 5xx is logged with the path as it was sent: text from any client, which
# must stay inside its own line and never reach a terminal as an escape
log=$D/data/log/olivares-fcgi.log
forged=$'/v1/m/sandbox/scenarios/x\nolivares-fcgi[1]: forged login ok\e[2J'
if command -v cgi-fcgi >/dev/null 2>&1 && [[ -S $D/data/olivares.sock ]]; then
	env -i PATH="$PATH" REQUEST_METHOD=GET REQUEST_URI="$forged" SCRIPT_NAME=/v1/m/sandbox/scenarios/x \
		QUERY_STRING= CONTENT_LENGTH=0 GATEWAY_INTERFACE=CGI/1.1 REMOTE_ADDR=127.0.0.1 \
		HTTP_AUTHORIZATION="Bearer olv_$(printf '0%.0s' $(seq 1 64))" \
		timeout 30 cgi-fcgi -bind -connect "$D/data/olivares.sock" </dev/null >"$D/forged.out" 2>/dev/null
	is "a forged path straight to the pool on a deleted file: the 503" 503 \
		"$(sed -n 's/^Status: \([0-9]*\).*/\1/p' "$D/forged.out" | head -n 1)"
	sleep 0.2
	if grep -q '^olivares-fcgi\[1\]: forged' "$log"; then
		not_ok "the forged path starts no line of its own in the log"
	else
		ok "the forged path starts no line of its own in the log"
	fi
	# its access line: the path as sent, its newline and escape as the
	# JSON escapes \n and \u001B, decoded back by a JSON reader
	if grep -qF 'x\nolivares-fcgi[1]: forged login ok\u001B[2J"' "$log" &&
		[[ $(grep -a forged "$log" | jq -c --arg p "$forged" 'select(.path == $p) | .status' 2>/dev/null) == 503 ]]; then
		ok "the forged path is logged in one line, its newline and escape as \\n and \\u001B"
	else
		not_ok "the forged path is logged in one line, escaped ($(short "$(grep -a forged "$log" | head -n 2)"))"
	fi
	if grep -q $'\e' "$log"; then
		not_ok "no escape byte in the log"
	else
		ok "no escape byte in the log"
	fi
else
	not_ok "a forged path straight to the pool needs cgi-fcgi (libfcgi-bin) and the socket"
fi
# a worker that dies now is replaced, and its first connection must not
# create the file either
master=$(cat "$D/data/run/olivares-fcgi.pid")
worker=$(pgrep -P "$master" -x olivares-fcgi | head -n 1)
if [[ -n $worker ]]; then
	kill -KILL "$worker"
	for i in $(seq 1 50); do
		[[ $(pgrep -P "$master" -x olivares-fcgi | wc -l) -ge 4 ]] && ! kill -0 "$worker" 2>/dev/null && break
		sleep 0.1
	done
	req "" GET /healthz
fi
if [[ -e $DB ]]; then not_ok "no empty database was created in its place (a worker replaced meanwhile)"; else ok "no empty database was created in its place (a worker replaced meanwhile)"; fi
# a backup restored as docs/operations.md says: the file in place, without the
# old database's -wal and -shm (they are gone with it here)
mv "$D/backup.db" "$DB"
back=""
for i in $(seq 1 12); do
	req "$TK" GET "/v1/m/sandbox/scenarios?limit=500"
	back="$back $STATUS:$(jqb '.scenarios|length')"
done
is "the backup in its place: every worker reads it (the scenarios it holds)" \
	"$(printf " 200:$in_backup%.0s" $(seq 1 12))" "$back"
req_file "$TK" POST /v1/m/sandbox/scenarios "$D/body.json"
is_status "and writes into it" 201
is "the write is in the file at the path" "$((in_backup + 1))" \
	"$(sqlite3 "$DB" 'SELECT COUNT(*) FROM scenarios')"
# ---- the database lost while the stack is down: up makes a new one and a
# new admin token (the old one would answer 401)
"$STACK" down >/dev/null 2>&1
rm -f "$DB" "$DB-wal" "$DB-shm"
"$STACK" up >"$D/up2.out" 2>&1 || true
NEW_TK=$(cat "$D/data/admin_token")
isnt "up on a database made anew: a new admin token" "$TK" "$NEW_TK"
req "$NEW_TK" GET /v1/modules
is_status "the new token works" 200
if grep -q 'note: the database has no tenant "demo"' "$D/up2.out"; then ok "up says why the token changed"; else not_ok "up says why the token changed ($(short "$(cat "$D/up2.out")"))"; fi
# this stack's own log (run.sh reads the main stack's): a worker whose
# reconnection failed once used the store it had just closed
log=$D/data/log/olivares-fcgi.log
if grep -Eq 'AddressSanitizer|runtime error:|LeakSanitizer' "$log"; then
	not_ok "no sanitizer report in this stack's log ($(grep -E -m 1 'AddressSanitizer|runtime error:' "$log"))"
else
	ok "no sanitizer report in this stack's log"
fi
done_testing
