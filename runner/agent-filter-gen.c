/*
 * agent-filter-gen: writes, at build time, the seccomp program of the
 * namespaces backend's agent (runner/jail.c) as a C array, on stdout.
 *
 * The rules are here, compiled by libseccomp (seccomp_export_bpf) when the
 * runner is built, not when a jail starts: compiling them cost every run
 * about 0.15 ms of CPU on the jail's critical path, for a program that is
 * the same every time. The program is loaded the way seccomp_load() would
 * load this context (after PR_SET_NO_NEW_PRIVS, no filter flag; jail.c).
 *
 * What the agent is refused, with EPERM: calls that reach the kernel's
 * global state, other namespaces or other processes. Everything else is
 * allowed: the jail's namespaces, rlimits and empty capability set bound
 * it. The new mount API is refused too, or "mount refused" would be a
 * half-truth, and so is mknod() of a device node (mknod_rules). clone()
 * with any namespace flag is refused; clone3() gets ENOSYS (its flags
 * are in memory, out of a filter's reach) so that libc falls back to
 * clone(). A foreign architecture kills the process.
 *
 * Memory that no rlimit bounds gets ENOSYS (a program that can do without
 * falls back): a memfd (memfd_secret's too) or a System V segment,
 * message queue or semaphore set holds memory that is in no process's
 * address space, so RLIMIT_AS times RLIMIT_NPROC would bound nothing (an
 * agent held 4 GiB in memfds under memory_mb 32, 3 GiB through one
 * memfd_secret, 1.1 GiB of kernel memory in semaphore sets); vmsplice()
 * of one byte keeps a whole 2 MiB huge page in a pipe after it is
 * unmapped (512 MiB in one pipe). Socket buffers stay at the kernel's
 * default size: setsockopt(SOL_SOCKET, SO_SNDBUF or SO_RCVBUF) gets EPERM
 * (4 MiB a buffer otherwise: 470 MiB in 30 pairs), and so do pipes:
 * fcntl(F_SETPIPE_SZ) gets EPERM (25 MiB held in 25 pipes otherwise). io_uring gets ENOSYS too: its
 * operations (IORING_OP_SOCKET, IORING_OP_OPENAT, ...) are system calls
 * this filter never sees.
 *
 * Sockets: socket() only for the families a network namespace confines
 * (AF_INET, AF_INET6) and AF_NETLINK (the namespace's own routing tables;
 * libc's interface listing); anything else is EAFNOSUPPORT. AF_UNIX is
 * refused because a unix socket on a path reaches the host process that
 * listens there: a read-only bind does not stop a connect(), and a bound
 * /run would hand the agent the host's D-Bus or container runtime. AF_VSOCK
 * is refused because no network namespace confines it: it reaches the
 * hypervisor and every vsock service of this VM. socketpair() stays for
 * AF_UNIX stream and seqpacket pairs (connected for good); a datagram (or
 * SOCK_RAW, which AF_UNIX makes a datagram) pair could sendto() a path.
 *
 * Rules are looked up as a binary tree (SCMP_FLTATR_CTL_OPTIMIZE 2): the
 * kernel runs the program once per system call number when it attaches
 * it (its per-call cache), so a shallower program attaches faster.
 *
 * Exit status 0, or 1 with a message on stderr.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/alloc.h"

static const int agent_refused[] = {
    SCMP_SYS(mount),
    SCMP_SYS(umount2),
    SCMP_SYS(pivot_root),
    SCMP_SYS(chroot),
    SCMP_SYS(fsopen),
    SCMP_SYS(fsconfig),
    SCMP_SYS(fsmount),
    SCMP_SYS(fspick),
    SCMP_SYS(move_mount),
    SCMP_SYS(open_tree),
    SCMP_SYS(mount_setattr),
    SCMP_SYS(ptrace),
    SCMP_SYS(process_vm_readv),
    SCMP_SYS(process_vm_writev),
    SCMP_SYS(kexec_load),
    SCMP_SYS(kexec_file_load),
    SCMP_SYS(bpf),
    SCMP_SYS(keyctl),
    SCMP_SYS(add_key),
    SCMP_SYS(request_key),
    SCMP_SYS(unshare),
    SCMP_SYS(setns),
    SCMP_SYS(init_module),
    SCMP_SYS(finit_module),
    SCMP_SYS(delete_module),
    SCMP_SYS(swapon),
    SCMP_SYS(swapoff),
    SCMP_SYS(reboot),
    SCMP_SYS(perf_event_open),
    SCMP_SYS(userfaultfd),
    SCMP_SYS(open_by_handle_at),
    SCMP_SYS(name_to_handle_at),
    SCMP_SYS(acct),
    SCMP_SYS(quotactl),
    SCMP_SYS(lookup_dcookie),
    SCMP_SYS(iopl),
    SCMP_SYS(ioperm),
    SCMP_SYS(settimeofday),
    SCMP_SYS(clock_settime),
    SCMP_SYS(clock_adjtime),
    SCMP_SYS(adjtimex),
    SCMP_SYS(pidfd_getfd),
    SCMP_SYS(kcmp),
};

/* ENOSYS: memory out of every rlimit's reach, and io_uring (above). */
static const int agent_nosys[] = {
    SCMP_SYS(clone3),         SCMP_SYS(memfd_create),
    SCMP_SYS(memfd_secret),   SCMP_SYS(shmget),
    SCMP_SYS(msgget),         SCMP_SYS(semget),
    SCMP_SYS(vmsplice),       SCMP_SYS(io_uring_setup),
    SCMP_SYS(io_uring_enter), SCMP_SYS(io_uring_register),
};

