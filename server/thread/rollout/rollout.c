/*
 * Rollout paths and timestamps (rollout.h). Only string work and mkdir: no file content here.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "rollout.h"
#include "protocol/xmalloc.h"
#include "thread/uuidv7.h"

/* Wall-clock milliseconds. */
int64_t
rollout_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* UTC with milliseconds, the form upstream writes. */
void
rollout_ts_format(int64_t ms, char out[ROLLOUT_TS_LEN + 1])
{
	time_t sec = (time_t)(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
	int frac = (int)(ms - (int64_t)sec * 1000);
	struct tm tm;

	char tmp[96];

	gmtime_r(&sec, &tm);
	snprintf(tmp, sizeof tmp, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
		tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, frac);
	memcpy(out, tmp, ROLLOUT_TS_LEN);
	out[ROLLOUT_TS_LEN] = '\0';
}

/* Read exactly n digits at *p into *v; 0 or -1. */
static int
rollout_digits(const char **p, int n, int *v)
{
	*v = 0;
	for (int i = 0; i < n; i++) {
		char c = (*p)[i];

		if (c < '0' || c > '9')
			return -1;
		*v = *v * 10 + (c - '0');
	}
	*p += n;
	return 0;
}

/* RFC 3339 with an optional fraction and a UTC or numeric offset. */
int
rollout_ts_parse(const char *s, int64_t *ms)
{
	int y, mo, d, h, mi, sec, frac = 0, fd = 0;
	const char *p = s;

	if (rollout_digits(&p, 4, &y) || *p++ != '-' || rollout_digits(&p, 2, &mo) || *p++ != '-' ||
		rollout_digits(&p, 2, &d) || (*p != 'T' && *p != 't' && *p != ' '))
		return -EINVAL;
	p++;
	if (rollout_digits(&p, 2, &h) || *p++ != ':' || rollout_digits(&p, 2, &mi) || *p++ != ':' ||
		rollout_digits(&p, 2, &sec))
		return -EINVAL;
	if (*p == '.') {
		p++;
		while (*p >= '0' && *p <= '9') {
			if (fd < 3) {
				frac = frac * 10 + (*p - '0');
				fd++;
			}
			p++;
		}
		for (; fd < 3; fd++)
			frac *= 10;
	}
	int off = 0;
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		int sign = *p++ == '-' ? -1 : 1, oh, om;

		if (rollout_digits(&p, 2, &oh) || *p++ != ':' || rollout_digits(&p, 2, &om))
			return -EINVAL;
		off = sign * (oh * 60 + om);
	} else {
		return -EINVAL;
	}
	if (*p != '\0' || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
		return -EINVAL;
	/*
	 * Days since the epoch of the proleptic Gregorian date (Howard Hinnant's
	 * days_from_civil): timegm's answer, without its locking and normalisation, for every
	 * record of a long history. A day past the month's end counts on, as timegm does.
	 */
	int64_t ya = mo <= 2 ? y - 1 : y, era = (ya >= 0 ? ya : ya - 399) / 400;
	int64_t yoe = ya - era * 400, mp = (mo + 9) % 12;
	int64_t doy = (153 * mp + 2) / 5 + d - 1, doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	int64_t days = era * 146097 + doe - 719468;

	*ms = ((days * 86400 + h * 3600 + mi * 60 + sec) - (int64_t)off * 60) * 1000 + frac;
	return 0;
}

/* sessions/YYYY/MM/DD/rollout-YYYY-MM-DDTHH-MM-SS-<id>.jsonl in local time, as upstream. */
char *
rollout_path_new(const char *home, const char *id, int64_t ms)
{
	time_t sec = (time_t)(ms / 1000);
	struct tm tm;

	localtime_r(&sec, &tm);
	return xasprintf("%s/%s/%04d/%02d/%02d/rollout-%04d-%02d-%02dT%02d-%02d-%02d-%s.jsonl",
		home, ROLLOUT_SESSIONS, tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
		tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, id);
}

/* The last path component. */
static const char *
rollout_base(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash != NULL ? slash + 1 : path;
}

/* archived_sessions/<same name>. */
char *
rollout_path_archived(const char *home, const char *path)
{
	return xasprintf("%s/%s/%s", home, ROLLOUT_ARCHIVED, rollout_base(path));
}

/* Back to the dated folder its name gives (the creation date, local time, as written). */
char *
rollout_path_unarchived(const char *home, const char *path)
{
	const char *b = rollout_base(path);

	if (strncmp(b, "rollout-", 8) != 0 || strlen(b) < 18 || b[12] != '-' || b[15] != '-')
		return xasprintf("%s/%s/%s", home, ROLLOUT_SESSIONS, b);
	return xasprintf(
		"%s/%s/%.4s/%.2s/%.2s/%s", home, ROLLOUT_SESSIONS, b + 8, b + 13, b + 16, b);
}

/*
 * rollout-<19-char stamp>-<uuid>.jsonl, or upstream's later segment of a thread
 * rollout-<stamp>-<thread uuid>_<rollout uuid>.jsonl (a revert's new file). which 0: the
 * thread's id; 1: the file's rollout id (the thread's for its first file).
 */
static int
rollout_name_part(const char *path, int which, char id[37])
{
	const char *b = rollout_base(path);
	size_t n = strlen(b);
	const char *u = b + n - 6 - UUID_STRLEN;
	char tmp[UUID_STRLEN + 1];

	if (n < 8 + UUID_STRLEN + 6 || strncmp(b, "rollout-", 8) != 0 ||
		strcmp(b + n - 6, ".jsonl") != 0)
		return -EINVAL;
	/* a segment: the thread's uuid stands before the '_' */
	if (which == 0 && u - b >= 8 + UUID_STRLEN + 1 && u[-1] == '_')
		u -= UUID_STRLEN + 1;
	memcpy(tmp, u, UUID_STRLEN);
	tmp[UUID_STRLEN] = '\0';
	if (uuidv7_check(tmp, NULL) != 0)
		return -EINVAL;
	uuidv7_canon(tmp, id);
	return 0;
}

int
rollout_name_id(const char *path, char id[37])
{
	return rollout_name_part(path, 0, id);
}

int
rollout_name_rollout_id(const char *path, char id[37])
{
	return rollout_name_part(path, 1, id);
}

/* mkdir -p of the parent directory. */
int
rollout_mkdirs(const char *path)
{
	char tmp[PATH_MAX];
	size_t n = strlen(path);

	if (n >= sizeof tmp)
		return -ENAMETOOLONG;
	memcpy(tmp, path, n + 1);
	char *last = strrchr(tmp, '/');
	if (last == NULL || last == tmp)
		return 0;
	*last = '\0';
	for (char *p = tmp + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0700) != 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(tmp, 0700) != 0 && errno != EEXIST)
		return -errno;
	return 0;
}
