#!/usr/bin/env bash
# t0060: the olivares CLI against a server that answers what no olivares
# server would: a nginx of its own, on a free port, with fixed answers.
# - values with terminal controls (a verdict, an error code) are printed
#   escaped, never raw: a terminal must not show "verdict=improved" for a
#   gate that exits 1;
# - the outputs table's DURATION_MS: three decimals whatever the JSON
#   number's shortest form (0.26 is 0.260, as the admin view shows it), '-'
#   when unknown, a number too long for that (1e30) in its shortest form,
#   never an empty cell;
# - the gate's error path: a comparison of an older version whose baseline
#   run cannot be read closes the gate with exit 1 (an error), not 3;
# - a comparison side's shutdown note with terminal controls: the gate's
#   stderr line writes them out, its verdict line and exit 0 unchanged.
# Needs nginx only (no stack).
. "$(dirname "$0")/lib.sh"
# shellcheck source=../../scripts/lib/common.sh
. "$OLV_ROOT/scripts/lib/common.sh"

CLI=$OLIVARES_BUILD/olivares
TOKEN=olv_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
SA=$(repeat_char a 32) # its newest comparison is of an older version
SC=$(repeat_char c 32) # its newest comparison has a hostile verdict
SN=$(repeat_char f 32) # its newest comparison's candidate has a hostile shutdown note
RUN_K=$(repeat_char 9 32)
RUN_B=$(repeat_char b 32)
CMP=$(repeat_char d 32)
RUN_O=$(repeat_char e 32) # its outputs have durations of every shape
D=$E2E_TMP/nginx
mkdir -p "$D"
PORT=$(olv_free_port)
# nginx's quoted strings: "\\" is one backslash, so JSON's \u001b is \\u001b
cat >"$D/nginx.conf" <<CONF
daemon on;
pid $D/nginx.pid;
error_log $D/error.log;
$( ((EUID == 0)) && echo "user $(id -un) $(id -gn);")
events {}
http {
	access_log off;
	client_body_temp_path $D/body;
	proxy_temp_path $D/proxy;
	fastcgi_temp_path $D/fastcgi;
	uwsgi_temp_path $D/uwsgi;
	scgi_temp_path $D/scgi;
	server {
		listen 127.0.0.1:$PORT;
		default_type application/json;
		location = /v1/m/sandbox/scenarios/$SA {
			return 200 '{"id":"$SA","version":2,"digest":"digest-of-version-2"}';
		}
		location = /v1/m/sandbox/scenarios/$SC {
			return 200 '{"id":"$SC","version":1,"digest":"digest-of-version-1"}';
		}
		location = /v1/m/sandbox/scenarios/$SN {
			return 200 '{"id":"$SN","version":1,"digest":"digest-of-version-1"}';
		}
		location = /v1/m/sandbox/comparisons {
			if (\$arg_scenario = "$SN") {
				return 200 '{"comparisons":[{"id":"$CMP","verdict":"improved","delta":0.5,"scenario_version":1,"baseline":{"run_id":"$RUN_B","status":"completed","shutdown":null},"candidate":{"run_id":"$RUN_K","status":"completed","shutdown":"agent did not exit\\\\u001b[2J\\\\rall good\\\\u0007"}}]}';
			}
			if (\$arg_scenario = "$SA") {
				return 200 '{"comparisons":[{"id":"$CMP","verdict":"improved","delta":0.25,"scenario_version":1,"baseline":{"run_id":"$RUN_B"}}]}';
			}
			return 200 '{"comparisons":[{"id":"$CMP","verdict":"regressed\\\\u001b[2K\\\\r\\\\u001b]0;PWNED\\\\u0007verdict=improved","delta":-0.1,"scenario_version":1}]}';
		}
		location = /v1/m/sandbox/runs/$RUN_O/outputs {
			return 200 '{"run_id":"$RUN_O","outputs":[{"seq":1,"key":"a","input":"i","output":"o","status":"ok","error_kind":null,"duration_ms":0.26},{"seq":2,"key":"b","input":"i","output":"o","status":"ok","error_kind":null,"duration_ms":12},{"seq":3,"key":"c","input":"i","output":"o","status":"ok","error_kind":null,"duration_ms":null},{"seq":4,"key":"d","input":"i","output":"o","status":"ok","error_kind":null,"duration_ms":1500.125},{"seq":5,"key":"e","input":"i","output":"o","status":"ok","error_kind":null,"duration_ms":1e30}]}';
		}
		location /v1/m/sandbox/runs/ {
			return 500 '{"error":{"code":"internal","message":"internal error"}}';
		}
		location = /v1/modules {
			return 418 '{"error":{"code":"te\\\\u001b[31mapot","message":"short and \\\\u001b[2Jstout"}}';
		}
	}
}
CONF
if nginx -c "$D/nginx.conf" 2>"$D/start.err"; then
	ok "a fake server on port $PORT"
