/*
 * olivares-fcgi: the composition root and the pre-fork master (the
 * processes and their rules: docs/architecture.md).
 *
 * The master reads the configuration, opens the FastCGI socket (or takes
 * the one spawn-fcgi put on fd 0), applies missing migrations, forks the
 * workers and then only supervises: it respawns a worker that dies and, on
 * SIGTERM or SIGINT, stops the workers, removes the socket it created and
 * exits 0. The master handles its signals synchronously (blocked, then
 * sigtimedwait), so no signal can slip between a check and a wait.
 *
 * A worker owns one store connection, opened after the fork, and serves
 * one request at a time in an FCGX_Accept_r loop. On SIGTERM it finishes
 * the request in progress, then exits. A request still running
 * REQUEST_WATCHDOG_MARGIN_S after the longest a request can take ends its
 * worker (SIGALRM), which the master replaces.
 *
 * This is the composition root: the only place that chooses the scorer
 * adapter (model/scorer.h), from [scorer] adapter and timeout_ms, with
 * http_scorer_from_config (fcgi/scorer/scorer.h). The master builds it once at
 * start-up to refuse a configuration that names an adapter that cannot be
 * built (a missing suites directory, a command that is not executable);
 * each worker then builds its own and hands it to the handlers through
 * struct http_worker.
 *
 * It is also the only place that chooses the history source of replays
 * (model/history.h): the store adapter (fcgi/run/history_store.h), which reads
 * the sessions imported into the worker's own store connection.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <fcgiapp.h>

#include "fcgi/api/routes.h"
#include "fcgi/config.h"
#include "fcgi/http/http.h"
#include "fcgi/retention.h"
#include "fcgi/run/dispatch.h"
#include "fcgi/run/history_store.h"
#include "fcgi/run/preflight_cache.h"
#include "fcgi/scorer/scorer.h"
#include "fcgi/view/view.h"
#include "fcgi/evidence/key.h"
#include "fcgi/http/metrics.h"
#include "model/alloc.h"
#include "sql/store.h"

#define MAX_WORKERS 64
#define BACKOFF_MIN_MS 250
#define BACKOFF_MAX_MS 5000
#define FAST_DEATH_MS 2000
#define SHUTDOWN_GRACE_MS 5000
/* A request that holds its worker this long past the longest a request
 * can take (http_config_request_seconds_max) is stuck, on a store that
 * stopped answering (a PostgreSQL backend stopped or wedged, a network
 * path dropping packets: no ODBC call returns for many minutes, and
 * every request that comes next gets stuck in turn until no worker is
 * left). SIGALRM ends the worker (the master logs it and starts another;
 * its runner dies with it, and nothing of the request was committed
 * unless its COMMIT had returned). The margin covers the store's own
 * retries (a locked SQLite database gives up in about 10 s). */
#define REQUEST_WATCHDOG_MARGIN_S 30

struct slot {
	pid_t pid;            /* 0 when not running */
	long long started;    /* ms, monotonic */
	long long respawn_at; /* ms, monotonic; 0 = nothing scheduled */
	int backoff_ms;
};

/* ---- worker -------------------------------------------------------------- */

static volatile sig_atomic_t worker_stop;
static int worker_listen_fd = -1;
/* The line the watchdog writes for the request in progress, made before
 * its alarm is set (a signal handler may only write(2)); its time is
 * stamped when it is written. */
static char worker_stuck_line[OLV_LOG_LINE_MAX];
static size_t worker_stuck_len;
static unsigned worker_watchdog_s;

/*
 * While the worker waits in accept, closing its copy of the listening
 * descriptor makes FCGX_Accept_r return at once (PHP-FPM does the same);
 * while it serves a request, the request ends normally and the worker
 * accepts no other. Its copy is closed then too: the request in progress
 * has its own connection, and a worker whose master was killed with
 * SIGKILL (this SIGTERM is its parent-death signal) must not keep the
 * socket listening, or the master started in its place would take it for
 * another server's and refuse to replace it. close() is
 * async-signal-safe.
 */
static void worker_on_term(int sig)
{
	int saved = errno;

	(void)sig;
	worker_stop = 1;
	if (worker_listen_fd >= 0) {
		close(worker_listen_fd);
		worker_listen_fd = -1;
	}
	errno = saved;
}

/* The request watchdog's alarm: say which request was stuck, then die of
 * SIGALRM, which the master reports (describe_exit). */
