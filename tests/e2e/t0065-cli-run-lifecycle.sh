#!/usr/bin/env bash
# t0065: the olivares CLI and runs as jobs, against a server of this test's
# own with fixed answers that move on with each request (a small python3
# HTTP server: nginx serves one answer per location). No olivares server.
# - scenarios run on a 202: the CLI polls the run until it ends and prints
#   the completed record exactly as it prints the same record answered 201
#   (table and JSON), with "Prefer: wait=10" on the POST and no poll after
#   the end;
# - --no-wait: the queued record as answered, no Prefer header, no poll;
# - runs watch; runs cancel on 200 and on 409 (the run already ended);
# - compare on a pending comparison that is decided on the third poll:
#   printed as comparisons get prints the decided one; replay on a 202;
# - nothing on stderr when it is not a terminal; on a terminal (script(1)),
#   a progress line rewritten with "\r";
# - SIGINT while waiting: exit 130, and stderr says how to follow the run;
#   before the POST was answered, which Idempotency-Key takes it up again.
# Needs python3 only (no stack).
. "$(dirname "$0")/lib.sh"

CLI=$OLIVARES_BUILD/olivares
TOKEN=olv_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
S_QUEUED=$(repeat_char a 32)   # POST runs: 202 queued, then R_QUEUED moves on
S_DONE=$(repeat_char b 32)     # POST runs: 201 with R_QUEUED's completed record
S_STUCK=$(repeat_char 5 32)    # POST runs: 202, then R_STUCK stays running
S_SLOW=$(repeat_char 3 32)     # POST runs: answered after 60 s
R_QUEUED=$(repeat_char 1 32)   # queued, running 1/2, running 2/2, completed
R_WATCH=$(repeat_char c 32)    # queued, running 0/3, completed
R_RUNNING=$(repeat_char d 32)  # cancel: 200, cancel_requested
R_ENDED=$(repeat_char e 32)    # cancel: 409; GET: completed
R_STUCK=$(repeat_char 6 32)    # always running
R_REPLAY=$(repeat_char 4 32)   # running, then completed with a divergence
CMP=$(repeat_char f 32)        # pending, pending, decided
R_BASE=$(repeat_char 7 32)
R_CAND=$(repeat_char 8 32)
LOG=$E2E_TMP/requests.log
PORT_FILE=$E2E_TMP/port

cat >"$E2E_TMP/server.py" <<'PY'
import json, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ids = dict(arg.split("=", 1) for arg in sys.argv[3:])
log_path, port_path = sys.argv[1], sys.argv[2]
lock = threading.Lock()
gets = {}  # path -> GETs answered since the last reset

def run(rid, status, done, **more):
    r = {"id": rid, "kind": "simulation", "scenario_id": ids["S_QUEUED"],
         "variant": "candidate", "status": status, "backend": "inproc-mock",
         "executor": None if status == "queued" else "exec-1",
         "steps_total": 2, "steps_done": done,
         "steps_ok": None, "steps_error": None, "isolated": None, "destroyed": None,
         "queued_at": "2026-12-01T10:00:00.000Z",
         "started_at": None if status == "queued" else "2026-12-01T10:00:00.100Z",
         "finished_at": None, "cancel_requested": False, "reason": None, "shutdown": None}
    r.update(more)
    return r

COMPLETED = dict(steps_ok=1, steps_error=1, isolated=True, destroyed=True,
                 finished_at="2026-12-01T10:00:00.900Z",
                 output_digest="9f" * 32)

def run_seq(rid):
    return [run(rid, "queued", 0), run(rid, "running", 1), run(rid, "running", 2),
            run(rid, "completed", 2, **COMPLETED)]

def comparison(status):
    decided = status == "decided"
    side = lambda name, rid, v, score: {"variant": v, "run_id": rid,
        "status": "completed" if decided else "running",
        "scored": decided, "score": score if decided else None, "shutdown": None}
    return {"id": ids["CMP"], "scenario_id": ids["S_QUEUED"], "scenario_version": 1,
            "suite": "walkthrough", "tolerance": 0.02, "status": status,
            "delta": 0.5 if decided else None,
            "verdict": "improved" if decided else None,
            "reason": None, "decided_by": "0" * 32,
            "created_at": "2026-12-01T10:00:00.000Z",
            "baseline": side("baseline", ids["R_BASE"], "v1", 0.25),
            "candidate": side("candidate", ids["R_CAND"], "v2", 0.75),
            "differing_steps": [{"seq": 2, "key": "step-2", "baseline": "a", "candidate": "b"}]
                               if decided else []}

