/*
 * benchlib: what every bench shares. Each .c file in bench/lib is linked into every bench.
 *
 *   timing   bench_now (monotonic), bench_self_cpu, bench_sleep
 *   stats    bench_sort, bench_pct (nearest rank), bench_median
 *   options  bench_begin: the command line (struct bench_target for the daemon under test:
 *            --bin, --arg, --verbose; a table of struct bench_opt for the rest) and a private
 *            CODEX_HOME, removed by bench_end (benchlib.c)
 *   daemon   struct bench_daemon: the binary fork/exec'd with stdin and stdout on non-blocking
 *            pipes, and its shutdown: stdin closed, stdout drained, the exit seen through a
 *            pidfd, SIGKILL after a timeout (daemon.c)
 *   /proc    memory (VmRSS, VmHWM, summed over a process tree), CPU, read/write calls, sleeps,
 *            the machine's busy share and load; struct bench_peak samples peak memory (procfs.c)
 *   report   figures recorded once or once per run (the median is shown, with [min-max]),
 *            printed as aligned text lines or as one JSON document; bench_fail (report.c)
 *
 * Rule kept by every bench: a correctness failure (bench_fail) sets the exit status to 1; a
 * missed performance goal is printed as MISS and does not.
 */
#ifndef BENCHLIB_H
#define BENCHLIB_H

#include <sys/types.h>

#include <stddef.h>

#include <jansson.h>

#define BENCH_SAMPLE 0.01 /* seconds between memory samples while a flow runs */

/* The daemon under test and how to start it. */
struct bench_target {
	const char *bin;
	char **argv; /* bin, the --arg values, NULL */
	size_t argc;
	const char *home;    /* its private CODEX_HOME, made by bench_begin */
	long long pipe_size; /* F_SETPIPE_SZ on its stdout pipe; 0: the system default */
	int verbose;	     /* pass its stderr through, else /dev/null */
};

/* A name accepted by --only and the part it selects; a list ends with a NULL name. */
struct bench_part {
	const char *name;
	unsigned bit;
};

/*
 * One option of a bench besides --bin, --arg, --verbose and --help; one pointer is set. After
 * parsing, every count and bytes value must be at least 1.
 */
struct bench_opt {
	const char *name;
	int *flag;	  /* a flag: set to 1 */
	long *count;	  /* a positive number, truncated */
	double *num;	  /* a positive number */
	long long *bytes; /* a byte count, K/M/G suffixes */
	long long *size;  /* the same, 0 allowed */
	unsigned *mask;	  /* names from parts, comma-separated (--only) */
	const struct bench_part *parts;
};

/* The daemon's process, our ends of its stdin and stdout, and its output not consumed yet. */
struct bench_daemon {
	pid_t pid;
	int pidfd; /* -1 without pidfd_open: EOF on stdout then stands for the exit */
	int in_fd;
	int out_fd;
	char *rbuf;
	size_t rlen, rcap;
};

/* The largest memory figure (KiB) seen while sampling a process every BENCH_SAMPLE seconds. */
struct bench_peak {
	long kb;
	double sampled; /* when it was last sampled */
	int tree;	/* sum VmRSS over the process and its descendants */
};

/* One figure over one or more runs; cmp is '<' (value <= goal), '>' (value >= goal) or 0. */
struct bench_fig {
	char *name;
	double *v;
	size_t nv;
	const char *unit;
	char cmp;
	double goal;
	char *note;
	int printed;
};

/* The figures of a bench, and how to print them. */
struct bench_report {
	struct bench_fig *figs;
	size_t n;
	int failed; /* a correctness failure: the exit status is 1 */
	int json;   /* print nothing until bench_report_json */
	int values; /* JSON: add each figure's runs as "values" */
	struct {
		int name, value, unit, goal;
	} width; /* text columns */
};

/* A mock the bench talks to: its process, the port it wrote, its folder. */
struct bench_mock {
	pid_t pid;
	int port;
	char dir[64];
};

/* timing and stats (benchlib.c) */
double bench_now(void);
double bench_self_cpu(void);
void bench_sleep(double s);
void bench_sort(double *v, size_t n);
double bench_pct(const double *v, size_t n, size_t pct);
double bench_median(double *v, size_t n);

