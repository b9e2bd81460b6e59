#!/usr/bin/env bash
# Listing and revoking tokens (olivares-admin token list|revoke): the listing
# shows ids, roles and states, never a secret; the API refuses a revoked token at once
# (401), the admin view sessions made from it end (a page goes back to the
# sign-in, saying the session ended), the revocation is audited, other
# tokens are untouched, and a second revoke or another tenant's id fails.
. "$(dirname "$0")/lib.sh"
e2e_require
module_on "$OLV_ADMIN_TOKEN" || exit 1
M=/v1/m/sandbox

tenant=$(unique revoke)
err=$(in_tmp revoke.err)
TOK=$(admin_cli tenant create "$tenant" >/dev/null 2>&1; admin_cli token create --tenant "$tenant" --role admin 2>"$err")
TID=$(sed -n 's/.*token_id=\([0-9a-f]\{32\}\).*/\1/p' "$err")
KEEP=$(admin_cli token create --tenant "$tenant" --role viewer 2>/dev/null)
is "a token and its id were made" 32 "${#TID}"
out=$(admin_cli token create --tenant "$tenant" 2>"$err")
is "token create without --role: exit 2" 2 "$?"
is "and no token printed" "" "$out"
is "and its first line says what is missing" "olivares-admin: token create needs --tenant and --role" "$(head -n 1 "$err")"
req "$TOK" GET /v1/modules
is_status "the token works before" 200

# a session of the admin view made from it
jar=$(in_tmp revoke.jar)
code=$(curl -s -o /dev/null -w '%{http_code}' -c "$jar" --data-urlencode "token=$TOK" "$OLIVARES_URL/admin/login")
is "sign-in with the token: 303" 303 "$code"
code=$(curl -s -o /dev/null -w '%{http_code}' -b "$jar" "$OLIVARES_URL/admin/")
is "its session opens the overview" 200 "$code"

# refusals first: another tenant's name, an id that is not one, twice below
if admin_cli token revoke --tenant demo "$TID" 2>/dev/null; then
	not_ok "revoking with another tenant's name is refused"
else
	ok "revoking with another tenant's name is refused"
fi
req "$TOK" GET /v1/modules
is_status "still valid after the refused revoke" 200
admin_cli token revoke --tenant "$tenant" not-an-id >/dev/null 2>&1
is "a malformed id is a usage error (exit 2)" 2 "$?"

# the listing names it (active), with no secret and nothing of another tenant
list=$(admin_cli token list --tenant "$tenant")
is "token list: two tokens" 2 "$(grep -c '' <<<"$list")"
is "token list: the admin token, active" "$TID admin active" "$(awk -F'\t' -v id="$TID" '$1==id{print $1, $2, $3}' <<<"$list")"
case $list in
*olv_*) not_ok "token list shows no token secret" ;;
*) ok "token list shows no token secret" ;;
esac
out=$(admin_cli token revoke --tenant "$tenant" "$TID" 2>&1)
is "revoke exits 0 and says so" "olivares-admin: token $TID of tenant $tenant revoked" "$out"
req "$TOK" GET /v1/modules
is_error "the revoked token gets 401 from the API" 401 unauthorized
req "$KEEP" GET /v1/modules
is_status "another token of the tenant still works" 200
loc=$(curl -s -o /dev/null -w '%{redirect_url}' -b "$jar" "$OLIVARES_URL/admin/runs")
case $loc in
*/admin/login\?next=/admin/runs\&ended=1) ok "its session ended: back to the sign-in, saying so ($loc)" ;;
*) not_ok "its session ended: back to the sign-in, saying so (got $(short "$loc"))" ;;
esac
code=$(curl -s -o /dev/null -w '%{http_code}' --data-urlencode "token=$TOK" "$OLIVARES_URL/admin/login")
is "signing in with the revoked token: 401" 401 "$code"
is "token list: now revoked" "$TID revoked" "$(admin_cli token list --tenant "$tenant" | awk -F'\t' -v id="$TID" '$1==id{print $1, $3}')"
if admin_cli token revoke --tenant "$tenant" "$TID" 2>/dev/null; then
	not_ok "revoking twice fails"
else
	ok "revoking twice fails"
fi
ADM=$(admin_cli token create --tenant "$tenant" --role admin 2>/dev/null)
module_on "$ADM" || true
req "$ADM" GET "$M/audit?limit=20"
is "audited as token.revoke by olivares-admin, naming the token" "olivares-admin $TID 1" \
	"$(jqb '[.events[]|select(.action=="token.revoke")][0]|"\(.actor) \(.target_id) \(.detail.sessions)"')"
done_testing