/* The socket families socket() may create (above). */
static const int socket_families[] = {AF_INET, AF_INET6, AF_NETLINK};

/* clone() flags that would create a namespace: refused one by one through
 * an argument filter (clone's flags are a plain register). */
static const unsigned long ns_flags[] = {
    CLONE_NEWUSER, CLONE_NEWNS,  CLONE_NEWPID,    CLONE_NEWNET,
    CLONE_NEWIPC,  CLONE_NEWUTS, CLONE_NEWCGROUP, CLONE_NEWTIME,
};

/* Is af one of socket_families? */
static int family_allowed(int af)
{
	size_t i;

	for (i = 0; i < sizeof(socket_families) / sizeof(socket_families[0]); i++)
		if (socket_families[i] == af)
			return 1;
	return 0;
}

/* socket() outside socket_families, socketpair() other than an AF_UNIX
 * stream or seqpacket pair: EAFNOSUPPORT. The type's low 4 bits are the
 * kind (SOCK_TYPE_MASK); the rest are SOCK_NONBLOCK and SOCK_CLOEXEC. */
static int socket_rules(scmp_filter_ctx ctx)
{
	const scmp_datum_t type_mask = 0xf;
	int af, type;

	for (af = 0; af < AF_MAX; af++)
		if (!family_allowed(af) &&
		    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 1,
		                     SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)af)) != 0)
			return -1;
	if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 1,
	                     SCMP_A0(SCMP_CMP_GE, (scmp_datum_t)AF_MAX)) != 0 ||
	    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socketpair), 1,
	                     SCMP_A0(SCMP_CMP_NE, (scmp_datum_t)AF_UNIX)) != 0)
		return -1;
	/* pipes stay at their default size too (F_SETPIPE_SZ grows one to 1
	 * MiB; a host uid's pipes share 64 MiB, and every jail has the same
	 * host uid): fcntl's cmd is an int, compared on its 32 bits */
	if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(fcntl), 1,
	                     SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffff, (scmp_datum_t)F_SETPIPE_SZ)) !=
	    0)
		return -1;
	/* level and optname are ints: the kernel ignores the upper 32 bits
	 * of their registers, so the comparison does too */
	if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(setsockopt), 2,
	                     SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffff, (scmp_datum_t)SOL_SOCKET),
	                     SCMP_A2(SCMP_CMP_MASKED_EQ, 0xffffffff, (scmp_datum_t)SO_SNDBUF)) !=
	        0 ||
	    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(setsockopt), 2,
	                     SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffff, (scmp_datum_t)SOL_SOCKET),
	                     SCMP_A2(SCMP_CMP_MASKED_EQ, 0xffffffff, (scmp_datum_t)SO_RCVBUF)) != 0)
		return -1;
	for (type = 0; type <= (int)type_mask; type++)
		if (type != SOCK_STREAM && type != SOCK_SEQPACKET &&
		    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socketpair), 1,
		                     SCMP_A1(SCMP_CMP_MASKED_EQ, type_mask, (scmp_datum_t)type)) !=
		        0)
			return -1;
	return 0;
}

