/*
 * sandbox-bench: what the sandbox costs per command/exec, measured through the daemon
 * ($APP_SERVER_BIN, default build/app-server) over pipes as a client would.
 *
 *   sandbox-bench [--execs N]   for each policy, N execs of `true` one after another
 *                               (request written -> answer read; median and p90), then N
 *                               execs of this program with --stamp, which prints
 *                               CLOCK_MONOTONIC as it starts: request -> command running
 *                               is the setup, command running -> answer the teardown;
 *                               "sandbox" columns subtract dangerFullAccess's figures
 *   sandbox-bench --stamp       print CLOCK_MONOTONIC in ns and exit
 *
 * The clock is the machine's (no time namespace), so stamps from inside the sandbox compare
 * with the client's. Exit status 1 when an answer is missing or wrong.
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

/* The policies measured, by name. */
static const char *const policies[][2] = {
	{"dangerFullAccess", "{\"type\":\"dangerFullAccess\"}"},
	{"readOnly", "{\"type\":\"readOnly\"}"},
	{"readOnly+network", "{\"type\":\"readOnly\",\"networkAccess\":true}"},
	{"workspaceWrite", "{\"type\":\"workspaceWrite\"}"},
	{"workspaceWrite, no /tmp",
		"{\"type\":\"workspaceWrite\",\"excludeSlashTmp\":true,"
		"\"excludeTmpdirEnvVar\":true}"},
};
#define NPOL (sizeof policies / sizeof policies[0])

/* The daemon on pipes. */
struct daemon {
	pid_t pid;
	int in, out;
	char buf[1 << 16];
	size_t len;
};

static double
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The q-quantile of v (sorted in place). */
static double
quantile(double *v, size_t n, double q)
{
	qsort(v, n, sizeof *v, cmp_double);
	return v[(size_t)(q * (double)(n - 1) + 0.5)];
}

/* nftw callback: remove one entry. */
static int
rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	remove(path);
	return 0;
}

