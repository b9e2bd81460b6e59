#ifndef OLIVARES_FCGI_CONFIG_H
#define OLIVARES_FCGI_CONFIG_H
/**
 * Configuration shared by olivares-fcgi and olivares-admin (DESIGN.md §6, §8).
 *
 * Sources, later ones winning:
 *   1. built-in defaults (every key has one; no file is needed);
 *   2. the INI file: $OLIVARES_CONF if set, else $OLIVARES_DATA/olivares.conf
 *      if it exists (parsed with inih);
 *   3. environment: OLIVARES_DATA (data dir, default "./var"),
 *      OLIVARES_DSN (ODBC connection string).
 *
 * INI keys (section [server] unless noted):
 *   data_dir        default $OLIVARES_DATA or ./var (made absolute)
 *   dsn             default "Driver=SQLite3;Database=<data_dir>/olivares.db;
 *                   Timeout=5000;JournalMode=WAL;SyncPragma=NORMAL;FKSupport=1"
 *   socket          default <data_dir>/olivares.sock
 *   socket_mode     default 0600 (octal)
 *   workers         default 2 x the online CPUs (2..64): a worker waits
 *                   for nginx's close after each reply and for the runner
 *                   during a run, so one per core leaves cores idle
 *                   (measured: README "Performance"); 1..64
 *   backlog         default 64
 *   [runner] path   default: olivares-runner next to the running executable
 *   [runner] timeout_ms  wall-clock limit per run, default 10000
 *   [runner] backends    allowed backends, comma list, default "inproc-mock"
 *   [runner] default_backend  default "inproc-mock"
 *   [scorer] adapter     default "none"
 */
#include <stddef.h>

struct http_config {
	char data_dir[512];
	char dsn[1024];
	char socket_path[512];
	unsigned socket_mode;
	int workers;
	int backlog;
	char runner_path[512];
	int run_timeout_ms;
	char backends[256];
	char default_backend[64];
	char scorer[512];
};

/**
 * Fill *cfg from defaults, file and environment as above. argv0 is used to
 * locate olivares-runner beside the executable. Returns 0, or -1 with a
 * message in err (errlen bytes) for an unreadable file, an unknown key or a
 * bad value.
 */
int http_config_load(struct http_config *cfg, const char *argv0, char *err, size_t errlen);

#endif
