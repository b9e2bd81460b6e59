/*
 * The namespace jail's checks from outside (runner/jail.h): what the
 * runner reads of the agent through /proc before it sends the first step
 * (its namespaces, root, seccomp mode, no_new_privs, capabilities, uid and
 * mounts), and the runner's own namespaces it compares them with.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "runner/jail_internal.h"

/* The namespace kinds of the jail, as named under /proc/PID/ns. */
static const char *const ns_names[] = {"user", "pid", "mnt", "net", "ipc", "uts", "cgroup"};
#define NS_KINDS (sizeof(ns_names) / sizeof(ns_names[0]))

/* The runner's own namespace i ("net:[4026531833]"), read once per
 * process (the runner never changes namespace), or once per fork server
 * (runner_jail_warm: its forks are in its namespaces); "" if unreadable,
 * and then read again at the next call. */
static const char *own_ns(size_t i)
{
	static char ids[NS_KINDS][64];
	static int done[NS_KINDS];
	char path[64];
	ssize_t len;

	if (!done[i]) {
		snprintf(path, sizeof(path), "/proc/self/ns/%s", ns_names[i]);
		len = readlink(path, ids[i], sizeof(ids[i]) - 1);
		ids[i][len > 0 ? len : 0] = '\0';
		done[i] = len > 0;
	}
	return ids[i];
}

void runner_jail_warm(void)
{
	size_t i;

	for (i = 0; i < NS_KINDS; i++)
		own_ns(i);
	seccomp_api_get();
}

int jail_missing_ns_kind(struct runner_error *err)
{
	size_t i;

	for (i = 0; i < NS_KINDS; i++) {
		if (!own_ns(i)[0])
			return runner_error_set(err, RUNNER_E_MISSING,
			                        "%s namespaces unavailable in this kernel",
			                        ns_names[i]);
	}
	return 0;
}

/* Read "Key:\tvalue" of /proc/PID/status into val. Returns 0 or -1. */
static int status_field(const char *status, const char *key, char *val, size_t n)
{
	const char *p = status;
	size_t klen = strlen(key);
	size_t i;

	while (p && *p) {
		if (strncmp(p, key, klen) == 0 && p[klen] == ':') {
			p += klen + 1;
			while (*p == '\t' || *p == ' ')
				p++;
			for (i = 0; i + 1 < n && p[i] && p[i] != '\n'; i++)
				val[i] = p[i];
			val[i] = '\0';
			return 0;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -1;
}

static int verify_mounts(pid_t agent, struct runner_error *err);

/* What a failed look at the agent's /proc entries means, from its errno e:
 * RUNNER_E_GONE (ENOENT, ESRCH: the agent is exiting or has exited),
 * RUNNER_E_CLOSED (EACCES, EPERM: closed to this process), else
 * RUNNER_E_UNVERIFIED. */
static enum runner_err proc_err(int e)
{
	if (e == ENOENT || e == ESRCH)
		return RUNNER_E_GONE;
	if (e == EACCES || e == EPERM)
		return RUNNER_E_CLOSED;
	return RUNNER_E_UNVERIFIED;
}

/* (jail_internal.h) What the agent runs under, in the order checked;
 * the mounts last (verify_mounts). */
int jail_verify_agent(pid_t agent, const struct jail_report *built, uid_t host_uid,
                      struct runner_error *err)
{
	char path[64], theirs[64], status[4096], val[64], want[64];
	struct stat ra, rr;
	const char *mine;
	ssize_t len;
	size_t i;
	int fd, e;

	for (i = 0; i < NS_KINDS; i++) {
		mine = own_ns(i);
		snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)agent, ns_names[i]);
		len = readlink(path, theirs, sizeof(theirs) - 1);
		e = errno;
		theirs[len > 0 ? len : 0] = '\0';
		/* an exiting process has lost its namespaces already; one not
		 * dumpable may be closed to a runner that is not root */
		if (!mine[0] || !theirs[0] || strcmp(mine, theirs) == 0)
			return runner_error_set(err, len < 0 ? proc_err(e) : RUNNER_E_UNVERIFIED,
			                        "agent is not in a %s namespace of its own",
			                        ns_names[i]);
	}
	snprintf(path, sizeof(path), "/proc/%d/root", (int)agent);
	if (stat(path, &ra) != 0)
		return runner_error_set(err, proc_err(errno), "agent's root is not the jail's");
	if (stat("/proc/self/root", &rr) != 0 || (unsigned long long)ra.st_dev != built->root_dev ||
	    (unsigned long long)ra.st_ino != built->root_ino ||
	    (ra.st_dev == rr.st_dev && ra.st_ino == rr.st_ino))
		return runner_error_set(err, RUNNER_E_UNVERIFIED, "agent's root is not the jail's");
	snprintf(path, sizeof(path), "/proc/%d/status", (int)agent);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		return runner_error_set(
		    err, e == ENOENT || e == ESRCH ? RUNNER_E_GONE : RUNNER_E_UNVERIFIED,
		    "cannot read the agent's status: %s", jail_ename(e));
	}
	len = read(fd, status, sizeof(status) - 1);
	close(fd);
	status[len > 0 ? len : 0] = '\0';
	if (status_field(status, "Seccomp", val, sizeof(val)) != 0 || strcmp(val, "2") != 0)
		return runner_error_set(err, RUNNER_E_UNVERIFIED,
		                        "agent is not under a seccomp filter");
	if (status_field(status, "NoNewPrivs", val, sizeof(val)) != 0 || strcmp(val, "1") != 0)
		return runner_error_set(err, RUNNER_E_UNVERIFIED,
		                        "agent does not have no_new_privs");
	if (status_field(status, "CapEff", val, sizeof(val)) != 0 ||
	    strcmp(val, "0000000000000000") != 0 ||
	    status_field(status, "CapPrm", val, sizeof(val)) != 0 ||
	    strcmp(val, "0000000000000000") != 0 ||
	    status_field(status, "CapBnd", val, sizeof(val)) != 0 ||
	    strcmp(val, "0000000000000000") != 0)
		return runner_error_set(err, RUNNER_E_UNVERIFIED, "agent still holds capabilities");
	snprintf(want, sizeof(want), "%u\t%u\t%u\t%u", (unsigned)host_uid, (unsigned)host_uid,
	         (unsigned)host_uid, (unsigned)host_uid);
	if (status_field(status, "Uid", val, sizeof(val)) != 0 || strcmp(val, want) != 0)
		return runner_error_set(err, RUNNER_E_UNVERIFIED,
		                        "agent does not run as host uid %u", (unsigned)host_uid);
	return verify_mounts(agent, err);
}

