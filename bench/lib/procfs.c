/*
 * What /proc says about the daemon and the machine: memory, CPU, system calls, sleeps, load.
 * A process that is gone reads as zero (or -1 for CPU), never as an error: the figures are
 * context for a run, and a run's correctness never depends on them.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "benchlib.h"

/* VmRSS and VmHWM (KiB) of one process; 0 when unknown. */
void
bench_mem(pid_t pid, long *rss, long *hwm)
{
	char path[64], line[256];
	FILE *f;

	*rss = *hwm = 0;
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "re")) == NULL)
		return;
	while (fgets(line, sizeof line, f) != NULL) {
		if (sscanf(line, "VmRSS: %ld", rss) == 1 && *hwm != 0)
			break;
		sscanf(line, "VmHWM: %ld", hwm);
	}
	fclose(f);
}

int
bench_rollup(pid_t pid, struct bench_rollup *r)
{
	char path[64], line[256];
	long kb, clean = 0, dirty = 0, sclean = 0, sdirty = 0;
	FILE *f;

	memset(r, 0, sizeof *r);
	snprintf(path, sizeof path, "/proc/%d/smaps_rollup", (int)pid);
	if ((f = fopen(path, "re")) == NULL)
		return -1;
	while (fgets(line, sizeof line, f) != NULL) {
		if (sscanf(line, "Rss: %ld", &kb) == 1)
			r->rss = kb;
		else if (sscanf(line, "Pss: %ld", &kb) == 1)
			r->pss = kb;
		else if (sscanf(line, "Anonymous: %ld", &kb) == 1)
			r->anon = kb;
		else if (sscanf(line, "Private_Clean: %ld", &kb) == 1)
			clean = kb;
		else if (sscanf(line, "Private_Dirty: %ld", &kb) == 1)
			dirty = kb;
		else if (sscanf(line, "Shared_Clean: %ld", &kb) == 1)
			sclean = kb;
		else if (sscanf(line, "Shared_Dirty: %ld", &kb) == 1)
			sdirty = kb;
	}
	fclose(f);
	r->priv = clean + dirty;
	r->shared = sclean + sdirty;
	return r->rss > 0 ? 0 : -1;
}

/*
 * RSS (KiB) of a process's file mappings, summed over the files whose path is not a line of
 * `before` (NULL: every file); with paths, the files are listed there, one per line, each once.
 * Taken at idle and again later, it says what the libraries loaded in between cost.
 */
long
bench_rss_files(pid_t pid, const char *before, char **paths)
{
	char path[64], line[512], cur[400] = "";
	size_t cap = 0, len = 0;
	long sum = 0, kb;
	int counted = 0;
	FILE *f;

	if (paths != NULL)
		*paths = NULL;
	snprintf(path, sizeof path, "/proc/%d/smaps", (int)pid);
	if ((f = fopen(path, "re")) == NULL)
		return 0;
	while (fgets(line, sizeof line, f) != NULL) {
		char file[400];

		if (sscanf(line, "%*x-%*x %*s %*s %*s %*s %399s", file) == 1) {
			size_t n = strlen(file);
			const char *at = before != NULL ? strstr(before, file) : NULL;

			/* a new mapping: a file, and not one seen before (a whole line of it) */
			counted = file[0] == '/' &&
				!(at != NULL && (at == before || at[-1] == '\n') && at[n] == '\n');
			if (file[0] == '/' && paths != NULL && strcmp(file, cur) != 0 &&
				(*paths == NULL || !strstr(*paths, file))) {
				if (len + n + 2 > cap) {
					cap = (len + n + 2) * 2;
					*paths = realloc(*paths, cap);
				}
				memcpy(*paths + len, file, n);
				len += n;
				(*paths)[len++] = '\n';
				(*paths)[len] = '\0';
			}
			snprintf(cur, sizeof cur, "%s", file);
			continue;
		}
		if (counted && sscanf(line, "Rss: %ld", &kb) == 1)
			sum += kb;
	}
	fclose(f);
	return sum;
}

/* Call fn with /proc/PID/task/TID/NAME, open for reading, for each thread of a process. */
static void
bench_tasks(pid_t pid, const char *name, void (*fn)(FILE *, void *), void *arg)
{
	char path[96];
	struct dirent *de;
	DIR *dir;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	if ((dir = opendir(path)) == NULL)
		return;
	while ((de = readdir(dir)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "/proc/%d/task/%.20s/%s", (int)pid, de->d_name, name);
		if ((f = fopen(path, "re")) == NULL)
			continue;
		fn(f, arg);
		fclose(f);
	}
	closedir(dir);
}

/* What bench_mem_tree adds up. */
struct bench_tree {
	long *rss, *hwm;
	int *nproc;
};

