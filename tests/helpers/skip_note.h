/*
 * A skipped check is never silent: skip_note() prints it and appends one line
 * "<what>\t<count>\t<why>" to $APP_SERVER_SKIP_LOG (written by scripts/reference.sh), which
 * tests/run-all.sh sums up after each suite. Used where the reference material that is
 * upstream's (its schema, its recorded rollouts) is absent on a bare clone.
 */
#ifndef SKIP_NOTE_H
#define SKIP_NOTE_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The reason scripts/reference.sh gave for env (e.g. "APP_SERVER_NO_REFERENCE_WHY"). */
static inline const char *
skip_note_why(const char *env, const char *fallback)
{
	const char *why = getenv(env);

	return why != NULL && *why != '\0' ? why : fallback;
}

/* Note `count` checks of kind `what` skipped because of `why`. */
static inline void
skip_note(const char *what, long count, const char *why)
{
	const char *log = getenv("APP_SERVER_SKIP_LOG");
	char line[1024];
	int n, fd;

	if (count <= 0)
		return;
	n = snprintf(line, sizeof line, "%s\t%ld\t%s\n", what, count, why);
	if (n < 0 || (size_t)n >= sizeof line)
		n = (int)sizeof line - 1, line[n - 1] = '\n';
	fprintf(stderr, "SKIPPED %ld %s: %s\n", count, what, why);
	if (log == NULL || *log == '\0')
		return;
	/* One write on an O_APPEND file: lines of concurrent tests never mix. */
	if ((fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644)) < 0)
		return;
	if (write(fd, line, (size_t)n) != n)
		fprintf(stderr, "skip_note: short write to %s\n", log);
	close(fd);
}

/*
 * Skip the running cmocka test case, saying why: every skipped case is noted, and
 * tests/run-all.sh fails a suite whose cmocka count of skipped cases exceeds its notes.
 */
#define skip_test(why)                                                                             \
	do {                                                                                       \
		skip_note(__func__, 1, (why));                                                     \
		skip();                                                                            \
	} while (0)

#endif