static void worker_on_alarm(int sig)
{
	struct timespec ts;
	char now[25];

	if (worker_stuck_len && clock_gettime(CLOCK_REALTIME, &ts) == 0) {
		olv_log_time(&ts, now);
		memcpy(worker_stuck_line + OLV_LOG_TIME_OFFSET, now, 24);
	}
	if (worker_stuck_len && write(STDERR_FILENO, worker_stuck_line, worker_stuck_len) < 0)
		worker_stuck_len = 0;
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Arm the watchdog for the request http_serve begins (its begin hook): its
 * line names the request id, the method and the path (not the query
 * string). */
static void worker_watchdog_arm(const struct http_request *req)
{
	struct timespec ts;
	char now[25], msg[256];
	json_t *f;

	snprintf(msg, sizeof(msg),
	         "a request held this worker over %u s (the longest a request can take, + %d s): "
	         "the store or the request is stuck; the worker is stopped and another started",
	         worker_watchdog_s, REQUEST_WATCHDOG_MARGIN_S);
	f = json_object();
	json_object_set_new(f, "method", olv_log_text(req->head ? "HEAD" : req->method, 16));
	json_object_set_new(f, "path", olv_log_text(req->path, HTTP_LOG_PATH_MAX));
	clock_gettime(CLOCK_REALTIME, &ts);
	olv_log_time(&ts, now);
	worker_stuck_len =
	    olv_log_encode(worker_stuck_line, sizeof(worker_stuck_line), now, "olivares-fcgi",
	                   (long)getpid(), OLV_LOG_ERROR, req->request_id, msg, f);
	json_decref(f);
	alarm(worker_watchdog_s);
}

/* Idle: no SA_RESTART, so a signal interrupts accept. Busy: SA_RESTART, so
 * reads and writes of the request in progress are not cut short. */
static void worker_signals(int idle)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = worker_on_term;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = idle ? 0 : SA_RESTART;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
}

/* loaded by the master before the fork; the workers only read it */
static struct http_evidence_key evidence_key;

static int worker_main(const struct http_config *cfg, int listen_fd, const sigset_t *mask)
{
	struct http_worker w;
	struct model_scorer scorer;
	struct model_history_source history;
	struct sigaction sa;
	sigset_t alarm_only;
	FCGX_Request fr;
	struct model_reason err;
	int rc, code = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL); /* a client gone or a runner dead: EPIPE, not death */
	sa.sa_handler = SIG_DFL;
	sigaction(SIGCHLD, &sa, NULL); /* the dispatcher reaps its runner by pid */
	sigaction(SIGHUP, &sa, NULL);
	sa.sa_handler = worker_on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	worker_listen_fd = listen_fd;
	worker_signals(1);
	sigprocmask(SIG_SETMASK, mask, NULL);
	/* the request watchdog's signal, whatever mask the server started with */
	sigemptyset(&alarm_only);
	sigaddset(&alarm_only, SIGALRM);
	sigprocmask(SIG_UNBLOCK, &alarm_only, NULL);

	memset(&w, 0, sizeof(w));
	w.cfg = cfg;
	memset(&scorer, 0, sizeof(scorer));
	if (http_scorer_from_config(cfg->scorer, cfg->scorer_timeout_ms, &scorer, &err)) {
		/* the master built it at start-up; if it cannot be built now,
		 * *out is the none adapter: runs say "not scored", never pass */
		http_log_warn("worker cannot build the scorer adapter (%s); none is wired",
		              err.text);
	}
	w.scorer = &scorer;
	/* sessions come from the store: the adapter reads w.store at each load */
	http_history_store(&w, &history);
	w.history = &history;
	w.view = view_serve;
	w.begin = worker_watchdog_arm;
	worker_watchdog_s =
	    (unsigned)(http_config_request_seconds_max(cfg) + REQUEST_WATCHDOG_MARGIN_S);
	w.routes = http_routes;
	w.nroutes = http_routes_count;
	w.evidence = evidence_key.private_pem ? &evidence_key : NULL;
	if (store_open(cfg->worker_dsn[0] ? cfg->worker_dsn : cfg->dsn, &w.store)) {
		/* not fatal: requests answer 503 and the next one retries */
		http_log_error("worker cannot connect to the store yet: %s",
		               store_last_error(NULL));
		w.store = NULL;
	}
	if (FCGX_InitRequest(&fr, listen_fd, FCGI_FAIL_ACCEPT_ON_INTR)) {
		http_log_error("FCGX_InitRequest failed");
		code = 1;
		goto out;
	}
	for (;;) {
		worker_signals(1);
		if (worker_stop)
			break;
		rc = FCGX_Accept_r(&fr);
		worker_signals(0);
		if (rc < 0) {
			if (worker_stop)
				break;
			http_log_error("accept failed (%d: %s); worker exits", rc, strerror(errno));
			code = 1;
			break;
		}
		/* http_serve arms the watchdog (w.begin) */
		http_serve(&w, &fr, http_routes, http_routes_count);
		FCGX_Finish_r(&fr);
		alarm(0);
	}
	FCGX_Free(&fr, 1);
out:
	if (w.store)
		store_close(w.store);
	http_scorer_release(&scorer);
	return code;
}

/* listen(2) silently caps the backlog at net.core.somaxconn: say so when
 * the configured one is above it, so a 502 under a burst is explained. */
