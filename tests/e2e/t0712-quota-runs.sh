#!/usr/bin/env bash
# Storage quota against runs of one tenant going at once
# (docs/operations.md "Quotas"): run.sh --fresh gives the tenant
# olv-quota-runs a max_stored_mb of 1 (1048576 bytes). Three runs start at
# once, each of twelve steps answered by a 60000-byte mock after 250 ms:
# about 720 KB of outputs each, 2 MB together. An executor that counted
# only a run's own outputs against the usage read when the run started
# would let every run store all of its outputs; one that looks at the
# tenant's usage again after each append stops them all once the tenant is
# over its quota, so what it stores passes the quota by at most about one
# step of each run in flight (and the runs' logs). Each stopped run ends
# failed, naming the quota, and the next create gets 507.
. "$(dirname "$0")/lib.sh"
e2e_require
M=/v1/m/sandbox

TQ=${OLV_QUOTA_RUNS_TENANT:-}
if [[ -z $TQ ]]; then
	echo "# skip - this stack was not started by run.sh --fresh (no tenant with a quota)"
	ok "quota of runs at once: skipped (no max_stored_mb tenant on this stack)"
	done_testing
fi
Q=$(new_tenant_token "$TQ" admin)
module_on "$Q" || exit 1

if [[ $(usage_of "$TQ" .total_bytes) != 0 ]]; then
	echo "# skip - tenant $TQ already stores data (run.sh --fresh starts with none)"
	ok "quota of runs at once: skipped (the quota tenant is not new)"
	done_testing
fi
LIMIT=$(usage_of "$TQ" .quota_bytes)
is "the tenant's quota is 1048576 bytes" 1048576 "$LIMIT"

X60=$(repeat_char x 60000)
jq -cn --arg r "$X60" \
	'{name:"quota runs",steps:[range(12) | {key:"s\(.)",input:"tool:big"}],mocks:[{resource:"tool:big",response:$r,delay_ms:250}]}' \
	>"$E2E_TMP/big.json"
req_file "$Q" POST $M/scenarios "$E2E_TMP/big.json"
is_status "the scenario is created" 201
SID=$(jqb .id)

RUNS=()
for i in 1 2 3; do
	E2E_NO_WAIT=1 req "$Q" POST "$M/scenarios/$SID/runs" '{"variant":"candidate"}'
	is_status "run $i is queued at once (202)" 202
	RUNS+=("$(jqb .id)")
done

# each run ends within its wall clock; poll, no sleep as an assertion
deadline=$((SECONDS + 90))
for id in "${RUNS[@]}"; do
	while ((SECONDS < deadline)); do
		req "$Q" GET "$M/runs/$id"
		case $(jqb .status) in queued | running) sleep 0.5 ;; *) break ;; esac
	done
done

failed=0 stored=0
for id in "${RUNS[@]}"; do
	req "$Q" GET "$M/runs/$id"
	st=$(jqb .status)
	stored=$((stored + $(jqb .steps_done)))
	if [[ $st == failed ]]; then
		failed=$((failed + 1))
		is "a stopped run's reason names the quota" "storage quota" "$(jqb .reason | cut -c1-13)"
	else
		is "a run that did not pass the quota completed" completed "$st"
	fi
done
is "at least two of the three runs stopped at the quota ($failed)" true "$( ((failed >= 2)) && echo true || echo false)"

total=$(usage_of "$TQ" .total_bytes)
outputs=$(usage_of "$TQ" .outputs_bytes)
logs=$(usage_of "$TQ" .logs_bytes)
per_step=$((outputs / (stored > 0 ? stored : 1)))
# at most one step of each of the three runs past the quota, and their logs
bound=$((LIMIT + 3 * per_step + logs))
is "what the tenant stores passes its quota by at most one step a run in flight (total $total, bound $bound, $stored steps stored of 36)" \
	true "$( ((total <= bound)) && echo true || echo false)"
is "the runs did not store all their outputs" true "$( ((stored < 36)) && echo true || echo false)"
req "$Q" POST $M/scenarios '{"name":"after","steps":[{"key":"k","input":"tool:x"}]}'
is_status "over the quota, the next create gets 507" 507
is "its code is quota_exceeded" quota_exceeded "$(jqb .error.code)"

done_testing
