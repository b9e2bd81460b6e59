/*
 * Stale leftovers of failed containment tests (tests/unit/sweep.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/unit/sweep.h"

int sweep_mkdtemp(char *path, size_t n, const char *dir, const char *prefix)
{
	int len = snprintf(path, n, "%s/%s%d-XXXXXX", dir, prefix, (int)getpid());

	if (len < 0 || (size_t)len >= n) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return mkdtemp(path) ? 0 : -1;
}

/* The pid in name (PREFIX PID "-" REST), or 0 when name has another
 * shape. */
static pid_t maker(const char *name, const char *prefix)
{
	size_t plen = strlen(prefix);
	const char *p;
	long pid = 0;

	if (strncmp(name, prefix, plen) != 0)
		return 0;
	for (p = name + plen; *p >= '0' && *p <= '9' && pid < 1L << 30; p++)
		pid = pid * 10 + (*p - '0');
	if (p == name + plen || *p != '-' || pid <= 0 || pid >= 1L << 30)
		return 0;
	return (pid_t)pid;
}

/* Is mnt (a mountinfo mount point, \040-style escapes as they are) path
 * or below it? */
static int at_or_below(const char *mnt, const char *path)
{
	size_t len = strlen(path);

	return strncmp(mnt, path, len) == 0 && (mnt[len] == '\0' || mnt[len] == '/');
}

/* Detach every mount at or below path, the last listed first (a mount is
 * listed after the one it sits on; a detached mount takes those on it
 * along). At most SWEEP_MOUNTS of them. Returns 0 or -1. */
#define SWEEP_MOUNTS 64
static int umount_below(const char *path)
{
	static char found[SWEEP_MOUNTS][512];
	char line[4096], mnt[4096];
	size_t n = 0, i;
	int rc = 0;
	FILE *f = fopen("/proc/self/mountinfo", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1 || !at_or_below(mnt, path))
			continue;
		if (n == SWEEP_MOUNTS || strlen(mnt) >= sizeof(found[0])) {
			rc = -1;
			break;
		}
		snprintf(found[n++], sizeof(found[0]), "%s", mnt);
	}
	fclose(f);
	for (i = n; rc == 0 && i > 0; i--)
		if (umount2(found[i - 1], MNT_DETACH) != 0 && errno != EINVAL && errno != ENOENT)
			rc = -1;
	return rc;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) == 0 || errno == ENOENT ? 0 : -1;
}

int sweep_stale(const char *dir, const char *prefix)
{
	char path[4096];
	struct dirent *e;
	struct stat st;
	DIR *d = opendir(dir);
	pid_t pid;
	int swept = 0, failed = 0;

	if (!d)
		return -1;
	for (e = readdir(d); e; e = readdir(d)) {
		pid = maker(e->d_name, prefix);
		if (pid <= 0 || kill(pid, 0) == 0 || errno != ESRCH)
			continue;
		/* Only what this user made (sweep_mkdtemp, a secret file): a
		 * directory or file of its own that no one else may write. dir
		 * is world-writable (/tmp, /var/tmp): anyone can name an entry
		 * so, and inside one of their own swap a directory for a
		 * symbolic link while nftw() walks it by path, which would then
		 * remove the files of the link's target with this process's
		 * rights (root's). */
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
		    st.st_uid != geteuid() || (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) ||
		    (st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= (int)sizeof(path) ||
		    umount_below(path) != 0 ||
		    nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT) != 0) {
			failed = 1;
			continue;
		}
		swept++;
	}
	closedir(d);
	return failed ? -1 : swept;
}