static void note_somaxconn(int backlog)
{
	FILE *f = fopen("/proc/sys/net/core/somaxconn", "r");
	long cap = -1;

	if (!f)
		return;
	if (fscanf(f, "%ld", &cap) != 1)
		cap = -1;
	fclose(f);
	if (cap > 0 && cap < backlog)
		http_log_warn("backlog %d is capped by the kernel at net.core.somaxconn = %ld",
		              backlog, cap);
}

/* ---- master ----------------------------------------------------------------- */

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void on_chld(int sig)
{
	(void)sig; /* only so that SIGCHLD is delivered to sigtimedwait */
}

static pid_t spawn(const struct http_config *cfg, int listen_fd, const sigset_t *oldmask)
{
	pid_t pid, master;

	master = getpid();
	pid = fork();
	if (pid < 0) {
		http_log_error("fork failed: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		/* a worker never outlives its master (kill -9 of the master must
		 * not leave orphans holding the socket); SIGTERM is still blocked
		 * here, so it is handled as a normal stop once the worker runs */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != master)
			_exit(0);
		/* exit, not _exit: the master leaves no stdio buffered, and
		 * a normal exit lets the leak checker of a sanitizer build
		 * look at the worker */
		exit(worker_main(cfg, listen_fd, oldmask));
	}
	return pid;
}

static void describe_exit(pid_t pid, int status)
{
	if (WIFEXITED(status))
		http_log_error("worker %ld exited with status %d", (long)pid, WEXITSTATUS(status));
	else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
		http_log_error("worker %ld stopped by its request watchdog", (long)pid);
	else if (WIFSIGNALED(status))
		http_log_error("worker %ld killed by signal %d", (long)pid, WTERMSIG(status));
}

/* ---- the purge child (docs/retention.md) ----------------- */

/* The master's purge process: its pid (0: none running), when it started
 * and when the next one is due (ms, monotonic; 0: never, no tenant has a
 * retention or the interval is 0). */
struct purge_state {
	pid_t pid;
	long long started;
	long long due;
	int killed;
};

static void purge_report(void *ctx, struct store *st, const struct http_retention_tenant *t)
{
	(void)ctx;
	if (t->rc)
		http_log_error("purge: tenant %s: %s", t->name, store_last_error(st));
}

/* The purge process: its own store connection, every tenant by its
 * retention, one line with the counts. Exits 0, or 1 when a tenant's
 * purge (or the connection) failed. */
static int purge_main(const struct http_config *cfg, int listen_fd, const sigset_t *mask)
{
	struct http_retention_opts o = {.actor = "olivares-fcgi"};
	struct store_retention_result total;
	struct store *st = NULL;
	struct sigaction sa;
	long long t0 = now_ms();
	int rc, tenants = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	sigprocmask(SIG_SETMASK, mask, NULL);
	/* never the pool's socket (fd 0 when spawn-fcgi handed it over): the
	 * web server must not reach this process */
	if (listen_fd >= 0)
		close(listen_fd);
	o.include_referenced = strcmp(cfg->retention_include_referenced, "true") == 0;
	if (store_open(cfg->worker_dsn[0] ? cfg->worker_dsn : cfg->dsn, &st)) {
		http_log_error("purge: cannot connect to the store: %s", store_last_error(NULL));
		return 1;
	}
	rc = http_retention_run(cfg, st, &o, purge_report, NULL, &total, &tenants);
	if (rc && !tenants)
		http_log_error("purge: %s", store_last_error(st));
	http_log("purge%s: %d tenant(s) with a retention: %lld run(s), %lld output(s), %lld "
	         "log(s) deleted, %lld expired run(s) kept (a comparison rests on them), %lld ms",
	         rc ? " (incomplete)" : "", tenants, total.runs, total.outputs, total.logs,
	         total.kept, now_ms() - t0);
	store_close(st);
	return rc ? 1 : 0;
}

static void purge_start(const struct http_config *cfg, struct purge_state *p, int listen_fd,
                        const sigset_t *oldmask)
{
	pid_t pid, master = getpid();

	pid = fork();
	if (pid < 0) {
		http_log_error("purge: fork failed: %s", strerror(errno));
		return;
	}
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != master)
			_exit(0);
		/* told apart from the workers in ps and by pgrep -x olivares-fcgi */
		prctl(PR_SET_NAME, "olivares-purge");
		exit(purge_main(cfg, listen_fd, oldmask));
	}
	p->pid = pid;
	p->started = now_ms();
	p->killed = 0;
}

/* Schedule and supervise the purge; the ms until it next needs a look
 * go to *wait_ms (lowered, never raised). */