/* mknod() and mknodat() of a character or block device: EPERM. The
 * kernel refuses it already (it wants CAP_MKNOD in the host's user
 * namespace), and the jail's only mounts that open a device are the
 * read-only binds of its /dev (runner/jail.c); refused here too, so that
 * no later mount could hold a device node the agent made. A FIFO, socket
 * or regular file stays allowed (mode is an unsigned int: the type bits
 * are compared on its 32 bits). */
static int mknod_rules(scmp_filter_ctx ctx)
{
	static const scmp_datum_t types[] = {S_IFCHR, S_IFBLK};
	size_t i;

	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		if (SCMP_SYS(mknod) >= 0 &&
		    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(mknod), 1,
		                     SCMP_A1(SCMP_CMP_MASKED_EQ, S_IFMT, types[i])) != 0)
			return -1;
		if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(mknodat), 1,
		                     SCMP_A2(SCMP_CMP_MASKED_EQ, S_IFMT, types[i])) != 0)
			return -1;
	}
	return 0;
}

static int build(scmp_filter_ctx ctx)
{
	size_t i;

	if (seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS) != 0 ||
	    seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2) != 0)
		return -1;
		/* A call libseccomp does not know here would be left out of the
		 * filter, and allowed: on x86_64, where every listed call exists, that
		 * fails the build (an older libseccomp) rather than weaken the jail. */
#if defined(__x86_64__)
	for (i = 0; i < sizeof(agent_refused) / sizeof(agent_refused[0]); i++)
		if (agent_refused[i] < 0)
			return -1;
	for (i = 0; i < sizeof(agent_nosys) / sizeof(agent_nosys[0]); i++)
		if (agent_nosys[i] < 0)
			return -1;
#endif
	for (i = 0; i < sizeof(agent_refused) / sizeof(agent_refused[0]); i++)
		if (agent_refused[i] >= 0 &&
		    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), agent_refused[i], 0) != 0)
			return -1;
	for (i = 0; i < sizeof(ns_flags) / sizeof(ns_flags[0]); i++)
		if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
		                     SCMP_A0(SCMP_CMP_MASKED_EQ, ns_flags[i], ns_flags[i])) != 0)
			return -1;
	for (i = 0; i < sizeof(agent_nosys) / sizeof(agent_nosys[0]); i++)
		if (agent_nosys[i] >= 0 &&
		    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), agent_nosys[i], 0) != 0)
			return -1;
	if (mknod_rules(ctx) != 0)
		return -1;
	return socket_rules(ctx);
}

int main(void)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	const struct scmp_version *v = seccomp_version();
	struct sock_filter *prog = NULL;
	struct stat st;
	size_t i, n = 0;
	int fd = -1;
	int rc = 1;

	/* libseccomp 2.5 exports to a descriptor only. */
	if (!ctx || build(ctx) != 0) {
		fprintf(stderr, "agent-filter-gen: cannot build the filter\n");
		goto out;
	}
	fd = memfd_create("agent-filter", MFD_CLOEXEC);
	if (fd < 0 || seccomp_export_bpf(ctx, fd) != 0 || fstat(fd, &st) != 0 || st.st_size <= 0 ||
	    st.st_size % (off_t)sizeof(*prog) != 0 ||
	    st.st_size / (off_t)sizeof(*prog) > BPF_MAXINSNS) {
		fprintf(stderr, "agent-filter-gen: cannot export the filter\n");
		goto out;
	}
	n = (size_t)st.st_size / sizeof(*prog);
	prog = model_xmalloc((size_t)st.st_size);
	if (pread(fd, prog, (size_t)st.st_size, 0) != (ssize_t)st.st_size) {
		fprintf(stderr, "agent-filter-gen: cannot read the filter back\n");
		goto out;
	}
	printf("/* Generated by runner/agent-filter-gen.c at build time (libseccomp %u.%u.%u):\n"
	       " * the seccomp program of the namespaces backend's agent. Do not edit. */\n"
	       "static const struct sock_filter agent_filter_insns[%zu] = {\n",
	       v ? v->major : 0, v ? v->minor : 0, v ? v->micro : 0, n);
	for (i = 0; i < n; i++)
		printf("\t{0x%04x, %u, %u, 0x%08x},\n", prog[i].code, prog[i].jt, prog[i].jf,
		       prog[i].k);
	printf("};\n");
	rc = fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
out:
	free(prog);
	if (fd >= 0)
		close(fd);
	seccomp_release(ctx);
	return rc;
}
