/*
 * olivares-executor: claims queued runs from the store and runs each with
 * olivares-runner (executor/execute.h), on any host that reaches the
 * database.
 *
 * One executor process is a master and [executor] slots slot processes.
 * The master checks which backends pass preflight on this host (only
 * those are claimed: a run asks for its backend, and is never run on
 * another), registers the executor, starts the slots, heartbeats the
 * executor and sweeps the runs of lost executors every lease/3 seconds
 * (store_runs_sweep: any executor may end any lost run), and restarts a
 * slot that dies (its run, if it had one, is ended by the sweep as lost:
 * never run twice). Each slot has its own database connection and its own
 * runner fork server, and runs one run at a time: claim, run, record.
 *
 * SIGTERM or SIGINT: the slots stop what they run (each run ended failed,
 * "executor <id> stopped before the run ended"), the executor is recorded
 * stopped and the process exits 0. A slot whose master dies gets SIGTERM
 * (parent-death signal) and does the same.
 */
#include <errno.h>
#include <jansson.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "executor/execute.h"
#include "fcgi/config.h"
#include "fcgi/run/dispatch.h"
#include "fcgi/scorer/scorer.h"
#include "model/runspec.h"
#include "sql/store.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "0"
#endif

/* A backend's preflight: at most this long (gVisor starts a sandbox). */
#define PREFLIGHT_TIMEOUT_MS 20000
/* The most slots one process may have ([executor] slots' bound). */
#define SLOTS_MAX 256
/* A slot's heap is kept when freed, up to this much (bytes): see slot_main. */
#define SLOT_HEAP_KEEP (8 << 20)
/* A slot idle with nothing to claim asks again after this pause, doubled
 * up to the most (ms). */
#define IDLE_FIRST_MS 5
#define IDLE_MAX_MS 200

static volatile sig_atomic_t stopping;
/* The master's pid, which its slots compare their parent with: a master
 * that is pid 1 (the init of a container or PID namespace) is alive. */
static pid_t master_pid;

static void on_stop(int sig)
{
	(void)sig;
	stopping = 1;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: olivares-executor [--id ID] [--slots N]\n"
	           "       olivares-executor --preflight\n"
	           "       olivares-executor --help | --version\n"
	           "\n"
	           "Claims queued runs from the store and runs each with olivares-runner.\n"
	           "Reads the same configuration as olivares-fcgi (OLIVARES_CONF, else\n"
	           "OLIVARES_DATA/olivares.conf; OLIVARES_DSN wins over [server] dsn).\n"
	           "\n"
	           "  --id ID       the executor's id (default <[executor] host_id>-<pid>):\n"
	           "                letters, digits and . _ : - (1..128)\n"
	           "  --slots N     runs at once (default [executor] slots)\n"
	           "  --preflight   print each backend's preflight on this host and exit\n"
	           "                (0: at least one backend can run here)\n"
	           "  --help        this text\n"
	           "  --version     the version\n");
}

