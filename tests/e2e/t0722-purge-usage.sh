#!/usr/bin/env bash
# olivares-admin purge's usage errors (docs/retention.md): a bad option, an
# extra argument and a second --tenant (which would silently replace the
# first) exit 2 with the command's usage and purge nothing; an unknown
# tenant exits 1 naming it; a dry run twice in a row says the same and
# writes no audit event.
. "$(dirname "$0")/lib.sh"
e2e_require

audit_purges() {
	req "$OLV_ADMIN_TOKEN" GET "/v1/m/sandbox/audit?limit=500"
	jqb '[.events[] | select(.action == "retention.purge")] | length'
}
module_on "$OLV_ADMIN_TOKEN" || exit 1
before=$(audit_purges)

for args in "--bogus" "extra" "--tenant demo --tenant olv-other" "--tenant"; do
	# shellcheck disable=SC2086
	admin_cli purge $args >"$E2E_TMP/out" 2>"$E2E_TMP/err"
	rc=$?
	is "purge $args: exit 2" 2 "$rc"
	is "purge $args: the usage on stderr" 1 "$(grep -c '^usage: olivares-admin purge' "$E2E_TMP/err")"
	is "purge $args: nothing on stdout" "" "$(cat "$E2E_TMP/out")"
done

admin_cli purge --tenant "no-such-tenant-$$" >"$E2E_TMP/out" 2>"$E2E_TMP/err"
is "purge of an unknown tenant: exit 1" 1 "$?"
is "purge of an unknown tenant: the error names it" 1 "$(grep -c "no-such-tenant-$$" "$E2E_TMP/err")"

admin_cli purge --dry-run --tenant demo >"$E2E_TMP/d1" 2>/dev/null
rc1=$?
admin_cli purge --dry-run --tenant demo >"$E2E_TMP/d2" 2>/dev/null
is "dry run: exit 0" 0 "$rc1"
is "dry run: one line for the tenant" 1 "$(grep -c '^demo	retention_days=' "$E2E_TMP/d1")"
is "dry run twice: the same lines" "$(cat "$E2E_TMP/d1")" "$(cat "$E2E_TMP/d2")"
is "no retention.purge audit event from any of them" "$before" "$(audit_purges)"
done_testing
