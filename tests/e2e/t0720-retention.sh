#!/usr/bin/env bash
# Retention (docs/retention.md): a tenant whose runs are kept
# one day ([tenant olv-retention] retention_days = 1) on a server that
# purges every 2 s ([server] purge_interval_seconds = 2, both set by
# tests/e2e/run.sh --fresh):
#   - runs, a comparison of two more and its approval; another tenant
#     (no retention) with a run of its own; then some runs made old in
#     the database (their finished_at two days back, and a log row for one),
#     since no request can end a run in the past;
#   - the automatic purge (no command: polled with a deadline) deletes the
#     old runs: 404 for them and their outputs, the recent run there, the
#     comparison's runs kept with their outputs, the comparison and its
#     approval there, its evidence bundle byte for byte the same and
#     `olivares sandbox verify` of it still passing;
#   - one "retention.purge" audit event by olivares-fcgi with the counts
#     (runs 2, outputs 8, logs 1, kept 2 more than before, retention_days
#     1); the other
#     tenant's old run untouched and no such event there;
#   - olivares-admin purge: --dry-run counts, --include-referenced takes the
#     comparison's outputs but keeps its runs' records (the comparison holds
#     them), its bundle still verifies; usage and an unknown tenant refused.
# Runs on SQLite and PostgreSQL (db_sql in lib.sh makes runs old).
. "$(dirname "$0")/lib.sh"
e2e_require
cd "$E2E_TMP" || exit 1

M=/v1/m/sandbox
SUITE=compare-steps
TENANT=${OLV_RETENTION_TENANT:-}
OLD=$(date -u -d '2 days ago' +%Y-%m-%dT%H:%M:%S.000Z)

if [[ -z $TENANT || -z ${OLV_SUITES_DIR:-} ]]; then
	echo "# skip - this stack was not started by run.sh --fresh (no tenant with a retention)"
	ok "retention: skipped (no [tenant NAME] retention_days on this stack)"
	done_testing
fi
if ! db_sql "SELECT 1" >/dev/null 2>&1; then
	echo "# skip - the store cannot be reached from here (sqlite3 or psql)"
	ok "retention: skipped (cannot make runs old in the store from here)"
	done_testing
fi

AD=$(new_tenant_token "$TENANT" admin)
OTHER=$(unique olv-keep)
OD=$(new_tenant_token "$OTHER" admin)
[[ -n $AD && -n $OD ]] || {
	not_ok "tokens of $TENANT and $OTHER"
	done_testing
}
module_on "$AD" || done_testing
module_on "$OD" || done_testing

STEPS='[{"key":"s1","input":"q1"},{"key":"s2","input":"q2"},{"key":"s3","input":"q3"},{"key":"s4","input":"q4"}]'
MOCKS='[{"resource":"q1","response":"a1"},
 {"resource":"q2","response":"a2","variant":"base"},
 {"resource":"q2","response":"a2","variant":"up"},
 {"resource":"q3","response":"a3","variant":"up"}]'
SCENARIO="{\"name\":\"retention\",\"steps\":$STEPS,\"mocks\":$MOCKS}"

# run TOKEN SID: a simulation run of variant base, waited for; its id
run() {
	req "$1" POST "$M/scenarios/$2/runs" '{"variant":"base"}'
	[[ $STATUS == 201 ]] && jqb '.id // empty'
}

req "$AD" POST $M/scenarios "$SCENARIO"
is_status "scenario created" 201
SID=$(jqb '.id // empty')
req "$OD" POST $M/scenarios "$SCENARIO"
is_status "the other tenant's scenario created" 201
OSID=$(jqb '.id // empty')
[[ -n $SID && -n $OSID ]] || done_testing

OLD1=$(run "$AD" "$SID")
OLD2=$(run "$AD" "$SID")
NEW=$(run "$AD" "$SID")
KEEP=$(run "$OD" "$OSID")
is "four runs ended" 4 "$(printf '%s\n' "$OLD1" "$OLD2" "$NEW" "$KEEP" | grep -c '^[0-9a-f]\{32\}$')"
req "$AD" POST $M/comparisons "{\"scenario_id\":\"$SID\",\"baseline\":\"base\",\"candidate\":\"up\",\"suite\":\"$SUITE\"}"
is "comparison base -> up: 201 improved" "201 improved" "$STATUS $(jqb .verdict)"
CID=$(jqb '.id // empty')
CB=$(jqb '.baseline.run_id // empty')
CK=$(jqb '.candidate.run_id // empty')
req "$AD" POST "$M/comparisons/$CID/approval" '{"decision":"approved","reason":"kept evidence"}'
is_status "the comparison approved" 201
[[ -n $CID && -n $CB && -n $CK ]] || done_testing