/* Is word one of the comma-separated words of list? */
static int has_word(const char *list, const char *word)
{
	size_t len = strlen(word);
	const char *p = list;

	for (;;) {
		if (strncmp(p, word, len) == 0 && (p[len] == ',' || p[len] == '\0'))
			return 1;
		p = strchr(p, ',');
		if (!p)
			return 0;
		p++;
	}
}

/* Filesystems that show the host kernel's state (or hand out its
 * devices): in the jail only as its own /proc, the procfs of its pid
 * namespace that the builder mounts. */
static const char *const host_state_fs[] = {
    "proc",        "sysfs",  "cgroup",   "cgroup2",   "debugfs",  "tracefs",
    "securityfs",  "bpf",    "configfs", "pstore",    "efivarfs", "fusectl",
    "binfmt_misc", "mqueue", "devpts",   "hugetlbfs", NULL,
};

/*
 * A mount without nodev at mnt, from outside: accepted only when mnt is
 * exactly the path of one of jail_devs (index *d) not seen before (seen:
 * a bit per device), the mount is read-only, nosuid and noexec, and the
 * node at mnt in the agent's root (root: an O_PATH descriptor of
 * /proc/PID/root, opened on first use; resolved in it, no symlink
 * followed) is that character device, on the filesystem the mount line
 * names (majmin, its MAJ:MIN field). Returns 0, or -1 with *err (kinds as
 * jail_verify_agent's: RUNNER_E_GONE and RUNNER_E_CLOSED when /proc/PID/root
 * cannot be opened).
 */
static int verify_dev_mount(pid_t agent, int *root, unsigned *seen, const char *mnt,
                            const char *majmin, const char *opts, struct runner_error *err)
{
	struct open_how how;
	struct stat st;
	char path[64];
	unsigned int fs_major, fs_minor;
	size_t d;
	int fd, ok, e;

	for (d = 0; d < JAIL_NDEVS && strcmp(mnt, jail_devs[d].path) != 0; d++)
		;
	if (d == JAIL_NDEVS)
		return runner_error_set(err, RUNNER_E_UNVERIFIED,
		                        "a mount of the jail is writable, suid or dev: %.200s",
		                        mnt);
	if (!has_word(opts, "ro") || !has_word(opts, "nosuid") || !has_word(opts, "noexec"))
		return runner_error_set(err, RUNNER_E_UNVERIFIED,
		                        "a device mount of the jail is writable, suid or exec: %s",
		                        mnt);
	if (*seen & (1u << d))
		return runner_error_set(err, RUNNER_E_UNVERIFIED,
		                        "a device of the jail is mounted twice: %s", mnt);
	*seen |= 1u << d;
	if (*root < 0) {
		snprintf(path, sizeof(path), "/proc/%d/root", (int)agent);
		*root = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (*root < 0) {
			e = errno;
			return runner_error_set(err, proc_err(e),
			                        "cannot look at the jail's %s: %s", mnt,
			                        jail_ename(e));
		}
	}
	memset(&how, 0, sizeof(how));
	how.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC;
	how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
	fd = (int)syscall(SYS_openat2, *root, mnt + 1, &how, sizeof(how));
	ok = fd >= 0 && fstat(fd, &st) == 0 && sscanf(majmin, "%u:%u", &fs_major, &fs_minor) == 2 &&
	     S_ISCHR(st.st_mode) && major(st.st_rdev) == jail_devs[d].major &&
	     minor(st.st_rdev) == jail_devs[d].minor && major(st.st_dev) == fs_major &&
	     minor(st.st_dev) == fs_minor;
	if (fd >= 0)
		close(fd);
	if (!ok)
		return runner_error_set(err, RUNNER_E_UNVERIFIED,
		                        "the jail's %s is not the host's character device %u:%u",
		                        mnt, jail_devs[d].major, jail_devs[d].minor);
	return 0;
}

