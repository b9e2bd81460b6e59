/*
 * The pool's last preflight answers (fcgi/run/preflight_cache.h): one record
 * per backend in one anonymous file, each read and written under a
 * byte-range lock of its own.
 */
#include "fcgi/run/preflight_cache.h"
#include "fcgi/log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* Tries of a lock held by another worker, 1 ms apart. */
#define LOCK_TRIES 20

/* One backend's answer as stored, at_ms when its check started; 0: none. */
struct pf_record {
	long long at_ms;
	struct http_preflight pf;
};

static int cache_fd = -1;
/* this process's own answers, without http_preflight_cache_init */
static struct pf_record local[PREFLIGHT_CACHE_BACKENDS];

long long http_preflight_cache_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int http_preflight_cache_init(struct model_error *err)
{
	int fd = memfd_create("olivares-preflight-cache", MFD_CLOEXEC);

	if (fd < 0)
		return model_error_set(err, MODEL_E_INTERNAL, NULL,
		                       "preflight cache: memfd_create failed: %s", strerror(errno));
	/* zeros: every record empty */
	if (ftruncate(fd, (off_t)(sizeof(struct pf_record) * PREFLIGHT_CACHE_BACKENDS))) {
		model_error_set(err, MODEL_E_INTERNAL, NULL,
		                "preflight cache: ftruncate failed: %s", strerror(errno));
		close(fd);
		return -1;
	}
	if (cache_fd >= 0)
		close(cache_fd);
	cache_fd = fd;
	return 0;
}

/* Lock (F_RDLCK, F_WRLCK) or unlock (F_UNLCK) record i, trying LOCK_TRIES
 * times when another process holds it. Returns 0, 1 when it stayed held,
 * -1 with errno when locking itself failed. */
static int lock_record(size_t i, short type)
{
	struct flock fl;
	struct timespec ms = {0, 1000000};
	int t;

	memset(&fl, 0, sizeof(fl));
	fl.l_type = type;
	fl.l_whence = SEEK_SET;
	fl.l_start = (off_t)(i * sizeof(struct pf_record));
	fl.l_len = (off_t)sizeof(struct pf_record);
	for (t = 0; t < LOCK_TRIES; t++) {
		if (fcntl(cache_fd, F_SETLK, &fl) == 0)
			return 0;
		if (errno != EAGAIN && errno != EACCES)
			return -1;
		if (type == F_UNLCK)
			return -1;
		nanosleep(&ms, NULL);
	}
	return 1;
}

static void say_lock_failed(void)
{
	static int said;

	if (!said)
		olv_log(OLV_LOG_WARNING, "preflight cache: locking failed (%s); answers not shared",
		        strerror(errno));
	said = 1;
}

void http_preflight_cache_put(size_t i, const struct http_preflight *pf, long long started_ms)
{
	struct pf_record rec, cur;
	int rc;

	if (i >= PREFLIGHT_CACHE_BACKENDS || started_ms <= 0)
		return;
	memset(&rec, 0, sizeof(rec));
	rec.at_ms = started_ms;
	rec.pf = *pf;
	rec.pf.reason[sizeof(rec.pf.reason) - 1] = '\0';
	if (cache_fd < 0) {
		if (local[i].at_ms <= started_ms)
			local[i] = rec;
		return;
	}
	rc = lock_record(i, F_WRLCK);
	if (rc < 0)
		say_lock_failed();
	if (rc != 0)
		return;
	/* a newer check's answer, recorded while this one ran, stays */
	if (pread(cache_fd, &cur, sizeof(cur), (off_t)(i * sizeof(cur))) == (ssize_t)sizeof(cur) &&
	    cur.at_ms > started_ms)
		goto out;
	if (pwrite(cache_fd, &rec, sizeof(rec), (off_t)(i * sizeof(rec))) != (ssize_t)sizeof(rec))
		olv_log(OLV_LOG_WARNING, "preflight cache: write failed: %s", strerror(errno));
out:
	lock_record(i, F_UNLCK);
}

int http_preflight_cache_get(size_t i, struct http_preflight *pf, long long *at_ms)
{
	struct pf_record rec;
	ssize_t got;
	int rc;

	if (i >= PREFLIGHT_CACHE_BACKENDS)
		return 1;
	if (cache_fd < 0) {
		rec = local[i];
	} else {
		rc = lock_record(i, F_RDLCK);
		if (rc < 0)
			say_lock_failed();
		if (rc != 0)
			return 1;
		got = pread(cache_fd, &rec, sizeof(rec), (off_t)(i * sizeof(rec)));
		lock_record(i, F_UNLCK);
		if (got != (ssize_t)sizeof(rec))
			return 1;
	}
	if (rec.at_ms == 0)
		return 1;
	rec.pf.reason[sizeof(rec.pf.reason) - 1] = '\0';
	*pf = rec.pf;
	*at_ms = rec.at_ms;
	return 0;
}