req "" GET /v1/evidence/key
jqb .public_key >key.pem
req "$AD" GET "$M/comparisons/$CID/evidence"
is_status "the comparison's evidence bundle" 200
cp "$BODY_FILE" before.json
olivares sandbox verify --key key.pem before.json >/dev/null 2>&1
is "verify of the bundle before the purge: exit 0" 0 "$?"

req "$AD" GET "$M/audit?limit=1"
MARK=$(jqb '.events[0].id')

# field LINE KEY: the number of KEY=N in a line of olivares-admin purge
field() { sed -n "s/.*	$2=\([0-9]*\).*/\1/p" <<<"$1"; }
# What this tenant already keeps (a store used by an earlier run of this
# test keeps that run's comparison runs): the counts below add to it.
base=$(olivares-admin purge --dry-run --tenant "$TENANT" 2>/dev/null)
K0=$(field "$base" kept)
base=$(olivares-admin purge --dry-run --include-referenced --tenant "$TENANT" 2>/dev/null)
O0=$(field "$base" outputs)
is "before: nothing of this tenant is expired but runs a comparison rests on" \
	"$TENANT	retention_days=1	runs=0	outputs=0	logs=0	kept=$K0" \
	"$(olivares-admin purge --dry-run --tenant "$TENANT" 2>/dev/null)"
K=$((K0 + 2))
O=$((O0 + 8))

# ---- make runs old (and give one a log) ------------------------------------------
ids="'$OLD1','$OLD2','$CB','$CK','$KEEP'"
db_sql "INSERT INTO run_logs (run_id, tenant_id, text, dropped_bytes) SELECT id, tenant_id, 'old log
', 0 FROM runs WHERE id = '$OLD1' AND NOT EXISTS (SELECT 1 FROM run_logs WHERE run_id = '$OLD1')"
is "a log row for one old run (db_sql)" 0 "$?"
db_sql "UPDATE runs SET finished_at = '$OLD' WHERE id IN ($ids)"
is "five runs ended two days ago (db_sql)" 5 "$(db_sql "SELECT COUNT(*) FROM runs WHERE finished_at = '$OLD' AND id IN ($ids)")"

# ---- the automatic purge ---------------------------------------------------------
# purge_event: the detail of the first retention.purge event after MARK
purge_event() {
	req "$AD" GET "$M/audit?limit=500"
	jq -c --arg id "$MARK" '.events as $e | ([$e[].id]|index($id)) as $i
		| [$e[0:$i][] | select(.action == "retention.purge")] | reverse' "$BODY_FILE" 2>/dev/null
}
events='[]'
deadline=$((SECONDS + 60))
while ((SECONDS < deadline)); do
	events=$(purge_event)
	[[ $(jq length <<<"$events" 2>/dev/null) -ge 1 ]] && break
	sleep 0.5
done
is "the purge ran by itself: one retention.purge event, by olivares-fcgi" "1 olivares-fcgi" \
	"$(jq -r '"\(length) \(.[0].actor)"' <<<"$events")"
is "its detail: counts only, right" \
	"{\"include_referenced\":false,\"kept\":$K,\"logs\":1,\"outputs\":8,\"retention_days\":1,\"runs\":2}" \
	"$(jq -cS '.[0].detail' <<<"$events")"

for r in "$OLD1" "$OLD2"; do
	req "$AD" GET "$M/runs/$r"
	is "an old run is gone: 404" 404 "$STATUS"
	req "$AD" GET "$M/runs/$r/outputs"
	is "its outputs are gone: 404" 404 "$STATUS"
	req "$AD" GET "$M/runs/$r/log"
	is "its log is gone: 404" 404 "$STATUS"
done
is "no output or log row of the old runs is left" "0 0" \
	"$(db_sql "SELECT COUNT(*) FROM run_outputs WHERE run_id IN ('$OLD1','$OLD2')") $(db_sql "SELECT COUNT(*) FROM run_logs WHERE run_id IN ('$OLD1','$OLD2')")"
