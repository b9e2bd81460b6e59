#!/usr/bin/env bash
# t0121: [server] metrics_tenant_labels = true (docs/metrics.md): the runs
# of /metrics are then counted by tenant, each under its tenant's name
# (never its id), and nothing else changes; promtool still accepts the
# text. A stack of its own with that key set: on SQLite, or, when the e2e
# run is on PostgreSQL, on a database of its own there, which is then
# closed to connections for a moment (olivares_store_up 0, still a 200).
. "$(dirname "$0")/lib.sh"
# shellcheck source=../../scripts/lib/common.sh
. "$OLV_ROOT/scripts/lib/common.sh"

D=$E2E_TMP/labels
mkdir -p "$D"
STACK=$OLV_ROOT/scripts/stack
cat >"$D/olivares.conf" <<'CONF'
[server]
workers = 2
metrics_tenant_labels = true
CONF
export OLIVARES_DATA=$D/data OLIVARES_CONF=$D/olivares.conf OLIVARES_PORT
OLIVARES_PORT=$(olv_free_port)
DB=
if [[ ${OLIVARES_DSN:-} == *PostgreSQL* ]]; then
	dsn_field() { sed -n "s/.*;$1=\([^;]*\).*/\1/p" <<<";$OLIVARES_DSN"; }
	PGHOST=$(dsn_field Servername)
	PGPORT=$(dsn_field Port)
	PGUSER=$(dsn_field Username)
	export PGHOST PGPORT PGUSER
	DB=olv_labels_$$
	if ! createdb "$DB" 2>"$D/createdb.err"; then
		not_ok "a database of its own ($(short "$(cat "$D/createdb.err")"))"
		done_testing
	fi
	OLIVARES_DSN="Driver=PostgreSQL Unicode;Servername=$PGHOST;Port=$PGPORT;Database=$DB;Username=$PGUSER;SSLmode=disable"
	export OLIVARES_DSN
else
	unset OLIVARES_DSN
fi
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
	"$STACK" down >/dev/null 2>&1
	if [[ -n $DB ]]; then
		psql -q -d postgres -c "ALTER DATABASE $DB ALLOW_CONNECTIONS true" >/dev/null 2>&1
		dropdb --if-exists --force "$DB" >/dev/null 2>&1
	fi
	rm -rf "$E2E_TMP"
}
trap cleanup EXIT
if "$STACK" up >"$D/up.out" 2>&1; then
	ok "a stack with metrics_tenant_labels = true"
else
	not_ok "a stack with metrics_tenant_labels = true ($(short "$(tail -n 3 "$D/up.out")"))"
	done_testing
fi
OLIVARES_URL=http://127.0.0.1:$OLIVARES_PORT
M=/v1/m/sandbox
DEMO=$(cat "$D/data/admin_token")
OTHER_NAME=$(unique t0121-other)
OTHER=$(new_tenant_token "$OTHER_NAME" admin)
DEMO_ID=$(admin_cli tenant list 2>/dev/null | awk -F '\t' '$2 == "demo" { print $1 }')
OTHER_ID=$(admin_cli tenant list 2>/dev/null | awk -F '\t' -v t="$OTHER_NAME" '$2 == t { print $1 }')
if [[ -n $OTHER && -n $DEMO_ID && -n $OTHER_ID ]]; then ok "two tenants"; else not_ok "two tenants ($(short "$DEMO_ID $OTHER_ID"))"; fi

# run_in TOKEN N: N completed inproc-mock runs of a new scenario of the tenant
run_in() {
	local i sid
	module_on "$1" || return 1
	req "$1" POST $M/scenarios '{"name":"t0121","steps":[{"key":"a","input":"tool:x"}],"mocks":[{"resource":"tool:x","response":"x"}]}'
	sid=$(jqb .id)
	for ((i = 0; i < $2; i++)); do
		req "$1" POST "$M/scenarios/$sid/runs" '{"backend":"inproc-mock"}'
		[[ $STATUS == 201 && $(jqb .status) == completed ]] || return 1
	done
}
if run_in "$DEMO" 2; then ok "two runs of demo"; else not_ok "two runs of demo (HTTP $STATUS: $(short "$BODY"))"; fi
if run_in "$OTHER" 1; then ok "one run of the other tenant"; else not_ok "one run of the other tenant (HTTP $STATUS: $(short "$BODY"))"; fi