else
	not_ok "a fake server on port $PORT ($(short "$(cat "$D/start.err")"))"
	done_testing
fi
trap 'kill "$(cat "$D/nginx.pid" 2>/dev/null)" 2>/dev/null; rm -rf "$E2E_TMP"' EXIT

# cli ARGS...: OUT, ERR (files' text), RC
cli() {
	RC=0
	"$CLI" --url "http://127.0.0.1:$PORT" --token "$TOKEN" "$@" >"$E2E_TMP/out" 2>"$E2E_TMP/err" || RC=$?
	OUT=$(cat "$E2E_TMP/out")
	ERR=$(cat "$E2E_TMP/err")
}
# no_controls DESC FILE: FILE holds no ESC, BEL or CR byte
no_controls() {
	if LC_ALL=C grep -q $'[\x1b\x07\r]' "$2"; then
		not_ok "$1 (got $(od -c "$2" | head -n 3 | tr '\n' ' '))"
	else
		ok "$1"
	fi
}

cli sandbox gate --scenario "$SC"
is "a verdict with terminal controls: exit 1 (not a verdict the gate knows)" 1 "$RC"
no_controls "the verdict line holds no ESC, BEL or CR byte" "$E2E_TMP/out"
is "the verdict line shows the controls written out" \
	'verdict=regressed\x1b[2K\r\x1b]0;PWNED\x07verdict=improved delta=-0.1 comparison='"$CMP" "$OUT"
is "stderr: the gate is closed" "olivares: gate closed: unknown verdict in the response" "$ERR"

cli modules list
is "an error with controls in its code and message: exit 1" 1 "$RC"
no_controls "stderr holds no ESC byte" "$E2E_TMP/err"
is "stderr: code and message written out" 'olivares: short and \x1b[2Jstout (te\x1b[31mapot, HTTP 418)' "$ERR"

cli sandbox gate --scenario "$SA"
is "an older version's comparison whose baseline run cannot be read: exit 1, not 3" 1 "$RC"
is "stdout: the verdict line of the comparison found" "verdict=improved delta=0.25 comparison=$CMP" "$OUT"
is "stderr: the lookup's error, then why the gate is closed" \
	"olivares: internal error (internal, HTTP 500)|olivares: the gate stays closed: the comparison's baseline run cannot be read" \
	"$(paste -sd'|' <<<"$ERR")"
cli sandbox gate --scenario "$SN"
is "a candidate's shutdown note with terminal controls: exit 0 (improved)" 0 "$RC"
is "stdout: the verdict line unchanged" "verdict=improved delta=0.5 comparison=$CMP" "$OUT"
no_controls "stderr holds no ESC, BEL or CR byte" "$E2E_TMP/err"
is "stderr: the candidate's note written out" \
	"olivares: candidate run $RUN_K completed, but agent did not exit\\x1b[2J\\rall good\\x07" "$ERR"
cli sandbox runs outputs "$RUN_O"
is "runs outputs: exit 0" 0 "$RC"
is "runs outputs: DURATION_MS always with three decimals, '-' when unknown" \
	"0.260|12.000|-|1500.125" "$(awk 'NR > 1 && NR < 6 {print $4}' <<<"$OUT" | paste -sd'|')"
# a number too long for three decimals in the cell (a server's, not this
# one's: it records at most the run's deadline) is shown, not left blank
# (the columns after it would shift)
is "runs outputs: an absurd duration is shown in its shortest form" "5 e ok 1e30 o" \
	"$(awk 'NR == 6 {print $1, $2, $3, $4, $5}' <<<"$OUT")"
done_testing
