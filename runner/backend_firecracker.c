/*
 * firecracker: a microVM per run, gated by preflight and never
 * faked. This version implements the gate only:
 *
 * preflight checks, in order, and names the first missing primitive:
 *   1. /dev/kvm is present and usable: it opens O_RDWR and answers
 *      KVM_GET_API_VERSION with KVM_API_VERSION (12);
 *   2. a firecracker binary in /usr/bin or /usr/local/bin (the runner has
 *      no PATH);
 *   3. the guest kernel and root filesystem at their fixed paths,
 *      FC_KERNEL and FC_ROOTFS (the spec carries no path: they are
 *      provisioned by the operator, not chosen per run).
 * run() executes no step and reports isolated false in every case: when
 * preflight fails runner/main.c never calls it, and when preflight passes
 * it still fails closed with "firecracker runs are not implemented in this
 * version", so no run is ever recorded as confined by a VM that did not
 * exist.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runner/backend.h"

/* Fixed locations of the guest kernel and root filesystem. */
#define FC_KERNEL "/var/lib/olivares/firecracker/vmlinux"
#define FC_ROOTFS "/var/lib/olivares/firecracker/rootfs.ext4"

static const char *const fc_paths[] = {"/usr/bin/firecracker", "/usr/local/bin/firecracker", NULL};

static int kvm_usable(struct runner_error *err)
{
	int fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	int v;

	if (fd < 0) {
		if (errno == ENOENT)
			runner_error_set(err, RUNNER_E_MISSING, "/dev/kvm not present");
		else
			runner_error_set(err, RUNNER_E_MISSING, "/dev/kvm not usable: %s",
			                 strerror(errno));
		return -1;
	}
	v = ioctl(fd, KVM_GET_API_VERSION, 0);
	close(fd);
	if (v != KVM_API_VERSION)
		return runner_error_set(err, RUNNER_E_MISSING,
		                        "/dev/kvm answers KVM API version %d, not %d", v,
		                        KVM_API_VERSION);
	return 0;
}

static int file_there(const char *path, const char *what, struct runner_error *err)
{
	struct stat st;

	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || access(path, R_OK) != 0)
		return runner_error_set(err, RUNNER_E_MISSING, "firecracker %s %s not found", what,
		                        path);
	return 0;
}

static int fc_preflight(struct runner_error *err)
{
	size_t i;

	if (kvm_usable(err) != 0)
		return -1;
	for (i = 0; fc_paths[i]; i++)
		if (access(fc_paths[i], X_OK) == 0)
			break;
	if (!fc_paths[i])
		return runner_error_set(err, RUNNER_E_MISSING,
		                        "firecracker binary not found (looked in /usr/bin, "
		                        "/usr/local/bin)");
	if (file_there(FC_KERNEL, "kernel", err) != 0 || file_there(FC_ROOTFS, "rootfs", err) != 0)
		return -1;
	return 0;
}

static int fc_run(const struct runner_spec *spec, FILE *out, struct runner_summary *sum)
{
	(void)spec;
	(void)out;
	sum->status = "failed";
	sum->isolated = 0;
	snprintf(sum->reason, sizeof(sum->reason),
	         "firecracker runs are not implemented in this version");
	return -1;
}

const struct runner_backend runner_backend_firecracker = {
    .name = "firecracker",
    .preflight = fc_preflight,
    .run = fc_run,
    .probe = NULL,
    .preflight_full = NULL,
};
