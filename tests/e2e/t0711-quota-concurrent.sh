#!/usr/bin/env bash
# Storage quota against concurrent creates (docs/operations.md "Quotas"):
# run.sh --fresh gives the tenant olv-quota-race a max_stored_mb of 1
# (1048576 bytes). Eight scenarios of about 300 KB each are created at
# once, from eight clients: three fit in the quota, a fourth does not.
# Each create's figure read before its write would let all of them
# through; the write's own check, made before its commit with the tenant
# held, must leave exactly three stored (whatever the order the workers
# commit in), the tenant's usage at or under its quota, the other five
# refused with 507 quota_exceeded and their figures, and only three
# scenario.create audit events.
. "$(dirname "$0")/lib.sh"
e2e_require
M=/v1/m/sandbox

TQ=${OLV_QUOTA_RACE_TENANT:-}
if [[ -z $TQ ]]; then
	echo "# skip - this stack was not started by run.sh --fresh (no tenant with a quota)"
	ok "concurrent quota: skipped (no max_stored_mb tenant on this stack)"
	done_testing
fi
Q=$(new_tenant_token "$TQ" admin)
module_on "$Q" || exit 1

if [[ $(usage_of "$TQ" .total_bytes) != 0 ]]; then
	echo "# skip - tenant $TQ already stores data (run.sh --fresh starts with none)"
	ok "concurrent quota: skipped (the quota tenant is not new)"
	done_testing
fi
LIMIT=$(usage_of "$TQ" .quota_bytes)
is "the tenant's quota is 1048576 bytes" 1048576 "$LIMIT"

# five mocks of 60000 bytes: 300 KB of stored text per scenario, under the
# 1 MiB body limit and each mock under its own 64 KiB
X60=$(repeat_char x 60000)
for i in 0 1 2 3 4 5 6 7; do
	jq -cn --arg r "$X60" --arg n "race $i" \
		'{name:$n,steps:[{key:"k",input:"tool:m0"}],mocks:[range(5) | {resource:"tool:m\(.)",response:$r}]}' \
		>"$E2E_TMP/big-$i.json"
done
pids=()
for i in 0 1 2 3 4 5 6 7; do
	curl -s -o "$E2E_TMP/out-$i.json" -w '%{http_code}' -X POST --max-time 60 \
		-H "Authorization: Bearer $Q" -H 'Content-Type: application/json' \
		--data-binary "@$E2E_TMP/big-$i.json" "$OLIVARES_URL$M/scenarios" >"$E2E_TMP/status-$i" &
	pids+=($!)
done
wait "${pids[@]}"

created=0 refused=0 other=""
for i in 0 1 2 3 4 5 6 7; do
	s=$(cat "$E2E_TMP/status-$i")
	case $s in
	201) created=$((created + 1)) ;;
	507)
		refused=$((refused + 1))
		code=$(jq -r .error.code "$E2E_TMP/out-$i.json")
		is "a refused create is quota_exceeded" quota_exceeded "$code"
		# the figures of the refusal say why: what is stored plus this write
		# passes the quota
		over=$(jq -r --argjson l "$LIMIT" \
			'.error | (.limit_bytes == $l and .request_bytes > 0 and .used_bytes + .request_bytes > $l)' \
			"$E2E_TMP/out-$i.json")
		is "a refusal's figures pass the quota ($(jq -c '.error | del(.message)' "$E2E_TMP/out-$i.json"))" true "$over"
		;;
	*) other+=" $s" ;;
	esac
done
is "no create answered other than 201 or 507" "" "$other"
is "three of the eight concurrent creates stored" 3 "$created"
is "five refused with 507" 5 "$refused"
is "the tenant holds three scenarios" 3 "$(count_all "$Q" $M/scenarios scenarios)"
total=$(usage_of "$TQ" .total_bytes)
is "the tenant's usage is at most its quota (total_bytes $total)" true "$( ((total <= LIMIT)) && echo true || echo false)"
is "tenant usage: not over the quota" false "$(usage_of "$TQ" .over_quota)"
req "$Q" GET "$M/audit?limit=500"
is "three scenario.create audit events (a refused write audits nothing)" 3 \
	"$(jqb '[.events[] | select(.action == "sandbox.scenario.create")] | length')"
done_testing