/* options and the private CODEX_HOME (benchlib.c) */
int bench_begin(struct bench_target *t, int argc, char **argv, const struct bench_opt *opts,
	size_t nopts, const char *usage, char *home, int *status);
void bench_end(struct bench_target *t);
int bench_home_make(char *tmpl);
void bench_rmtree(const char *path);

/* the daemon over pipes (daemon.c) */
int bench_daemon_spawn(const struct bench_target *t, struct bench_daemon *d, size_t rcap);
double bench_daemon_close(struct bench_daemon *d, double timeout, int *status);

/* /proc (procfs.c) */
void bench_mem(pid_t pid, long *rss, long *hwm);
/*
 * RSS (KiB) of the file mappings whose path is not a line of before (NULL: all); paths (may
 * be NULL) gets the mapped files, one per line (heap).
 */
long bench_rss_files(pid_t pid, const char *before, char **paths);
/*
 * /proc/PID/smaps_rollup (KiB). anon: the process's own pages (heap, stacks, the libraries'
 * data it wrote to); the rest of rss is file pages, the binary's and libraries' code and
 * read-only data, shared with every process that maps the same files; shared: the pages
 * another process maps right now; priv: pages no other process maps now. 0 when read.
 */
struct bench_rollup {
	long rss, pss, anon, priv, shared;
};
int bench_rollup(pid_t pid, struct bench_rollup *r);
void bench_mem_tree(pid_t pid, long *rss, long *hwm, int *nproc);
void bench_cpu(pid_t pid, double *self, double *children);
long long bench_sleeps(pid_t pid);
void bench_io(pid_t pid, long long *reads, long long *writes);
void bench_stat(unsigned long long *busy, unsigned long long *total);
double bench_busy(unsigned long long busy0, unsigned long long total0);
void bench_load(char *buf, size_t len);
void bench_peak_sample(struct bench_peak *pk, pid_t pid, double now, int force);

/* figures (report.c) */
void bench_val(struct bench_report *rep, const char *name, double value, const char *unit, char cmp,
	double goal, const char *note);
void bench_fig(struct bench_report *rep, const char *name, double value, const char *unit, char cmp,
	double goal, const char *note);
double bench_fig_value(const struct bench_fig *f, double *lo, double *hi, int *ok);
double bench_median_of(const struct bench_report *rep, const char *name);
void bench_print(struct bench_report *rep);
void bench_report_json(const struct bench_report *rep, json_t *doc);
void bench_report_free(struct bench_report *rep);
void bench_fail(struct bench_report *rep, const char *part, const char *what, int r);

/*
 * Upstream's target beside ours: `upstream app-server` with ours's options, its sandbox
 * helper (a link named codex-linux-sandbox to it, in a new folder bindir made from tmpl) put
 * first on PATH; argv (3 slots) holds its arguments. 0, or -1 when upstream is NULL or the
 * folder cannot be made. The caller removes bindir when it is not empty.
 */
int bench_upstream(const struct bench_target *ours, const char *upstream, const char *tmpl,
	struct bench_target *up, char *argv[3], char bindir[64]);

/* mocks (mockproc.c) */
/* m's folder, made from the mkdtemp template tmpl (ending in XXXXXX); 0 or -1. */
int bench_mock_dir(struct bench_mock *m, const char *tmpl);
/* Run argv (PATH searched) quietly; 0 once it wrote its port (a number) to <m->dir>/port within
 * 5 s, else -1. */
int bench_mock_exec(struct bench_mock *m, char *const argv[]);
/* SIGTERM the mock, reap it, remove its folder. */
void bench_mock_stop(struct bench_mock *m);
/* `bin mock-model` on script (JSON text) in a folder from tmpl; 0 once it listens, else -1. */
int bench_mock_model(struct bench_mock *m, const char *bin, const char *tmpl, const char *script);
/* home's config.toml pointing the model at the mock on port (never ask, read-only, no
 * retries), and the workspace folder home/ws. */
void bench_mock_home(const char *home, int port);

#endif