REPLAY_DONE = dict(kind="replay", divergence={"compared": 2, "diverging": 0, "first": None},
                   **COMPLETED)

def answer_get(path, n):
    """The n-th GET (from 0) of path: (status, body)."""
    runs = "/v1/m/sandbox/runs/"
    if path == runs + ids["R_QUEUED"]:
        return 200, run_seq(ids["R_QUEUED"])[min(n, 3)]
    if path == runs + ids["R_WATCH"]:
        seq = [run(ids["R_WATCH"], "queued", 0, steps_total=3),
               run(ids["R_WATCH"], "running", 0, steps_total=3),
               run(ids["R_WATCH"], "completed", 3, steps_total=3, **COMPLETED)]
        return 200, seq[min(n, 2)]
    if path == runs + ids["R_ENDED"]:
        return 200, run(ids["R_ENDED"], "completed", 2, **COMPLETED)
    if path == runs + ids["R_STUCK"]:
        return 200, run(ids["R_STUCK"], "running", 1)
    if path == runs + ids["R_REPLAY"]:
        seq = [run(ids["R_REPLAY"], "running", 1, kind="replay"),
               run(ids["R_REPLAY"], "completed", 2, **REPLAY_DONE)]
        return 200, seq[min(n, 1)]
    if path in (runs + ids["R_BASE"], runs + ids["R_CAND"]):
        return 200, run(path[len(runs):], "running", min(n, 2))
    if path == "/v1/m/sandbox/comparisons/" + ids["CMP"]:
        return 200, comparison("decided" if n >= 2 else "pending")
    return 404, {"error": {"code": "not_found", "message": "no such resource"}}

def answer_post(path):
    """(status, body, Location)"""
    s = "/v1/m/sandbox/scenarios/"
    if path == s + ids["S_QUEUED"] + "/runs":
        return 202, run(ids["R_QUEUED"], "queued", 0), "/v1/m/sandbox/runs/" + ids["R_QUEUED"]
    if path == s + ids["S_DONE"] + "/runs":
        return 201, run_seq(ids["R_QUEUED"])[3], None
    if path == s + ids["S_SLOW"] + "/runs":
        time.sleep(60)
        return 202, run(ids["R_STUCK"], "queued", 0), None
    if path == s + ids["S_STUCK"] + "/runs":
        return 202, run(ids["R_STUCK"], "queued", 0), "/v1/m/sandbox/runs/" + ids["R_STUCK"]
    if path == "/v1/m/sandbox/runs/" + ids["R_RUNNING"] + "/cancel":
        return 200, run(ids["R_RUNNING"], "running", 1, cancel_requested=True), None
    if path == "/v1/m/sandbox/runs/" + ids["R_ENDED"] + "/cancel":
        return 409, {"error": {"code": "conflict", "message": "the run has already ended"}}, None
    if path == "/v1/m/sandbox/comparisons":
        return 202, comparison("pending"), "/v1/m/sandbox/comparisons/" + ids["CMP"]
    if path == "/v1/m/sandbox/replays":
        return 202, run(ids["R_REPLAY"], "queued", 0, kind="replay"), \
            "/v1/m/sandbox/runs/" + ids["R_REPLAY"]
    return 404, {"error": {"code": "not_found", "message": "no such resource"}}

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, body, location=None):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if location:
            self.send_header("Location", location)
        self.end_headers()
        self.wfile.write(data)

    def note(self):
        with open(log_path, "a") as f:
            f.write("%s %s prefer=%s\n" % (self.command, self.path,
                                           self.headers.get("Prefer", "-")))

    def do_GET(self):
        with lock:
            self.note()
            n = gets.get(self.path, 0)
            gets[self.path] = n + 1
        self.reply(*answer_get(self.path, n))

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        with lock:
            if self.path == "/reset":
                gets.clear()
                self.reply(200, {})
                return
            self.note()
        self.reply(*answer_post(self.path))

srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(port_path + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
import os
os.rename(port_path + ".tmp", port_path)
srv.serve_forever()
PY

python3 "$E2E_TMP/server.py" "$LOG" "$PORT_FILE" S_QUEUED="$S_QUEUED" S_DONE="$S_DONE" \
	S_STUCK="$S_STUCK" S_SLOW="$S_SLOW" R_QUEUED="$R_QUEUED" R_WATCH="$R_WATCH" R_RUNNING="$R_RUNNING" \
	R_ENDED="$R_ENDED" R_STUCK="$R_STUCK" R_REPLAY="$R_REPLAY" CMP="$CMP" R_BASE="$R_BASE" \
	R_CAND="$R_CAND" 2>"$E2E_TMP/server.err" &
SERVER_PID=$!
trap 'kill "$SERVER_PID" 2>/dev/null; rm -rf "$E2E_TMP"' EXIT
# the server writes its port once it listens (at most 30 s on a loaded host)
for _ in $(seq 300); do
	[[ -s $PORT_FILE ]] && break
	sleep 0.1
done
if [[ -s $PORT_FILE ]]; then
	ok "a fake server on port $(cat "$PORT_FILE")"
else
	not_ok "a fake server started within 30 s ($(short "$(cat "$E2E_TMP/server.err")"))"
	done_testing
fi
URL=http://127.0.0.1:$(cat "$PORT_FILE")

# cli ARGS...: OUT, ERR (files' text), RC
cli() {
	RC=0
	"$CLI" --url "$URL" --token "$TOKEN" "$@" >"$E2E_TMP/out" 2>"$E2E_TMP/err" || RC=$?
	OUT=$(cat "$E2E_TMP/out")
	ERR=$(cat "$E2E_TMP/err")
}
# reset: every fixed sequence starts again, the request log is emptied
reset() {
	curl -s -o /dev/null -X POST --data '' "$URL/reset"
	: >"$LOG"
}
# requests PATTERN: the logged requests that match PATTERN (grep -E), one per line
requests() { grep -E -- "$1" "$LOG" 2>/dev/null || true; }
# count PATTERN
count() { requests "$1" | wc -l | tr -d ' '; }

# ---- scenarios run: a 202 followed to its end ------------------------------
cli sandbox scenarios run "$S_DONE"
is "scenarios run on a 201: exit 0" 0 "$RC"
TABLE_201=$OUT
cli sandbox scenarios run "$S_DONE" -o json
JSON_201=$OUT
is "the 201 record is the completed one" completed "$(jq -r .status <<<"$JSON_201")"

reset
cli sandbox scenarios run "$S_QUEUED"
is "scenarios run on a 202: exit 0" 0 "$RC"
is "scenarios run on a 202: the completed record, printed as for a 201" "$TABLE_201" "$OUT"
is "scenarios run on a 202: nothing on stderr (not a terminal)" "" "$ERR"
is "the POST asked the server to wait 10 s" \
	"POST /v1/m/sandbox/scenarios/$S_QUEUED/runs prefer=wait=10" "$(requests "^POST ")"
is "the run was polled until it completed, and no more (4 GETs)" 4 "$(count "^GET /v1/m/sandbox/runs/$R_QUEUED ")"

reset
cli sandbox scenarios run "$S_QUEUED" -o json
is "scenarios run -o json on a 202: exit 0" 0 "$RC"
is "scenarios run -o json on a 202: the completed record, as for a 201" "$JSON_201" "$OUT"
is "scenarios run -o json: nothing on stderr" "" "$ERR"

# ---- --no-wait -------------------------------------------------------------
reset
cli sandbox scenarios run "$S_QUEUED" --no-wait
is "--no-wait: exit 0" 0 "$RC"
is "--no-wait: the queued record's id and status, as runs get prints them" \
	"id $R_QUEUED|status queued" "$(grep -E '^(id|status) ' <<<"$OUT" | tr -s ' ' | paste -sd'|')"
is "--no-wait: no Prefer header" "POST /v1/m/sandbox/scenarios/$S_QUEUED/runs prefer=-" "$(requests "^POST ")"
is "--no-wait: no poll" 0 "$(count "^GET ")"
is "--no-wait: nothing on stderr" "" "$ERR"
cli sandbox scenarios run "$S_QUEUED" --no-wait -o json
is "--no-wait -o json: the body as answered" \
	"$R_QUEUED queued null" "$(jq -r '"\(.id) \(.status) \(.started_at)"' <<<"$OUT")"

# ---- runs watch ------------------------------------------------------------
reset
cli sandbox runs watch "$R_WATCH"
is "runs watch: exit 0" 0 "$RC"
WATCHED=$OUT
is "runs watch: nothing on stderr" "" "$ERR"
is "runs watch: GETs until completed (3)" 3 "$(count "^GET /v1/m/sandbox/runs/$R_WATCH ")"
cli sandbox runs get "$R_WATCH"
is "runs watch prints the finished run as runs get does" "$OUT" "$WATCHED"
is "runs watch: the completed run" "status completed" "$(grep -E '^status ' <<<"$WATCHED" | tr -s ' ')"

# ---- runs cancel -----------------------------------------------------------
reset
cli sandbox runs cancel "$R_RUNNING"
is "runs cancel on 200: exit 0" 0 "$RC"
is "runs cancel on 200: the run as returned" "status running|cancel_requested true" \
	"$(grep -E '^(status|cancel_requested) ' <<<"$OUT" | tr -s ' ' | paste -sd'|')"
is "runs cancel: POST …/cancel" "POST /v1/m/sandbox/runs/$R_RUNNING/cancel prefer=-" "$(requests "^POST ")"
cli sandbox runs cancel "$R_ENDED"
is "runs cancel on 409: exit 1" 1 "$RC"
is "runs cancel on 409: nothing on stdout" "" "$OUT"
is "runs cancel on 409: says the run has already ended, and how" \
	"olivares: run $R_ENDED has already ended (completed)" "$ERR"

# ---- compare: pending, then decided -----------------------------------------
reset
cli sandbox compare --scenario "$S_QUEUED" --baseline v1 --candidate v2 --suite walkthrough
is "compare on a pending comparison: exit 0" 0 "$RC"
COMPARED=$OUT
is "compare: nothing on stderr" "" "$ERR"
is "compare: the POST asked the server to wait" "POST /v1/m/sandbox/comparisons prefer=wait=10" "$(requests "^POST ")"
is "compare: polled until decided (3 GETs)" 3 "$(count "^GET /v1/m/sandbox/comparisons/$CMP ")"
is "compare: no look-up of the sides' runs without a terminal" 0 "$(count "^GET /v1/m/sandbox/runs/")"
cli sandbox comparisons get "$CMP"
is "compare prints the decided comparison as comparisons get does" "$OUT" "$COMPARED"
is "compare: the verdict" "verdict improved" "$(grep -E '^verdict ' <<<"$COMPARED" | tr -s ' ')"
reset
cli sandbox compare --scenario "$S_QUEUED" --baseline v1 --candidate v2 --suite walkthrough --no-wait -o json
is "compare --no-wait: the pending comparison, with its runs" "pending null $R_BASE $R_CAND" \
	"$(jq -r '"\(.status) \(.verdict) \(.baseline.run_id) \(.candidate.run_id)"' <<<"$OUT")"

# ---- replay ----------------------------------------------------------------
reset
cli sandbox replay "$(repeat_char 9 32)"
is "replay on a 202: exit 0" 0 "$RC"
is "replay: the completed replay with its divergence" "status completed|compared 2|diverging 0" \
	"$(grep -E '^(status|compared|diverging) ' <<<"$OUT" | tr -s ' ' | paste -sd'|')"
is "replay: nothing on stderr" "" "$ERR"
is "replay: polled until completed (2 GETs)" 2 "$(count "^GET /v1/m/sandbox/runs/$R_REPLAY ")"

# ---- a terminal: the progress line ------------------------------------------
# script(1) gives the CLI a terminal for stdout and stderr alike
if command -v script >/dev/null 2>&1; then
	reset
	RC=0
	script -qfec "$(printf '%q ' "$CLI" --url "$URL" --token "$TOKEN" sandbox scenarios run "$S_QUEUED")" \
		"$E2E_TMP/typescript" >/dev/null 2>&1 </dev/null || RC=$?
	is "on a terminal: exit 0" 0 "$RC"
	if grep -q -F "olivares: run ${R_QUEUED:0:8}: running, step 1/2" "$E2E_TMP/typescript" &&
		LC_ALL=C grep -q $'\r' "$E2E_TMP/typescript"; then
		ok "on a terminal: a progress line 'running, step 1/2', rewritten with CR"
	else
		not_ok "on a terminal: a progress line (got $(short "$(od -c "$E2E_TMP/typescript" | head -n 8)"))"
	fi
	is "on a terminal: the output after the progress line is the run" "$(head -n 1 <<<"$TABLE_201")" \
		"$(tr '\r' '\n' <"$E2E_TMP/typescript" | grep -E '^id ' | head -n 1 | sed 's/ *$//')"
	reset
	RC=0
	script -qfec "$(printf '%q ' "$CLI" --url "$URL" --token "$TOKEN" sandbox compare --scenario "$S_QUEUED" \
		--baseline v1 --candidate v2 --suite walkthrough)" "$E2E_TMP/typescript" >/dev/null 2>&1 </dev/null || RC=$?
	is "compare on a terminal: exit 0" 0 "$RC"
	if grep -q -F "olivares: comparison ${CMP:0:8}: baseline running 1/2, candidate running 1/2" "$E2E_TMP/typescript"; then
		ok "compare on a terminal: a progress line with both sides"
	else
		not_ok "compare on a terminal: a progress line with both sides (got $(short "$(tr '\r' '\n' <"$E2E_TMP/typescript" | head -n 6)"))"
	fi
else
	ok "# skip: no script(1) to give the CLI a terminal"
fi

# ---- SIGINT while waiting ----------------------------------------------------
# interrupt PATTERN ARGS...: the CLI with ARGS in the background, SIGINT
# once the server logged a request matching PATTERN (at most 30 s on a
# loaded host); RC, OUT, ERR as cli sets them
interrupt() {
	local pattern=$1 pid
	shift
	reset
	# job control: the background CLI gets SIGINT as a foreground one
	# would (without it, bash starts background jobs with SIGINT ignored)
	set -m
	"$CLI" --url "$URL" --token "$TOKEN" "$@" >"$E2E_TMP/out" 2>"$E2E_TMP/err" &
	pid=$!
	set +m
	for _ in $(seq 300); do
		(($(count "$pattern") >= 1)) && break
		sleep 0.1
	done
	kill -INT "$pid"
	RC=0
	wait "$pid" || RC=$?
	OUT=$(cat "$E2E_TMP/out")
	ERR=$(cat "$E2E_TMP/err")
}
GOES_ON="olivares: interrupted: run $R_STUCK goes on; follow it with 'olivares sandbox runs watch $R_STUCK' (stop it with 'olivares sandbox runs cancel $R_STUCK')"

interrupt "^GET /v1/m/sandbox/runs/$R_STUCK " sandbox scenarios run "$S_STUCK"
is "SIGINT while waiting: exit 130" 130 "$RC"
is "SIGINT while waiting: nothing on stdout" "" "$OUT"
is "SIGINT while waiting: stderr says the run goes on and how to follow it" "$GOES_ON" "$ERR"

interrupt "^GET /v1/m/sandbox/runs/$R_STUCK " sandbox runs watch "$R_STUCK"
is "SIGINT in runs watch: exit 130" 130 "$RC"
is "SIGINT in runs watch: stderr says the run goes on" "$GOES_ON" "$ERR"

# before the server answered the POST (it holds it 60 s): no run id to
# give, the key instead
interrupt "^POST /v1/m/sandbox/scenarios/$S_SLOW/" sandbox scenarios run "$S_SLOW" --idempotency-key t0065-key
is "SIGINT before the POST's answer: exit 130" 130 "$RC"
is "SIGINT before the POST's answer: stderr names the key that takes the request up again" \
	"olivares: interrupted before the server answered: if it took the request, the run goes on; the same command with --idempotency-key t0065-key follows it without making another" \
	"$ERR"
done_testing