static int id_ok(const char *id)
{
	size_t i, n = strlen(id);

	if (n < 1 || n > 128)
		return 0;
	for (i = 0; i < n; i++)
		if (!((id[i] >= 'a' && id[i] <= 'z') || (id[i] >= 'A' && id[i] <= 'Z') ||
		      (id[i] >= '0' && id[i] <= '9') || strchr("._:-", id[i])))
			return 0;
	return 1;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000LL + ts.tv_nsec / 1000000L;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/* Each known backend's preflight on this host into *preflight
 * ({"<backend>": {"ok","reason"}}, new) and the comma list of those that
 * pass into backends. */
static void preflight_all(const struct http_config *cfg, json_t **preflight, char *backends,
                          size_t n)
{
	struct http_preflight pf;
	size_t i, used = 0;

	*preflight = json_object();
	backends[0] = '\0';
	for (i = 0; http_config_known_backends[i]; i++) {
		const char *b = http_config_known_backends[i];

		memset(&pf, 0, sizeof(pf));
		http_dispatch_preflight(cfg->runner_path, b, cfg->gvisor_platform,
		                        PREFLIGHT_TIMEOUT_MS, &pf);
		json_object_set_new(
		    *preflight, b,
		    json_pack("{s:b, s:s?}", "ok", pf.ok, "reason", pf.ok ? NULL : pf.reason));
		if (pf.ok && used + strlen(b) + 2 < n)
			used +=
			    (size_t)snprintf(backends + used, n - used, "%s%s", used ? "," : "", b);
	}
}

static int open_store(const struct http_config *cfg, struct store **st)
{
	if (store_open(cfg->dsn, st)) {
		executor_log_error("cannot connect to the store: %s", store_last_error(NULL));
		return -1;
	}
	if (store_check_schema(*st)) {
		executor_log_error(
		    "the store's schema is not migrated (run olivares-admin migrate)");
		store_close(*st);
		*st = NULL;
		return -1;
	}
	return 0;
}

/* One slot: claim, run, record, until told to stop. Never returns. */
static void __attribute__((noreturn))
slot_main(const struct http_config *cfg, const char *id, const char *backends)
{
	struct executor_ctx x;
	struct model_scorer scorer;
	struct model_reason why;
	struct store_claim c;
	struct store *st = NULL;
	enum store_rc rc;
	long idle = IDLE_FIRST_MS;

	prctl(PR_SET_PDEATHSIG, SIGTERM);
	/* the master died before the signal was armed: the slot was handed
	 * to init or to a subreaper */
	if (getppid() != master_pid)
		_exit(0);
	/* Each run grows the heap (its job, its outputs, the rows read back)
	 * and frees it all at its end: glibc gave the top back to the kernel
	 * at every run (brk, then a TLB flush on every CPU the slot ran on,
	 * then page faults to grow it again), a quarter of a slot's CPU time
	 * per run. Kept instead, up to SLOT_HEAP_KEEP; larger blocks still
	 * come from mmap and go back. */
	mallopt(M_TRIM_THRESHOLD, SLOT_HEAP_KEEP);
	mallopt(M_MMAP_THRESHOLD, SLOT_HEAP_KEEP);
	memset(&scorer, 0, sizeof(scorer));
	memset(&why, 0, sizeof(why));
	if (http_scorer_from_config(cfg->scorer, cfg->scorer_timeout_ms, &scorer, &why))
		executor_log_warn("cannot build the scorer adapter (%s); none is wired", why.text);
	while (!stopping && open_store(cfg, &st) != 0)
		sleep_ms(1000);
	memset(&x, 0, sizeof(x));
	x.st = st;
	x.cfg = cfg;
	x.scorer = &scorer;
	x.executor_id = id;
	x.lease_seconds = cfg->executor_lease_seconds;
	x.stopping = &stopping;
	while (!stopping) {
		memset(&c, 0, sizeof(c));
		rc = store_run_claim(st, id, backends, &c);
		if (rc == STORE_OK) {
			executor_run(&x, &c);
			store_claim_clear(&c);
			idle = IDLE_FIRST_MS;
			continue;
		}
		if (rc != STORE_NOT_FOUND)
			executor_log_error("claim failed: %s", store_last_error(st));
		sleep_ms(rc == STORE_NOT_FOUND ? idle : 1000);
		if (idle < IDLE_MAX_MS)
			idle *= 2;
	}
	store_close(st);
	http_scorer_release(&scorer);
	_exit(0);
}

static pid_t start_slot(const struct http_config *cfg, const char *id, const char *backends)
{
	pid_t pid = fork();

	if (pid == 0)
		slot_main(cfg, id, backends);
	if (pid < 0)
		executor_log_error("cannot start a slot: %s", strerror(errno));
	return pid;
}

static int print_preflight(const struct http_config *cfg)
{
	json_t *pf, *v;
	const char *b;
	char backends[256];

	preflight_all(cfg, &pf, backends, sizeof(backends));
	json_object_foreach(pf, b, v)
	{
		if (json_is_true(json_object_get(v, "ok")))
			printf("%s: ok\n", b);
		else
			printf("%s: %s\n", b, json_string_value(json_object_get(v, "reason")));
	}
	json_decref(pf);
	return backends[0] ? 0 : 1;
}

int main(int argc, char **argv)
{
	struct http_config cfg;
	struct http_config_error cerr;
	struct store_executor ex;
	struct store *st = NULL;
	struct sigaction sa;
	pid_t slots[SLOTS_MAX], pid;
	json_t *preflight = NULL;
	char backends[256], idbuf[160], host[256];
	const char *id = NULL;
	long long next_beat = 0, beat_ms;
	int nslots = 0, i, status, ended, want_preflight = 0;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage(stdout);
			return 0;
		} else if (strcmp(argv[i], "--version") == 0) {
			printf("olivares-executor %s\n", PACKAGE_VERSION);
			return 0;
		} else if (strcmp(argv[i], "--preflight") == 0) {
			want_preflight = 1;
		} else if (strcmp(argv[i], "--id") == 0 && i + 1 < argc) {
			id = argv[++i];
			if (!id_ok(id)) {
				fprintf(stderr,
				        "olivares-executor: --id must be 1 to 128 letters, digits "
				        "and . _ : -\n");
				return 2;
			}
		} else if (strcmp(argv[i], "--slots") == 0 && i + 1 < argc) {
			char *end;
			long v = strtol(argv[++i], &end, 10);

			if (*end || v < 1 || v > SLOTS_MAX) {
				fprintf(stderr, "olivares-executor: --slots must be from 1 to %d\n",
				        SLOTS_MAX);
				return 2;
			}
			nslots = (int)v;
		} else {
			fprintf(stderr, "olivares-executor: unknown argument %s (see --help)\n",
			        argv[i]);
			return 2;
		}
	}
	if (http_config_load(&cfg, argv[0], &cerr)) {
		fprintf(stderr, "olivares-executor: %s\n", cerr.message);
		return 1;
	}
	if (want_preflight)
		return print_preflight(&cfg);
	if (!nslots)
		nslots = cfg.executor_slots;
	if (!id) {
		snprintf(host, sizeof(host), "%s", cfg.executor_host_id);
		snprintf(idbuf, sizeof(idbuf), "%.128s-%ld", host, (long)getpid());
		id = idbuf;
		if (!id_ok(id)) {
			fprintf(stderr,
			        "olivares-executor: [executor] host_id \"%.128s\" makes no valid "
			        "executor id (letters, digits and . _ : -); set host_id or --id\n",
			        host);
			return 1;
		}
	}

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	preflight_all(&cfg, &preflight, backends, sizeof(backends));
	executor_log("executor %s: backends %s, %d slots, lease %d s", id,
	             backends[0] ? backends : "(none passed preflight)", nslots,
	             cfg.executor_lease_seconds);
	if (open_store(&cfg, &st))
		return 1;
	memset(&ex, 0, sizeof(ex));
	ex.id = id;
	ex.host = cfg.executor_host_id;
	ex.pid = (int)getpid();
	ex.slots = nslots;
	ex.backends = backends;
	ex.preflight = preflight;
	if (store_executor_register(st, &ex)) {
		executor_log_error("cannot register executor %s: %s", id, store_last_error(st));
		store_close(st);
		return 1;
	}
	executor_log("executor %s registered", id);
	/* what lost executors left (this host's, after a restart, too) */
	ended = 0;
	if (store_runs_sweep(st, cfg.executor_lease_seconds, &ended) == STORE_OK && ended)
		executor_log("ended %d runs of lost executors", ended);
	/* the slots open their own connections: none is shared across a fork */
	store_close(st);
	st = NULL;
	master_pid = getpid();
	for (i = 0; i < nslots; i++)
		slots[i] = backends[0] ? start_slot(&cfg, id, backends) : -1;
	if (open_store(&cfg, &st))
		stopping = 1;

	beat_ms = (long long)cfg.executor_lease_seconds * 1000LL / 3;
	while (!stopping) {
		if (now_ms() >= next_beat) {
			next_beat = now_ms() + beat_ms;
			if (store_executor_heartbeat(st, id) == STORE_NOT_FOUND &&
			    store_executor_register(st, &ex))
				executor_log_error("cannot register executor %s again: %s", id,
				                   store_last_error(st));
			ended = 0;
			if (store_runs_sweep(st, cfg.executor_lease_seconds, &ended) == STORE_OK &&
			    ended)
				executor_log("ended %d runs of lost executors", ended);
		}
		/* a stop is seen between restarts, even of slots that keep dying */
		while (!stopping && (pid = waitpid(-1, &status, WNOHANG)) > 0) {
			for (i = 0; i < nslots; i++) {
				if (slots[i] != pid)
					continue;
				executor_log_warn("slot %ld ended (status 0x%x); starting another",
				                  (long)pid, status);
				/* a slot that dies at once must not spin */
				sleep_ms(200);
				slots[i] = start_slot(&cfg, id, backends);
			}
		}
		sleep_ms(100);
	}

	for (i = 0; i < nslots; i++)
		if (slots[i] > 0)
			kill(slots[i], SIGTERM);
	for (i = 0; i < nslots; i++)
		if (slots[i] > 0)
			waitpid(slots[i], &status, 0);
	if (st)
		store_executor_stop(st, id);
	store_close(st);
	json_decref(preflight);
	executor_log("executor %s stopped", id);
	return 0;
}
