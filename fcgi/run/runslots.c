/*
 * Run slots (fcgi/run/runslots.h): byte-range locks on one anonymous file.
 */
#include "fcgi/run/runslots.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int slots_fd = -1;
static int server_max;
static int tenant_max;

int http_runslots_init(int max_runs, int per_tenant, struct model_error *err)
{
	int fd;

	if (max_runs < 1 || per_tenant < 1 || per_tenant > max_runs)
		return model_error_set(err, MODEL_E_INVALID, NULL,
		                       "run slots: bad limits %d and %d", max_runs, per_tenant);
	fd = memfd_create("olivares-run-slots", MFD_CLOEXEC);
	if (fd < 0)
		return model_error_set(err, MODEL_E_INTERNAL, NULL,
		                       "run slots: memfd_create failed: %s", strerror(errno));
	if (slots_fd >= 0)
		close(slots_fd);
	slots_fd = fd;
	server_max = max_runs;
	tenant_max = per_tenant;
	return 0;
}

/* Lock (F_WRLCK) or unlock (F_UNLCK) the byte at, without waiting.
 * Returns 0, or -1 with errno (EAGAIN or EACCES: another process has it). */
static int lock_byte(long at, short type)
{
	struct flock fl;

	memset(&fl, 0, sizeof(fl));
	fl.l_type = type;
	fl.l_whence = SEEK_SET;
	fl.l_start = (off_t)at;
	fl.l_len = 1;
	return fcntl(slots_fd, F_SETLK, &fl);
}

/* The first free byte of [base, base + count) into *got: 0; 1 when all are
 * taken; -1 with errno when locking itself failed. */
static int take_one(long base, int count, long *got)
{
	int i;

	for (i = 0; i < count; i++) {
		if (lock_byte(base + i, F_WRLCK) == 0) {
			*got = base + i;
			return 0;
		}
		if (errno != EAGAIN && errno != EACCES)
			return -1;
	}
	return 1;
}

/* FNV-1a of the tenant id: its bucket. */
static long tenant_base(const char *tenant_id)
{
	uint64_t h = 14695981039346656037ULL;
	const unsigned char *p;

	for (p = (const unsigned char *)tenant_id; *p; p++) {
		h ^= *p;
		h *= 1099511628211ULL;
	}
	return server_max + (long)(h % RUNSLOT_TENANT_BUCKETS) * tenant_max;
}

static void lock_failed(void)
{
	static int said;

	if (!said)
		fprintf(stderr,
		        "olivares-fcgi[%d]: run slots: locking failed (%s); runs go "
		        "unbounded\n",
		        (int)getpid(), strerror(errno));
	said = 1;
}

int http_runslot_take(struct http_runslot *slot, const char *tenant_id, struct model_error *err)
{
	long tenant_byte = 0, server_byte = 0;
	int r;

	if (slots_fd < 0 || slot->held)
		return 0;
	r = take_one(tenant_base(tenant_id), tenant_max, &tenant_byte);
	if (r < 0) {
		lock_failed();
		return 0;
	}
	if (r > 0)
		return model_error_set(
		    err, MODEL_E_BUSY, NULL,
		    "this tenant has %d run%s on OS-level backends in progress "
		    "already ([runner] max_runs_per_tenant = %d): try again when "
		    "one has ended",
		    tenant_max, tenant_max == 1 ? "" : "s", tenant_max);
	r = take_one(0, server_max, &server_byte);
	if (r != 0) {
		lock_byte(tenant_byte, F_UNLCK);
		if (r < 0) {
			lock_failed();
			return 0;
		}
		return model_error_set(
		    err, MODEL_E_BUSY, NULL,
		    "%d run%s on OS-level backends %s in progress on this server "
		    "([runner] max_runs = %d): try again when one has ended",
		    server_max, server_max == 1 ? "" : "s", server_max == 1 ? "is" : "are",
		    server_max);
	}
	slot->held = 1;
	slot->server_byte = server_byte;
	slot->tenant_byte = tenant_byte;
	return 0;
}

void http_runslot_release(struct http_runslot *slot)
{
	if (!slot->held)
		return;
	if (slots_fd >= 0) {
		lock_byte(slot->tenant_byte, F_UNLCK);
		lock_byte(slot->server_byte, F_UNLCK);
	}
	slot->held = 0;
}