static void purge_tick(const struct http_config *cfg, struct purge_state *p, int listen_fd,
                       const sigset_t *oldmask, long long now, long long *wait_ms)
{
	long long left;

	if (p->pid) {
		left = p->started + HTTP_PURGE_DEADLINE_S * 1000LL - now;
		if (left <= 0 && !p->killed) {
			/* a hung store must not keep a purge (and its lock) forever */
			http_log_error("purge %ld still running after %d s: SIGKILL", (long)p->pid,
			               HTTP_PURGE_DEADLINE_S);
			kill(p->pid, SIGKILL);
			p->killed = 1;
		} else if (left > 0 && left < *wait_ms) {
			*wait_ms = left;
		}
		return;
	}
	if (!p->due)
		return;
	if (p->due <= now) {
		purge_start(cfg, p, listen_fd, oldmask);
		p->due = now + cfg->purge_interval_seconds * 1000LL;
	}
	if (p->due - now < *wait_ms)
		*wait_ms = p->due - now;
}

static void purge_reaped(struct purge_state *p, int status, int stopping)
{
	/* at a stop the master's own SIGTERM ended it: nothing to say */
	if (WIFSIGNALED(status) && !stopping)
		http_log_error("purge %ld killed by signal %d", (long)p->pid, WTERMSIG(status));
	p->pid = 0;
}

/* Reap every dead child; mark slots and schedule their respawn. */
static int reap(struct slot *slots, int n, int stopping, struct purge_state *purge)
{
	long long now, lived;
	pid_t pid;
	int status, i, reaped = 0;

	for (;;) {
		pid = waitpid(-1, &status, WNOHANG);
		if (pid <= 0)
			break;
		if (purge && purge->pid == pid) {
			purge_reaped(purge, status, stopping);
			continue;
		}
		for (i = 0; i < n; i++)
			if (slots[i].pid == pid)
				break;
		if (i == n)
			continue;
		reaped++;
		slots[i].pid = 0;
		if (stopping)
			continue;
		describe_exit(pid, status);
		http_metrics_worker_restart();
		now = now_ms();
		lived = now - slots[i].started;
		/* a worker that dies right away is restarted more and more slowly */
		if (lived >= FAST_DEATH_MS)
			slots[i].backoff_ms = 0;
		else if (!slots[i].backoff_ms)
			slots[i].backoff_ms = BACKOFF_MIN_MS;
		else if (slots[i].backoff_ms * 2 <= BACKOFF_MAX_MS)
			slots[i].backoff_ms *= 2;
		else
			slots[i].backoff_ms = BACKOFF_MAX_MS;
		slots[i].respawn_at = now + (slots[i].backoff_ms ? slots[i].backoff_ms : 1);
	}
	return reaped;
}

static int running(const struct slot *slots, int n)
{
	int i, c = 0;

	for (i = 0; i < n; i++)
		c += slots[i].pid > 0;
	return c;
}

static void signal_all(const struct slot *slots, int n, int sig)
{
	int i;

	for (i = 0; i < n; i++)
		if (slots[i].pid > 0)
			kill(slots[i].pid, sig);
}

static void stop_workers(struct slot *slots, int n, const sigset_t *set, int grace_ms,
                         struct purge_state *purge)
{
	struct timespec ts = {0, 100 * 1000000};
	long long deadline;
	int sig, killed = 0;

	signal_all(slots, n, SIGTERM);
	/* a purge stops at once: its open transaction is rolled back */
	if (purge->pid)
		kill(purge->pid, SIGTERM);
	deadline = now_ms() + grace_ms;
	for (;;) {
		reap(slots, n, 1, purge);
		if (!running(slots, n) && !purge->pid)
			break;
		if (!killed && now_ms() >= deadline) {
			http_log_warn("workers still running after %d ms: SIGKILL", grace_ms);
			signal_all(slots, n, SIGKILL);
			if (purge->pid)
				kill(purge->pid, SIGKILL);
			killed = 1;
		}
		sig = sigtimedwait(set, NULL, &ts);
		if ((sig == SIGTERM || sig == SIGINT) && !killed) {
			http_log_warn("second stop signal: SIGKILL");
			signal_all(slots, n, SIGKILL);
			if (purge->pid)
				kill(purge->pid, SIGKILL);
			killed = 1;
		}
	}
}