req "$AD" GET "$M/runs/$NEW"
is "the recent run is kept" "200 completed" "$STATUS $(jqb .status)"
for r in "$CB" "$CK"; do
	req "$AD" GET "$M/runs/$r/outputs"
	is "a run of the comparison is kept, with its outputs" "200 4" "$STATUS $(jqb '.outputs | length')"
done
req "$AD" GET "$M/comparisons/$CID"
is "the comparison and its approval are kept" "200 improved approved" \
	"$STATUS $(jqb .verdict) $(jqb .approval.decision)"
req "$AD" GET "$M/comparisons/$CID/evidence"
cp "$BODY_FILE" after.json
if cmp -s before.json after.json; then ok "the evidence bundle is byte for byte the same"; else not_ok "the evidence bundle is byte for byte the same"; fi
olivares sandbox verify --key key.pem after.json >/dev/null 2>&1
is "verify of the bundle after the purge: exit 0" 0 "$?"

req "$OD" GET "$M/runs/$KEEP/outputs"
is "the other tenant's old run is untouched (no retention there)" "200 4" "$STATUS $(jqb '.outputs | length')"
req "$OD" GET "$M/audit?limit=500"
is "no retention.purge event in the other tenant" 0 "$(jqb '[.events[] | select(.action == "retention.purge")] | length')"

# ---- olivares-admin purge --------------------------------------------------------
out=$(olivares-admin purge --dry-run --tenant "$TENANT" 2>/dev/null)
is "admin purge --dry-run: nothing left but the comparison's runs" \
	"$TENANT	retention_days=1	runs=0	outputs=0	logs=0	kept=$K" "$out"
out=$(olivares-admin purge --dry-run --include-referenced --tenant "$TENANT" 2>/dev/null)
is "admin purge --dry-run --include-referenced: their outputs would go, the records stay" \
	"$TENANT	retention_days=1	runs=0	outputs=$O	logs=0	kept=$K" "$out"
req "$AD" GET "$M/runs/$CB/outputs"
is "the dry run deleted nothing" "200 4" "$STATUS $(jqb '.outputs | length')"
out=$(olivares-admin purge --tenant "$OTHER" 2>/dev/null)
is "admin purge of a tenant without a retention does nothing" \
	"$OTHER	retention_days=0	runs=0	outputs=0	logs=0	kept=0" "$out"
out=$(olivares-admin purge --include-referenced --tenant "$TENANT" 2>/dev/null)
is "admin purge --include-referenced: the comparison's outputs deleted" \
	"$TENANT	retention_days=1	runs=0	outputs=$O	logs=0	kept=$K" "$out"
req "$AD" GET "$M/runs/$CB"
is "the comparison's run record is kept (the comparison holds it)" "200 completed" "$STATUS $(jqb .status)"
req "$AD" GET "$M/runs/$CB/outputs"
is "its outputs are gone" "200 0" "$STATUS $(jqb '.outputs | length')"
events=$(purge_event)
# the automatic purge's event and the admin's: later automatic purges
# found nothing more to remove, so wrote none
is "the admin's purge is audited too, by olivares-admin, with its counts" \
	"2 olivares-admin {\"include_referenced\":true,\"kept\":$K,\"logs\":0,\"outputs\":$O,\"retention_days\":1,\"runs\":0}" \
	"$(jq -r length <<<"$events") $(jq -r '.[1].actor' <<<"$events") $(jq -cS '.[1].detail' <<<"$events")"
req "$AD" GET "$M/comparisons/$CID/evidence"
cp "$BODY_FILE" after2.json
olivares sandbox verify --key key.pem after2.json >/dev/null 2>&1
is "verify of the bundle after --include-referenced: exit 0" 0 "$?"
if cmp -s before.json after2.json; then ok "and it is still byte for byte the same"; else not_ok "and it is still byte for byte the same"; fi

olivares-admin purge --tenant "no-such-tenant-$$" >/dev/null 2>&1
is "admin purge --tenant of an unknown tenant: exit 1" 1 "$?"
olivares-admin purge --days 3 >/dev/null 2>purge.err
is "admin purge with an unknown option: exit 2" 2 "$?"
is "and its first line says what is wrong" "olivares-admin: unexpected or incomplete option" "$(head -n 1 purge.err)"
olivares-admin purge extra >/dev/null 2>purge.err
is "admin purge with an argument: exit 2" 2 "$?"
is "and its first line names the argument" "olivares-admin: purge takes no argument: extra" "$(head -n 1 purge.err)"

done_testing