/* bench_tasks callback: add the processes listed in a thread's children file. */
static void
bench_tree_children(FILE *f, void *arg)
{
	struct bench_tree *t = arg;
	char buf[4096], *s, *e;
	size_t n;
	long child;

	n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = '\0';
	for (s = buf; (child = strtol(s, &e, 10)) > 0 && e != s; s = e)
		bench_mem_tree(child, t->rss, t->hwm, t->nproc);
}

/* Add VmRSS and VmHWM (KiB) of a process and its descendants; counts the processes. */
void
bench_mem_tree(pid_t pid, long *rss, long *hwm, int *nproc)
{
	struct bench_tree t = {rss, hwm, nproc};
	long r, h;

	bench_mem(pid, &r, &h);
	*rss += r;
	*hwm += h;
	(*nproc)++;
	bench_tasks(pid, "children", bench_tree_children, &t);
}

/* CPU seconds of a process (user + system) and of its reaped children; -1 when unknown. */
void
bench_cpu(pid_t pid, double *self, double *children)
{
	char path[64], buf[1024], *s;
	unsigned long long ut, st, cut, cst;
	double hz = (double)sysconf(_SC_CLK_TCK);
	FILE *f;
	size_t n;

	*self = *children = -1;
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "re")) == NULL)
		return;
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* after "pid (comm) ": utime, stime, cutime, cstime are fields 14 to 17 */
	if ((s = strrchr(buf, ')')) == NULL ||
		sscanf(s + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu",
			&ut, &st, &cut, &cst) != 4)
		return;
	*self = (double)(ut + st) / hz;
	*children = (double)(cut + cst) / hz;
}

/* Times the main thread of a process has gone to sleep (voluntary context switches). */
long long
bench_sleeps(pid_t pid)
{
	char path[64], line[256];
	long long v = 0;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "re")) == NULL)
		return 0;
	while (fgets(line, sizeof line, f) != NULL)
		if (sscanf(line, "voluntary_ctxt_switches: %lld", &v) == 1)
			break;
	fclose(f);
	return v;
}

/* bench_tasks callback: add a thread's syscr and syscw to counts[0] and counts[1]. */
static void
bench_io_task(FILE *f, void *arg)
{
	long long *counts = arg, r = 0, w = 0;
	char line[128];

	while (fgets(line, sizeof line, f) != NULL) {
		sscanf(line, "syscr: %lld", &r);
		sscanf(line, "syscw: %lld", &w);
	}
	counts[0] += r;
	counts[1] += w;
}

/*
 * read(2)- and write(2)-family system calls a process's live threads have made so far: the
 * sum of /proc/PID/task/TID/io. /proc/PID/io would also add the children it has reaped.
 */
void
bench_io(pid_t pid, long long *reads, long long *writes)
{
	long long counts[2] = {0, 0};

	bench_tasks(pid, "io", bench_io_task, counts);
	*reads = counts[0];
	*writes = counts[1];
}

/* Busy and total CPU time of the whole machine so far (jiffies, all CPUs). */
void
bench_stat(unsigned long long *busy, unsigned long long *total)
{
	unsigned long long v[10] = {0};
	FILE *f = fopen("/proc/stat", "re");

	*busy = *total = 0;
	if (f == NULL)
		return;
	if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
		    &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]) >= 8) {
		for (int i = 0; i < 8; i++) /* guest time is already in user */
			*total += v[i];
		*busy = *total - v[3] - v[4]; /* minus idle and iowait */
	}
	fclose(f);
}

/* The share of the machine's CPU time that was busy since (busy0, total0), in %. */
double
bench_busy(unsigned long long busy0, unsigned long long total0)
{
	unsigned long long busy, total;

	bench_stat(&busy, &total);
	return total > total0 ? 100.0 * (double)(busy - busy0) / (double)(total - total0) : -1;
}

/* The 1, 5 and 15 minute load averages, as text. */
void
bench_load(char *buf, size_t len)
{
	FILE *f = fopen("/proc/loadavg", "re");
	double a = -1, b = -1, c = -1;

	if (f != NULL) {
		if (fscanf(f, "%lf %lf %lf", &a, &b, &c) != 3)
			a = b = c = -1;
		fclose(f);
	}
	snprintf(buf, len, "%.2f %.2f %.2f", a, b, c);
}

/*
 * Sample a process's memory at most every BENCH_SAMPLE seconds (force: now) and keep the
 * largest VmRSS or VmHWM seen: VmHWM alone can miss peaks, the kernel refreshes it lazily.
 */
void
bench_peak_sample(struct bench_peak *pk, pid_t pid, double now, int force)
{
	long rss = 0, hwm = 0;
	int nproc = 0;

	if (!force && now - pk->sampled < BENCH_SAMPLE)
		return;
	pk->sampled = now;
	if (pk->tree)
		bench_mem_tree(pid, &rss, &hwm, &nproc);
	else
		bench_mem(pid, &rss, &hwm);
	if (rss > pk->kb)
		pk->kb = rss;
	if (hwm > pk->kb)
		pk->kb = hwm;
}