static int master_loop(const struct http_config *cfg, int listen_fd)
{
	struct slot slots[MAX_WORKERS];
	struct purge_state purge;
	sigset_t set, oldmask;
	struct sigaction sa;
	struct timespec ts;
	long long now, wait_ms;
	int n, i, sig;
	pid_t pid;

	n = cfg->workers < 1 ? 1 : (cfg->workers > MAX_WORKERS ? MAX_WORKERS : cfg->workers);
	memset(slots, 0, sizeof(slots));
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_chld;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_NOCLDSTOP;
	sigaction(SIGCHLD, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sa.sa_flags = 0;
	sigaction(SIGPIPE, &sa, NULL);

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, &oldmask);

	for (i = 0; i < n; i++)
		slots[i].respawn_at = 1; /* due now */
	memset(&purge, 0, sizeof purge);
	/* the first purge soon after start-up, so a server restarted more
	 * often than its interval still purges */
	if (cfg->purge_interval_seconds > 0 && http_config_retention_any(cfg))
		purge.due =
		    now_ms() +
		    (cfg->purge_interval_seconds < 60 ? cfg->purge_interval_seconds : 60) * 1000LL;
	for (;;) {
		now = now_ms();
		wait_ms = 1000;
		for (i = 0; i < n; i++) {
			if (slots[i].pid || !slots[i].respawn_at)
				continue;
			if (slots[i].respawn_at <= now) {
				pid = spawn(cfg, listen_fd, &oldmask);
				if (pid > 0) {
					slots[i].pid = pid;
					slots[i].started = now;
					slots[i].respawn_at = 0;
					http_log("worker %ld started (slot %d)", (long)pid, i);
					continue;
				}
				slots[i].respawn_at = now + BACKOFF_MAX_MS;
			}
			if (slots[i].respawn_at - now < wait_ms)
				wait_ms = slots[i].respawn_at - now;
		}
		purge_tick(cfg, &purge, listen_fd, &oldmask, now, &wait_ms);
		ts.tv_sec = wait_ms / 1000;
		ts.tv_nsec = (wait_ms % 1000) * 1000000;
		sig = sigtimedwait(&set, NULL, &ts);
		if (sig == SIGTERM || sig == SIGINT) {
			http_log("received %s: stopping %d workers",
			         sig == SIGTERM ? "SIGTERM" : "SIGINT", running(slots, n));
			break;
		}
		reap(slots, n, 0, &purge);
	}
	/* a request in progress (one waiting for its run at the longest) ends
	 * and is answered before its worker is killed */
	stop_workers(slots, n, &set,
	             http_config_request_seconds_max(cfg) * 1000 + SHUTDOWN_GRACE_MS, &purge);
	return 0;
}

/* ---- socket ------------------------------------------------------------------- */

/* 1 if fd 0 is a listening socket (we run under spawn-fcgi). */
static int inherited_listener(void)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int acc = 0;
	socklen_t alen = sizeof(acc);

	if (getsockname(0, (struct sockaddr *)&ss, &len) != 0)
		return 0;
	if (getsockopt(0, SOL_SOCKET, SO_ACCEPTCONN, &acc, &alen) != 0)
		return 0;
	return acc != 0;
}

/* A unix socket path: refuse to take over a live socket or any other file;
 * remove a stale socket (libfcgi would unlink whatever is there). */