/* Start the daemon with a private CODEX_HOME. */
static int
daemon_start(struct daemon *d, const char *bin, const char *home)
{
	int in[2], out[2];

	if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0)
		return -1;
	if ((d->pid = fork()) == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		setenv("CODEX_HOME", home, 1); /* a new directory inside ours */
		execl(bin, bin, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	d->in = in[1];
	d->out = out[0];
	d->len = 0;
	return d->pid > 0 ? 0 : -1;
}

/* Write one line. */
static int
daemon_send(struct daemon *d, const char *line)
{
	size_t n = strlen(line), off = 0;
	ssize_t w;

	while (off < n) {
		if ((w = write(d->in, line + off, n - off)) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		off += (size_t)w;
	}
	return 0;
}

/* The next line (parsed), waiting up to 30 s; NULL on EOF or timeout. */
static json_t *
daemon_recv(struct daemon *d)
{
	struct pollfd pfd = {.fd = d->out, .events = POLLIN};
	char *nl;
	json_t *j;
	ssize_t n;
	size_t used;

	for (;;) {
		if ((nl = memchr(d->buf, '\n', d->len)) != NULL) {
			*nl = '\0';
			j = json_loads(d->buf, 0, NULL);
			used = (size_t)(nl - d->buf) + 1;
			memmove(d->buf, d->buf + used, d->len - used);
			d->len -= used;
			return j;
		}
		if (d->len == sizeof d->buf || poll(&pfd, 1, 30000) <= 0)
			return NULL;
		if ((n = read(d->out, d->buf + d->len, sizeof d->buf - d->len)) <= 0)
			return NULL;
		d->len += (size_t)n;
	}
}

/* Send command/exec (id) and wait for its answer; stdout into out; 0 or -1. */
static int
exec_once(struct daemon *d, long id, const char *argv0, const char *arg1, const char *policy,
	const char *cwd, double *sent, double *answered, char *out, size_t outlen)
{
	json_t *cmd = json_pack("[s]", argv0), *req, *m, *r;
	char *line, *text;
	int rc = -1;

	if (arg1 != NULL)
		json_array_append_new(cmd, json_string(arg1));
	req = json_pack("{s:i, s:s, s:{s:o, s:s, s:o}}", "id", id, "method", "command/exec",
		"params", "command", cmd, "cwd", cwd, "sandboxPolicy", json_loads(policy, 0, NULL));
	text = json_dumps(req, JSON_COMPACT);
	if (asprintf(&line, "%s\n", text) < 0)
		line = NULL;
	*sent = now_ns();
	if (line == NULL)
		goto out;
	if (daemon_send(d, line) != 0)
		goto out;
	while ((m = daemon_recv(d)) != NULL) {
		if (json_integer_value(json_object_get(m, "id")) == id) {
			*answered = now_ns();
			r = json_object_get(m, "result");
			if (json_integer_value(json_object_get(r, "exitCode")) == 0 && out != NULL)
				snprintf(out, outlen, "%s",
					json_string_value(json_object_get(r, "stdout")));
			rc = json_integer_value(json_object_get(r, "exitCode")) == 0 ? 0 : -1;
			if (rc != 0)
				fprintf(stderr, "sandbox-bench: %s\n", json_dumps(m, JSON_COMPACT));
			json_decref(m);
			break;
		}
		json_decref(m);
	}
out:
	free(text);
	free(line);
	json_decref(req);
	return rc;
}

int
main(int argc, char **argv)
{
	const char *bin = getenv("APP_SERVER_BIN");
	char home[] = "/tmp/sandbox-bench-XXXXXX", self[PATH_MAX], cwd[PATH_MAX + 8], out[64];
	double *rt, *setup, *down, sent, answered, base_rt = 0, base_setup = 0, base_down = 0;
	double rt_med, rt_p90, su_med, td_med;
	struct daemon d;
	long id = 1, execs = 200;
	size_t p, i;
	json_t *m;
	int fail = 0;

	if (argc == 2 && strcmp(argv[1], "--stamp") == 0) {
		printf("%.0f\n", now_ns());
		return 0;
	}
	if (argc == 3 && strcmp(argv[1], "--execs") == 0)
		execs = strtol(argv[2], NULL, 10);
	if (execs < 1 || realpath("/proc/self/exe", self) == NULL) {
		fprintf(stderr, "usage: sandbox-bench [--execs N] | --stamp\n");
		return 2;
	}
	if (bin == NULL)
		bin = "build/app-server";
	if (mkdtemp(home) == NULL)
		return 1;
	snprintf(cwd, sizeof cwd, "%s/ws", home);
	mkdir(cwd, 0755);
	snprintf(out, sizeof out, "%s/codex", home);
	if (daemon_start(&d, bin, out) != 0 ||
		daemon_send(&d,
			"{\"id\":0,\"method\":\"initialize\",\"params\":{\"clientInfo\":"
			"{\"name\":\"sandbox-bench\",\"version\":\"1\"}}}\n") != 0 ||
		(m = daemon_recv(&d)) == NULL) {
		fprintf(stderr, "sandbox-bench: cannot start %s\n", bin);
		return 1;
	}
	json_decref(m);
	rt = calloc((size_t)execs, sizeof *rt);
	setup = calloc((size_t)execs, sizeof *setup);
	down = calloc((size_t)execs, sizeof *down);
	printf("%-26s %10s %10s %12s %12s %12s %12s\n", "policy", "true med", "true p90",
		"setup med", "teardown med", "sandbox setup", "sandbox down");
	for (p = 0; p < NPOL; p++) {
		for (i = 0; i < (size_t)execs; i++) {
			if (exec_once(&d, id++, "/bin/true", NULL, policies[p][1], cwd, &sent,
				    &answered, NULL, 0) != 0)
				fail = 1;
			rt[i] = (answered - sent) / 1e6;
		}
		for (i = 0; i < (size_t)execs; i++) {
			if (exec_once(&d, id++, self, "--stamp", policies[p][1], cwd, &sent,
				    &answered, out, sizeof out) != 0) {
				fail = 1;
				continue;
			}
			setup[i] = (strtod(out, NULL) - sent) / 1e6;
			down[i] = (answered - strtod(out, NULL)) / 1e6;
		}
		rt_med = quantile(rt, (size_t)execs, 0.5);
		rt_p90 = quantile(rt, (size_t)execs, 0.9);
		su_med = quantile(setup, (size_t)execs, 0.5);
		td_med = quantile(down, (size_t)execs, 0.5);
		if (p == 0) {
			base_rt = rt_med;
			base_setup = su_med;
			base_down = td_med;
		}
		printf("%-26s %7.3f ms %7.3f ms %9.3f ms %9.3f ms %9.3f ms %9.3f ms\n",
			policies[p][0], rt_med, rt_p90, su_med, td_med, su_med - base_setup,
			td_med - base_down);
	}
	printf("(round trip of `true` with no sandbox: %.3f ms)\n", base_rt);
	close(d.in);
	waitpid(d.pid, NULL, 0);
	nftw(home, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	return fail;
}
