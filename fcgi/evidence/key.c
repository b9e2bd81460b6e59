/*
 * The server's evidence signing key in the data dir (key.h).
 */
#include "fcgi/evidence/key.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/alloc.h"
#include "model/evidence.h"

#define KEY_FILE "evidence-ed25519.pem"
#define PUB_FILE "evidence-ed25519.pub.pem"
/* a PEM Ed25519 key is about 120 bytes: anything much longer is not one */
#define KEY_MAX 16384

static int why_set(char *why, size_t n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, n, fmt, ap);
	va_end(ap);
	return -1;
}

/* Read the whole regular file fd (at most KEY_MAX bytes) into *out. */
static int read_fd(int fd, char **out)
{
	char *buf = model_xmalloc(KEY_MAX + 1);
	size_t len = 0;
	ssize_t r;

	for (;;) {
		r = read(fd, buf + len, KEY_MAX - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			free(buf);
			return -1;
		}
		if (r == 0)
			break;
		len += (size_t)r;
		if (len == KEY_MAX) {
			free(buf);
			errno = EFBIG;
			return -1;
		}
	}
	buf[len] = '\0';
	*out = buf;
	return 0;
}

static int write_all(int fd, const char *s)
{
	size_t len = strlen(s), off = 0;
	ssize_t w;

	while (off < len) {
		w = write(fd, s + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		off += (size_t)w;
	}
	return 0;
}

/* Write the public key through a temporary file and a rename, so a reader
 * never sees half of it. */
static int write_public(const char *dir, const char *pem, char *why, size_t n)
{
	char path[1024], tmp[1040];
	int fd;

	snprintf(path, sizeof path, "%s/%s", dir, PUB_FILE);
	snprintf(tmp, sizeof tmp, "%s.%ld", path, (long)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return why_set(why, n, "cannot write %s: %s", tmp, strerror(errno));
	if (write_all(fd, pem) || fsync(fd)) {
		close(fd);
		unlink(tmp);
		return why_set(why, n, "cannot write %s: %s", tmp, strerror(errno));
	}
	close(fd);
	if (rename(tmp, path)) {
		unlink(tmp);
		return why_set(why, n, "cannot rename %s: %s", tmp, strerror(errno));
	}
	return 0;
}

/* Make a new key as path, O_EXCL: 1 when another process made it first. */
static int make_private(const char *path, char *why, size_t n)
{
	char *priv = NULL, *pub = NULL;
	int fd, rc = -1;

	if (model_evidence_keygen(&priv, &pub))
		return why_set(why, n, "cannot make an Ed25519 key (OpenSSL)");
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 && errno == EEXIST) {
		rc = 1;
		goto out;
	}
	if (fd < 0) {
		why_set(why, n, "cannot create %s: %s", path, strerror(errno));
		goto out;
	}
	/* 0600 whatever the umask */
	if (fchmod(fd, 0600) || write_all(fd, priv) || fsync(fd)) {
		why_set(why, n, "cannot write %s: %s", path, strerror(errno));
		close(fd);
		unlink(path);
		goto out;
	}
	close(fd);
	rc = 0;
out:
	free(priv);
	free(pub);
	return rc;
}

int http_evidence_key_load(const char *data_dir, struct http_evidence_key *k, char *why, size_t n)
{
	char path[1024], pubpath[1024], *text = NULL, *onfile = NULL;
	struct stat sb;
	int fd, made = 0, rc;

	memset(k, 0, sizeof *k);
	if ((size_t)snprintf(path, sizeof path, "%s/%s", data_dir, KEY_FILE) >= sizeof path)
		return why_set(why, n, "data_dir is too long for the evidence key's path");
	snprintf(pubpath, sizeof pubpath, "%s/%s", data_dir, PUB_FILE);
	if (mkdir(data_dir, 0700) && errno != EEXIST)
		return why_set(why, n, "cannot create %s: %s", data_dir, strerror(errno));
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		rc = make_private(path, why, n);
		if (rc < 0)
			return -1;
		made = rc == 0;
		fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0)
		return why_set(why, n, "cannot open %s: %s", path, strerror(errno));
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode) || (sb.st_mode & 077)) {
		close(fd);
		return why_set(why, n,
		               "%s is not a regular file of mode 0600 (or stricter): refused; "
		               "fix it with chmod 600",
		               path);
	}
	if (read_fd(fd, &text)) {
		close(fd);
		return why_set(why, n, "cannot read %s: %s", path, strerror(errno));
	}
	close(fd);
	k->public_pem = model_evidence_public_pem(text);
	if (!k->public_pem || model_evidence_key_id(text, k->key_id)) {
		free(text);
		http_evidence_key_free(k);
		return why_set(why, n, "%s is not an Ed25519 private key (PEM)", path);
	}
	k->private_pem = text;
	fd = open(pubpath, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0) {
		if (read_fd(fd, &onfile))
			onfile = NULL;
		close(fd);
	}
	if ((made || !onfile || strcmp(onfile, k->public_pem) != 0) &&
	    write_public(data_dir, k->public_pem, why, n)) {
		free(onfile);
		http_evidence_key_free(k);
		return -1;
	}
	free(onfile);
	return 0;
}

void http_evidence_key_free(struct http_evidence_key *k)
{
	free(k->private_pem);
	free(k->public_pem);
	memset(k, 0, sizeof *k);
}
