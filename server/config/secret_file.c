/* Atomic 0600 writes of the files that hold secrets (secret_file.h). */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "protocol/xmalloc.h"
#include "secret_file.h"

/* Write all of len bytes; 0 or -1 (errno set). */
static int
write_all(int fd, const char *p, size_t len)
{
	ssize_t n;

	while (len > 0) {
		if ((n = write(fd, p, len)) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int
secret_file_save(const char *dir, const char *name, const char *text, char **cause)
{
	char *path = xasprintf("%s/%s", dir, name);
	char *tmp = xasprintf("%s/.%s.XXXXXX", dir, name[0] == '.' ? name + 1 : name);
	int fd = -1, r = -1;

	if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
		*cause = xasprintf("%s: %s", dir, strerror(errno));
		goto out;
	}
	/* mkostemp creates 0600: the secret is never readable by others, not even briefly */
	if ((fd = mkostemp(tmp, O_CLOEXEC)) < 0) {
		*cause = xasprintf("%s: %s", tmp, strerror(errno));
		goto out;
	}
	if (fchmod(fd, 0600) != 0 || write_all(fd, text, strlen(text)) != 0 || fsync(fd) != 0) {
		*cause = xasprintf("%s: %s", tmp, strerror(errno));
		goto fail;
	}
	if (close(fd) != 0) {
		fd = -1;
		*cause = xasprintf("%s: %s", tmp, strerror(errno));
		goto fail;
	}
	fd = -1;
	if (rename(tmp, path) != 0) {
		*cause = xasprintf("%s: %s", path, strerror(errno));
		goto fail;
	}
	r = 0;
	goto out;
fail:
	if (fd >= 0)
		close(fd);
	unlink(tmp);
out:
	free(path);
	free(tmp);
	return r;
}
