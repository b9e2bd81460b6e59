/*
 * A descriptor handed over a unix socket (runner/fdpass.h).
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "runner/fdpass.h"

union fd_control {
	struct cmsghdr h;
	char buf[CMSG_SPACE(sizeof(int))];
};

/* msg: one byte (iov's) and room for one descriptor (ctl). */
static void fd_message(struct msghdr *msg, struct iovec *iov, union fd_control *ctl)
{
	memset(msg, 0, sizeof(*msg));
	memset(ctl, 0, sizeof(*ctl));
	msg->msg_iov = iov;
	msg->msg_iovlen = 1;
	msg->msg_control = ctl->buf;
	msg->msg_controllen = sizeof(ctl->buf);
}

int runner_fd_send(int sock, int fd)
{
	char byte = 'f';
	struct iovec iov = {.iov_base = &byte, .iov_len = 1};
	union fd_control ctl;
	struct msghdr msg;
	struct cmsghdr *c;
	ssize_t w;

	fd_message(&msg, &iov, &ctl);
	c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	do
		w = sendmsg(sock, &msg, MSG_NOSIGNAL);
	while (w < 0 && errno == EINTR);
	if (w == 1)
		return 0;
	if (w >= 0)
		errno = EIO;
	return -1;
}

int runner_fd_recv(int sock, int flags, int *fd)
{
	char byte;
	struct iovec iov = {.iov_base = &byte, .iov_len = 1};
	union fd_control ctl;
	struct msghdr msg;
	struct cmsghdr *c;
	ssize_t got;

	fd_message(&msg, &iov, &ctl);
	do
		got = recvmsg(sock, &msg, flags | MSG_CMSG_CLOEXEC);
	while (got < 0 && errno == EINTR);
	if (got <= 0)
		return got == 0 ? 0 : -1;
	c = CMSG_FIRSTHDR(&msg);
	if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
	    c->cmsg_len != CMSG_LEN(sizeof(int)) || (msg.msg_flags & MSG_CTRUNC)) {
		errno = EBADMSG;
		return -1;
	}
	memcpy(fd, CMSG_DATA(c), sizeof(int));
	return 1;
}