/*
 * The agent's mounts, from outside (/proc/PID/mountinfo): every one
 * read-only, nosuid and nodev but /tmp (a tmpfs: writable, nosuid,
 * nodev) and the devices of the jail's /dev (verify_dev_mount: not nodev,
 * at those exact paths only), and no filesystem of the host kernel's
 * state (host_state_fs) but the jail's /proc. What the builder made is
 * checked as it came out, whatever the binds held (a bind of a path that
 * is a symlink to /proc bound the host's procfs). Returns 0, or -1 with
 * *err naming the mount (kinds as jail_verify_agent's).
 */
static int verify_mounts(pid_t agent, struct runner_error *err)
{
	char path[64];
	char *line = NULL, *field[RUNNER_JAIL_MOUNTINFO_FIELDS], *save = NULL, *tok;
	const char *mnt, *opts, *fstype;
	size_t cap = 0, i, nf;
	unsigned devs_seen = 0;
	FILE *f;
	int seen = 0, rc = 0, e, root = -1;

	snprintf(path, sizeof(path), "/proc/%d/mountinfo", (int)agent);
	f = fopen(path, "re");
	if (!f) {
		e = errno;
		/* EINVAL: an exiting process has lost its namespaces */
		return runner_error_set(err, e == EINVAL ? RUNNER_E_GONE : proc_err(e),
		                        "cannot read the agent's mounts: %s", jail_ename(e));
	}
	/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [TAGS...] - FSTYPE SOURCE
	 * SUPEROPTIONS, split on spaces (a space in a path is written \040):
	 * whole fields, never cut at a width, so a long path cannot spill into
	 * the options read after it. */
	while (rc == 0 && getline(&line, &cap, f) > 0) {
		nf = 0;
		for (tok = strtok_r(line, " \n", &save); tok && nf < RUNNER_JAIL_MOUNTINFO_FIELDS;
		     tok = strtok_r(NULL, " \n", &save))
			field[nf++] = tok;
		for (i = 6; i < nf && strcmp(field[i], "-") != 0; i++)
			;
		if (nf < 7 || tok || i + 1 >= nf) {
			runner_error_set(err, RUNNER_E_UNVERIFIED,
			                 "cannot read the agent's mounts: a line is not a mount");
			rc = -1;
			break;
		}
		mnt = field[4];
		opts = field[5];
		fstype = field[i + 1];
		seen++;
		for (i = 0; host_state_fs[i] && rc == 0; i++)
			if (strcmp(fstype, host_state_fs[i]) == 0 &&
			    !(strcmp(fstype, "proc") == 0 && strcmp(mnt, "/proc") == 0)) {
				runner_error_set(
				    err, RUNNER_E_UNVERIFIED,
				    "a mount of the jail shows the host's kernel state: "
				    "%.200s (%.40s)",
				    mnt, fstype);
				rc = -1;
			}
		if (rc == 0 && strcmp(mnt, "/tmp") == 0 && strcmp(fstype, "tmpfs") != 0) {
			runner_error_set(err, RUNNER_E_UNVERIFIED,
			                 "the jail's /tmp is not its tmpfs (%.40s)", fstype);
			rc = -1;
		}
		if (rc == 0 && !has_word(opts, "nodev")) {
			rc = verify_dev_mount(agent, &root, &devs_seen, mnt, field[2], opts, err);
		} else if (rc == 0 && (!has_word(opts, "nosuid") ||
		                       (strcmp(mnt, "/tmp") != 0 && !has_word(opts, "ro")))) {
			runner_error_set(err, RUNNER_E_UNVERIFIED,
			                 "a mount of the jail is writable, suid or dev: %.200s",
			                 mnt);
			rc = -1;
		}
	}
	if (rc == 0 && (ferror(f) || seen == 0)) {
		runner_error_set(err, RUNNER_E_UNVERIFIED, "cannot read the agent's mounts");
		rc = -1;
	}
	if (root >= 0)
		close(root);
	free(line);
	fclose(f);
	return rc;
}