STATUS=$(curl -s -S -o "$D/m.txt" -w '%{http_code}' --max-time 60 "$OLIVARES_URL/metrics") || STATUS=000
is "GET /metrics: 200" 200 "$STATUS"
grep '^olivares_runs' "$D/m.txt" | sed 's/^/#   /'
if promtool check metrics <"$D/m.txt" >"$D/promtool.out" 2>&1; then
	ok "promtool check metrics: no problem"
else
	not_ok "promtool check metrics: no problem ($(short "$(cat "$D/promtool.out")"))"
fi
value() { awk -v s="$1" 'substr($0, 1, length(s) + 1) == s " " { print substr($0, length(s) + 2) }' "$D/m.txt"; }
is "demo's runs under its name" 2 "$(value 'olivares_runs{status="completed",backend="inproc-mock",tenant="demo"}')"
is "the other tenant's run under its name" 1 "$(value "olivares_runs{status=\"completed\",backend=\"inproc-mock\",tenant=\"$OTHER_NAME\"}")"
is "no olivares_runs without a tenant label" 0 "$(grep '^olivares_runs{' "$D/m.txt" | grep -vc 'tenant="')"
for s in "$DEMO_ID" "$OTHER_ID"; do
	if [[ -n $s ]] && grep -qF -- "$s" "$D/m.txt"; then not_ok "no tenant id in the text ($s)"; else ok "no tenant id in the text"; fi
done
is "the tenant label is on olivares_runs only" "" "$(grep -v '^#' "$D/m.txt" | grep 'tenant=' | grep -v '^olivares_runs{' | head -n 1)"

# PostgreSQL: the database closed to connections, the workers' ones ended
if [[ -n $DB ]]; then
	psql -q -d postgres -c "ALTER DATABASE $DB ALLOW_CONNECTIONS false" \
		-c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '$DB'" >/dev/null
	codes=
	ups=
	for i in 1 2 3 4; do
		STATUS=$(curl -s -S -o "$D/down-$i.txt" -w '%{http_code}' --max-time 60 "$OLIVARES_URL/metrics") || STATUS=000
		codes="$codes $STATUS"
		ups="$ups $(awk '$1 == "olivares_store_up" { print $2 }' "$D/down-$i.txt")"
	done
	is "the database closed: /metrics answers 200 every time" " 200 200 200 200" "$codes"
	is "the database closed: olivares_store_up 0 every time" " 0 0 0 0" "$ups"
	if grep -q '^olivares_http_requests_total{' "$D/down-4.txt"; then ok "the database closed: the pool's counters are there"; else not_ok "the database closed: the pool's counters are there"; fi
	if promtool check metrics <"$D/down-4.txt" >"$D/promtool.out" 2>&1; then
		ok "the database closed: promtool check metrics passes"
	else
		not_ok "the database closed: promtool check metrics passes ($(short "$(cat "$D/promtool.out")"))"
	fi
	psql -q -d postgres -c "ALTER DATABASE $DB ALLOW_CONNECTIONS true" >/dev/null
	ups=
	for i in 1 2 3 4; do
		curl -s -S -o "$D/up-$i.txt" --max-time 60 "$OLIVARES_URL/metrics" || true
		ups="$ups $(awk '$1 == "olivares_store_up" { print $2 }' "$D/up-$i.txt")"
	done
	is "the database open again: olivares_store_up 1 from every worker" " 1 1 1 1" "$ups"
fi

done_testing