static int clear_unix_path(const char *path)
{
	struct sockaddr_un sa;
	struct stat st;
	int fd, live;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		http_log_error("socket path is too long: %s", path);
		return -1;
	}
	if (lstat(path, &st) != 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISSOCK(st.st_mode)) {
		http_log_error("%s exists and is not a socket; not replacing it", path);
		return -1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0)
		return -1;
	live = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	close(fd);
	if (live) {
		http_log_error("%s is in use by another process", path);
		return -1;
	}
	if (unlink(path) != 0) {
		http_log_error("cannot remove stale socket %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* "host:port" or ":port" (no '/') is TCP, as libfcgi reads it; else a path. */
static int is_tcp(const char *s)
{
	return strchr(s, ':') && !strchr(s, '/');
}

static int open_listener(const struct http_config *cfg, int *created)
{
	mode_t old;
	int fd;

	*created = 0;
	if (!is_tcp(cfg->socket_path)) {
		if (strchr(cfg->socket_path, ':')) {
			http_log_error("socket path must not contain ':': %s", cfg->socket_path);
			return -1;
		}
		if (clear_unix_path(cfg->socket_path))
			return -1;
	}
	/* create the socket private, then open it up to the configured mode */
	old = umask(0177);
	fd = FCGX_OpenSocket(cfg->socket_path, cfg->backlog);
	umask(old);
	if (fd < 0) {
		http_log_error("cannot listen on %s", cfg->socket_path);
		return -1;
	}
	note_somaxconn(cfg->backlog);
	if (!is_tcp(cfg->socket_path)) {
		*created = 1;
		if (chmod(cfg->socket_path, (mode_t)cfg->socket_mode) != 0) {
			http_log_error("chmod %o %s: %s", cfg->socket_mode, cfg->socket_path,
			               strerror(errno));
			return -1;
		}
	}
	return fd;
}

/* ---- start-up ------------------------------------------------------------------ */

/* cfg->worker_dsn: the master created and migrated the database; a worker
 * only ever opens it (SQLite: NoCreat=1). 0, or -1 when it does not fit. */
static int worker_dsn(struct http_config *cfg)
{
	char file[512];
	int n;

	if (!store_sqlite_file(cfg->dsn, file, sizeof(file))) {
		snprintf(cfg->worker_dsn, sizeof(cfg->worker_dsn), "%s", cfg->dsn);
		return 0;
	}
	n = snprintf(cfg->worker_dsn, sizeof(cfg->worker_dsn), "%s%sNoCreat=1", cfg->dsn,
	             cfg->dsn[0] && cfg->dsn[strlen(cfg->dsn) - 1] != ';' ? ";" : "");
	if (n < 0 || (size_t)n >= sizeof(cfg->worker_dsn)) {
		http_log_error("the dsn is too long to add NoCreat=1");
		return -1;
	}
	return 0;
}

/* A [tenant NAME] section whose tenant does not exist (yet): its policy
 * applies once a tenant of that name is created (fcgi/run/job.c asks
 * again), but a misspelt name would otherwise go unnoticed. A note at
 * start-up, never fatal; a store error here says nothing. */
static void note_unknown_tenants(const struct http_config *cfg, struct store *st)
{
	char id[33];
	int i;

	for (i = 0; i < cfg->ntenants; i++)
		if (store_tenant_find(st, cfg->tenants[i].name, id) == STORE_NOT_FOUND)
			http_log(
			    "note: [tenant %s] names no tenant of the database yet: its policy "
			    "applies once a tenant of that name is created (olivares-admin "
			    "tenant list)",
			    cfg->tenants[i].name);
}

static int migrate(const struct http_config *cfg)
{
	struct store *st = NULL;
	int applied = 0, rc = -1;

	if (store_open(cfg->dsn, &st)) {
		http_log_error("cannot connect to the store: %s", store_last_error(NULL));
		return -1;
	}
	if (store_migrate(st, &applied)) {
		http_log_error("migration failed: %s", store_last_error(st));
		goto out;
	}
	if (applied)
		http_log("applied %d migration(s)", applied);
	note_unknown_tenants(cfg, st);
	rc = 0;
out:
	store_close(st);
	return rc;
}

/* An egress_secrets file the egress gateway would refuse at every run's
 * start (section names who gives it): said here, before a run fails on it.
 * The gateway checks it again, as its own user, when it starts. */
static void warn_secrets(const char *section, const char *path)
{
	struct stat sb;

	if (!path[0])
		return;
	if (stat(path, &sb) != 0)
		http_log_warn(
		    "warning: %s egress_secrets %s cannot be read (%s): every run of it with "
		    "egress hosts fails",
		    section, path, strerror(errno));
	else if (!S_ISREG(sb.st_mode) || (sb.st_mode & 077) != 0)
		http_log_warn(
		    "warning: %s egress_secrets %s is not a regular file of mode 0600: every "
		    "run of it with egress hosts fails (chmod 600)",
		    section, path);
}

/* What a configuration allows but an operator would want to hear of:
 * logged at start-up and by --check-config, never fatal. */
static void warn_config(const struct http_config *cfg)
{
	char section[160];
	int i;

	struct stat sb;
	int longest = http_config_request_seconds_max(cfg);

	if (stat(cfg->agents_dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
		http_log_warn("warning: agents_dir %s is not a directory: every variant runs the "
		              "built-in mock agent",
		              cfg->agents_dir);
	warn_secrets("[runner]", cfg->egress_secrets);
	for (i = 0; i < cfg->ntenants; i++) {
		/* a tenant that inherits [runner]'s file was warned of above */
		if (strcmp(cfg->tenants[i].egress_secrets, cfg->egress_secrets) == 0)
			continue;
		snprintf(section, sizeof(section), "[tenant %s]", cfg->tenants[i].name);
		warn_secrets(section, cfg->tenants[i].egress_secrets);
	}
	/* 60 s: nginx's default fastcgi_read_timeout */
	if (longest > 60)
		http_log("note: a request that waits for its run can take up to %d s here "
		         "([server] wait_max_seconds + 10 s): the web server's read timeout for "
		         "this pool (nginx's fastcgi_read_timeout, 60 s unless set) must be at "
		         "least that, or wait_max_seconds lower",
		         longest);
}

/* Build the configured scorer adapter once and release it: a
 * configuration whose adapter cannot be built is refused at start-up. */
static int check_scorer(const struct http_config *cfg)
{
	struct model_scorer scorer;
	struct model_reason err;
	int rc;

	memset(&scorer, 0, sizeof(scorer));
	rc = http_scorer_from_config(cfg->scorer, cfg->scorer_timeout_ms, &scorer, &err);
	if (rc)
		http_log_error("scorer adapter cannot be built: %s", err.text);
	else
		http_log("scorer adapter: %s", scorer.ops ? scorer.ops->name : "none");
	http_scorer_release(&scorer);
	return rc;
}

/* Where the element of a connection string that starts at p ends (its
 * ';' or the NUL): a value in braces ("PWD={a;b}", "}}" standing for a
 * '}') runs to its closing brace, ';' included (the ODBC syntax). */
static const char *dsn_element_end(const char *p)
{
	const char *eq = strchr(p, '='), *semi = strchr(p, ';'), *q;

	if (eq && (!semi || eq < semi) && eq[1] == '{') {
		for (q = eq + 2; *q; q++) {
			if (*q != '}')
				continue;
			if (q[1] == '}') {
				q++;
				continue;
			}
			break;
		}
		semi = strchr(*q ? q : q - 1, ';');
	}
	return semi ? semi : p + strlen(p);
}

/* The DSN without secrets, for --check-config: the values of PWD and
 * Password masked (braced ones whole). */
static void print_dsn(FILE *f, const char *dsn)
{
	const char *p = dsn, *semi, *eq;
	size_t klen;

	while (*p) {
		semi = dsn_element_end(p);
		eq = memchr(p, '=', (size_t)(semi - p));
		klen = eq ? (size_t)(eq - p) : 0;
		if (eq && ((klen == 3 && strncasecmp(p, "PWD", 3) == 0) ||
		           (klen == 8 && strncasecmp(p, "Password", 8) == 0)))
			fprintf(f, "%.*s=***", (int)klen, p);
		else
			fprintf(f, "%.*s", (int)(semi - p), p);
		if (*semi)
			fputc(';', f);
		p = *semi ? semi + 1 : semi;
	}
}

/* "key = value", or, when that line would not fit in a line of the file
 * (HTTP_CONFIG_MAX_LINE), a note in its place, so that what is printed
 * always loads. */
static void print_kv(const char *key, const char *value)
{
	size_t n = strlen(key) + 3 + strlen(value);

	if (n <= HTTP_CONFIG_MAX_LINE)
		printf("%s = %s\n", key, value);
	else
		printf("# %s: its line would be %zu bytes, more than a line of the file takes "
		       "(%d)\n",
		       key, n, HTTP_CONFIG_MAX_LINE);
}

/* The keys of section s (for a named one, those of cfg->tenants[tenant]),
 * each as "key = value": a secret with its passwords masked, a long value
 * replaced by a note when its line would not fit one of the file's. */
static void print_keys(const struct http_config *cfg, const struct http_config_section *s,
                       int tenant)
{
	const struct http_config_key *k;
	char value[2048];
	char *shown = NULL;
	size_t shown_len = 0;
	FILE *masked;

	for (k = http_config_keys; k->name; k++) {
		if (strcmp(k->section, s->name) != 0)
			continue;
		/* every field fits value: the largest is 1 KiB */
		if (http_config_format(cfg, k, tenant, value, sizeof(value)))
			continue;
		if (k->flags & HTTP_CONFIG_SECRET) {
			masked = open_memstream(&shown, &shown_len);
			if (!masked)
				continue;
			print_dsn(masked, value);
			fclose(masked);
			print_kv(k->name, shown);
			free(shown);
			shown = NULL;
		} else if (k->flags & HTTP_CONFIG_LONG) {
			print_kv(k->name, value);
		} else {
			printf("%s = %s\n", k->name, value);
		}
	}
}

/* What was loaded, as the INI file that would load it: its sections and
 * keys under the names the file uses (http_config_keys, in its order),
 * every default written out; the [tenant NAME] sections last. */
static void print_config(const struct http_config *cfg)
{
	const char *data = getenv("OLIVARES_DATA"), *dsn = getenv("OLIVARES_DSN");
	const struct http_config_section *s;
	int i;

	/* one note a line: the file's lines are at most 198 bytes */
	if (cfg->file[0]) {
		/* cut to fit a line of the file */
		printf("# read from %.180s%s\n", cfg->file, strlen(cfg->file) > 180 ? "..." : "");
		if (data && *data)
			puts("# OLIVARES_DATA is set: it is the data dir, whatever the file says");
		if (dsn && *dsn)
			puts("# OLIVARES_DSN is set: it is the dsn, whatever the file says");
	} else
		printf("# no configuration file (no OLIVARES_CONF, no olivares.conf in the data "
		       "dir): the defaults\n");
	for (s = http_config_sections; s->name; s++) {
		if (s->named)
			continue;
		printf("%s[%s]\n", s == http_config_sections ? "" : "\n", s->name);
		print_keys(cfg, s, -1);
	}
	printf("\n# the longest request (one that waits for its run) can take %d s: the web\n"
	       "# server's read timeout for the pool (nginx's fastcgi_read_timeout) must be\n"
	       "# at least that\n"
	       "# request_seconds_max = %d\n",
	       http_config_request_seconds_max(cfg), http_config_request_seconds_max(cfg));
	for (s = http_config_sections; s->name; s++) {
		if (!s->named)
			continue;
		for (i = 0; i < cfg->ntenants; i++) {
			printf("\n[%s %s]\n", s->name, cfg->tenants[i].name);
			print_keys(cfg, s, i);
		}
	}
}

/* --list-routes: the route table, one route a line, "METHOD PATTERN ROLE
 * SCOPE MODULE IDEMPOTENT" separated by tabs (ROLE none for a public
 * route, SCOPE the scope a scoped token needs, MODULE "-" for none,
 * IDEMPOTENT "idempotent" for a create that honours an Idempotency-Key,
 * else "-"), so that a test can
 * compare the API's documents with the routes the binary has. */
static void list_routes(FILE *f)
{
	static const char *const roles[] = {"none", "viewer", "editor", "admin"};
	const struct http_route *r;
	size_t i;

	for (i = 0; i < http_routes_count; i++) {
		r = &http_routes[i];
		fprintf(f, "%s\t%s\t%s\t%s\t%s\t%s\n", r->method, r->pattern,
		        r->min_role >= 0 && r->min_role <= STORE_ROLE_ADMIN ? roles[r->min_role]
		                                                            : "?",
		        store_scope_name(r->scope ? r->scope : STORE_SCOPE_ADMIN),
		        r->module ? r->module : "-",
		        r->flags & HTTP_ROUTE_IDEMPOTENT ? "idempotent" : "-");
	}
}

static void usage(FILE *f)
{
	fputs("usage: olivares-fcgi [--config FILE] [--check-config]\n"
	      "       olivares-fcgi --list-routes\n"
	      "\n"
	      "FastCGI application of olivares sandbox: a master that pre-forks a pool\n"
	      "of workers on a unix socket (or on the listening socket given on fd 0 by\n"
	      "spawn-fcgi), respawns a worker that dies, and stops cleanly on SIGTERM.\n"
	      "Applies missing schema migrations at start-up.\n"
	      "\n"
	      "  --config FILE   read FILE instead of $OLIVARES_CONF or "
	      "$OLIVARES_DATA/olivares.conf\n"
	      "  --check-config  load the configuration, print it as an INI file (every\n"
	      "                  default written out, passwords masked) and exit: 1 when\n"
	      "                  it does not load (no socket opened, no database reached)\n"
	      "  --list-routes   print the route table (method, pattern, minimum role,\n"
	      "                  scope, module, idempotent; tab-separated) and exit\n"
	      "  -h, --help      this help\n"
	      "\n"
	      "environment: OLIVARES_DATA (data dir, default ./var), OLIVARES_DSN,\n"
	      "OLIVARES_CONF. Logs go to stderr, one JSON object per line.\n",
	      f);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"config", required_argument, NULL, 'c'},
	    {"check-config", no_argument, NULL, 'k'},
	    {"list-routes", no_argument, NULL, 'l'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct http_config cfg;
	struct model_error merr;
	struct http_config_error err;
	int c, check = 0, created = 0, listen_fd, rc;
	char why[512];

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			if (setenv("OLIVARES_CONF", optarg, 1) != 0)
				return 1;
			break;
		case 'k':
			check = 1;
			break;
		case 'l':
			list_routes(stdout);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		usage(stderr);
		return 2;
	}
	memset(&cfg, 0, sizeof(cfg));
	if (http_config_load(&cfg, argv[0], &err)) {
		fprintf(stderr, "olivares-fcgi: configuration error: %s\n", err.message);
		return 1;
	}
	if (check) {
		print_config(&cfg);
		warn_config(&cfg);
		/* what start-up would refuse: the scorer adapter is built */
		return check_scorer(&cfg) ? 1 : 0;
	}

	if (FCGX_Init() != 0) {
		http_log_error("FCGX_Init failed");
		return 1;
	}
	if (inherited_listener()) {
		listen_fd = 0;
		http_log("using the listening socket on fd 0 (spawn-fcgi)");
	} else {
		listen_fd = open_listener(&cfg, &created);
		if (listen_fd < 0)
			return 1;
	}
	warn_config(&cfg);
	if (check_scorer(&cfg) || migrate(&cfg) || worker_dsn(&cfg)) {
		rc = 1;
		goto out;
	}
	/* not fatal: the server runs, its evidence routes answer 503 */
	if (http_evidence_key_load(cfg.data_dir, &evidence_key, why, sizeof why))
		http_log_warn("warning: no evidence key: %s", why);
	else
		http_log("evidence key %s", evidence_key.key_id);
	/* before the workers are forked: they share the preflight answers */
	memset(&merr, 0, sizeof(merr));
	if (http_preflight_cache_init(&merr)) {
		http_log_error("%s", merr.message);
		rc = 1;
		goto out;
	}
	/* before the workers are forked: they add to the same counters */
	if (http_metrics_init())
		http_log("warning: no shared metrics counters (%s); /metrics counts nothing",
		         strerror(errno));
	http_log("listening on %s with %d workers (runs are queued for olivares-executor)",
	         listen_fd == 0 ? "fd 0" : cfg.socket_path, cfg.workers);
	rc = master_loop(&cfg, listen_fd);
out:
	if (created)
		unlink(cfg.socket_path);
	http_log("stopped");
	return rc;
}
