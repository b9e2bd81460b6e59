/*
 * Agent program files (agent_file.h): digest and probe.
 */
#include "fcgi/run/agent_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

int http_agent_sha256_file(const char *path, char hex[65], long long *size)
{
	unsigned char md[EVP_MAX_MD_SIZE], buf[65536];
	unsigned int mdlen = 0, i;
	EVP_MD_CTX *ctx = NULL;
	long long total = 0;
	ssize_t got;
	int fd, ret = -1, e = EIO;

	hex[0] = '\0';
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -1;
	ctx = EVP_MD_CTX_new();
	if (!ctx || !EVP_DigestInit_ex(ctx, EVP_sha256(), NULL))
		goto out;
	for (;;) {
		got = read(fd, buf, sizeof(buf));
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			e = errno;
			goto out;
		}
		if (got == 0)
			break;
		total += got;
		if (!EVP_DigestUpdate(ctx, buf, (size_t)got))
			goto out;
	}
	if (!EVP_DigestFinal_ex(ctx, md, &mdlen) || mdlen != 32)
		goto out;
	for (i = 0; i < mdlen; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
	if (size)
		*size = total;
	ret = 0;
out:
	EVP_MD_CTX_free(ctx);
	close(fd);
	if (ret)
		errno = e;
	return ret;
}

int http_agent_probe(void *ctx, const char *host_path, char *real, size_t n)
{
	struct stat sb;
	char *r;
	int ok;

	(void)ctx;
	r = realpath(host_path, NULL);
	if (!r)
		return 0;
	ok = stat(r, &sb) == 0 && S_ISREG(sb.st_mode) && (sb.st_mode & S_IXOTH) &&
	     (size_t)snprintf(real, n, "%s", r) < n;
	free(r);
	return ok;
}
