/*
 * The sandbox end to end: command/exec with sandboxPolicy and permissionProfile against the
 * real daemon, each check a real command under a real policy. "Denied" means the operation
 * failed and nothing leaked (files are compared on the host afterwards); every "blocked"
 * network check has a twin with networkAccess that succeeds against a loopback listener
 * this test starts (no test contacts a non-loopback address), and the mechanism is pinned
 * down with try-syscall (build/helpers/try-syscall), which prints each call's errno.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base64.h"
#include "harness.h"
#include "xmalloc.h"

#define T_REPLY 10000 /* ms for a sandboxed command that needs no waiting */
#define DELTA	"command/exec/outputDelta"

/* The try-syscall helper (absolute). */
static char *helper;

/* What a command/exec answered. */
struct out {
	int code;
	char *out, *err;
};

static void
out_free(struct out *o)
{
	free(o->out);
	free(o->err);
	memset(o, 0, sizeof *o);
}

/* JSON text with single quotes for double quotes, printf-formatted. */
static json_t *
jfmt(const char *fmt, ...)
{
	char *text, *q;
	json_error_t je;
	json_t *j;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&text, fmt, ap) < 0)
		fail_msg("vasprintf");
	va_end(ap);
	for (q = text; *q != '\0'; q++)
		if (*q == '\'')
			*q = '"';
	if ((j = json_loads(text, JSON_DECODE_ANY, &je)) == NULL)
		fail_msg("bad test JSON %s: %s", text, je.text);
	free(text);
	return j;
}

/* A daemon after the handshake (experimentalApi on request), with extra environment. */
static struct asc *
daemon_start(int experimental, const char *const *env)
{
	struct asc_opts o = {.env = env};
	struct asc *c = asc_spawn(&o);
	long long id;
	json_t *m;

	id = asc_request(c, "initialize",
		json_pack("{s:{s:s, s:n, s:s}, s:{s:b}}", "clientInfo", "name", "asc-test", "title",
			"version", "0.1", "capabilities", "experimentalApi", experimental));
	m = asc_wait_response(c, id, asc_timeout(T_REPLY));
	asc_assert_result(m);
	json_decref(m);
	return c;
}

/* command/exec params: `sh -c script` in cwd, with extra fields (JSON text, may be NULL). */
static json_t *
sh_params(const char *cwd, const char *extra, const char *script)
{
	json_t *p = json_pack("{s:[s,s,s]}", "command", "sh", "-c", script), *x;

	if (cwd != NULL)
		json_object_set_new(p, "cwd", json_string(cwd));
	if (extra != NULL) {
		x = jfmt("%s", extra);
		json_object_update(p, x);
		json_decref(x);
	}
	return p;
}

/* Run params (stolen) to a success answer. */
static void
exec_ok(struct asc *c, json_t *params, struct out *o)
{
	long long id = asc_request(c, "command/exec", params);
	json_t *m = asc_wait_response(c, id, asc_timeout(T_REPLY)), *r = asc_assert_result(m);

	o->code = (int)json_integer_value(json_object_get(r, "exitCode"));
	o->out = xstrdup(json_string_value(json_object_get(r, "stdout")));
	o->err = xstrdup(json_string_value(json_object_get(r, "stderr")));
	json_decref(m);
}

/* Run params (stolen); the error must have this code; its message (heap) is returned. */
static char *
exec_err(struct asc *c, json_t *params, int code)
{
	long long id = asc_request(c, "command/exec", params);
	json_t *m = asc_wait_response(c, id, asc_timeout(T_REPLY));
	char *msg;

	asc_assert_error(m, code, NULL);
	msg = xstrdup(json_string_value(json_object_get(json_object_get(m, "error"), "message")));
	json_decref(m);
	return msg;
}

/* Run a script and check its exit code and stdout (NULL: not checked). */
static void
expect(struct asc *c, const char *cwd, const char *extra, const char *script, int code,
	const char *stdout_)
{
	struct out o;

	exec_ok(c, sh_params(cwd, extra, script), &o);
	if (o.code != code || (stdout_ != NULL && strcmp(o.out, stdout_) != 0))
		fail_msg("%s under %s: expected exit %d stdout \"%s\", got exit %d stdout \"%s\" "
			 "stderr \"%s\"",
			script, extra != NULL ? extra : "(default)", code,
			stdout_ != NULL ? stdout_ : "*", o.code, o.out, o.err);
	out_free(&o);
}

/* A fresh directory inside the client's private one. */
static char *
mkdir_in(struct asc *c, const char *name)
{
	char *d = xasprintf("%s/%s", asc_dir(c), name);

	if (mkdir(d, 0755) != 0 && errno != EEXIST)
		fail_msg("mkdir %s: %s", d, strerror(errno));
	return d;
}

/* Write a file. */
static void
put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f == NULL)
		fail_msg("%s: %s", path, strerror(errno));
	fputs(text, f);
	fclose(f);
}

/* A file's contents (heap), or "<missing>". */
static char *
slurp(const char *path)
{
	char buf[4096];
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return xstrdup("<missing>");
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return xstrdup(buf);
}

/* Assert a file holds text. */
static void
assert_file(const char *path, const char *text)
{
	char *got = slurp(path);

	if (strcmp(got, text) != 0)
		fail_msg("%s: expected \"%s\", got \"%s\"", path, text, got);
	free(got);
}

/* Whether dir/name exists (not following symlinks). */
static int
present(const char *dir, const char *name)
{
	char *p = xasprintf("%s/%s", dir, name);
	struct stat st;
	int r = lstat(p, &st) == 0;

	free(p);
	return r;
}

/* No protected placeholder left in dir. */
static void
assert_no_residue(const char *dir)
{
	static const char *const names[] = {".git", ".codex", ".agents"};

	for (size_t i = 0; i < 3; i++)
		if (present(dir, names[i]))
			fail_msg("%s/%s was left behind", dir, names[i]);
}

/* A loopback HTTP server in a child: its port; *pid to stop it. */
static int
http_start(pid_t *pid)
{
	static const char reply[] = "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok";
	struct sockaddr_in sin;
	socklen_t len = sizeof sin;
	char buf[1024];
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), a, one = 1;

	assert_true(s >= 0);
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(s, (struct sockaddr *)&sin, sizeof sin), 0);
	assert_int_equal(listen(s, 16), 0);
	assert_int_equal(getsockname(s, (struct sockaddr *)&sin, &len), 0);
	if ((*pid = fork()) == 0) {
		for (;;) {
			if ((a = accept(s, NULL, NULL)) < 0)
				continue;
			(void)read(a, buf, sizeof buf);
			(void)write(a, reply, sizeof reply - 1);
			close(a);
		}
	}
	close(s);
	return ntohs(sin.sin_port);
}

static void
child_stop(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static void
test_defaults(void **state)
{
	struct asc *c = daemon_start(0, NULL);
	char *ws = mkdir_in(c, "ws"), *f = xasprintf("%s/x", ws);

	/* No policy: readOnly, network restricted. Reading works, writing anywhere fails. */
	expect(c, ws, NULL,
		"ls /bin >/dev/null && head -c 4 /etc/passwd && echo; "
		"echo \"$CODEX_SANDBOX_NETWORK_DISABLED\"; echo x > x || echo denied",
		0, "root\n1\ndenied\n");
	assert_false(present(ws, "x"));
	expect(c, ws, "{'sandboxPolicy':{'type':'readOnly'}}",
		"echo blah > /dev/null && for n in null zero full random urandom tty; do "
		"[ -c /dev/$n ] || exit 1; done; echo x > /etc/app-server-sandbox-test || exit 3",
		3, "");
	expect(c, ws, "{'sandboxPolicy':{'type':'readOnly','networkAccess':true}}",
		"echo \"${CODEX_SANDBOX_NETWORK_DISABLED-unset}\"", 0, "unset\n");
	/* Outside the sandbox nothing changed. */
	assert_int_equal(access("/etc/app-server-sandbox-test", F_OK), -1);
	free(f);
	free(ws);
	asc_free(c);
}

static void
test_writable_roots(void **state)
{
	const char *env[] = {NULL, NULL};
	struct asc *c;
	char *ws, *other, *extra, *tmpfile, *script, *tmpdir;

	/* $TMPDIR is a writable root unless excluded: point the daemon at a private one. */
	tmpdir = xasprintf("/tmp/app-server-sbx-tmpdir-%d", (int)getpid());
	mkdir(tmpdir, 0755);
	env[0] = xasprintf("TMPDIR=%s", tmpdir);
	c = daemon_start(0, env);
	ws = mkdir_in(c, "ws");
	other = mkdir_in(c, "other");
	tmpfile = xasprintf("/tmp/app-server-sbx-%d", (int)getpid());

	/* Missing writable roots are skipped. */
	extra = xasprintf("{'sandboxPolicy':{'type':'workspaceWrite','writableRoots':['%s',"
			  "'%s/missing']}}",
		other, ws);
	script = xasprintf("echo blah > test && echo o > '%s/o' && echo t > \"$TMPDIR/t\" && "
			   "echo s > '%s' && printf sandbox-ok",
		other, tmpfile);
	expect(c, ws, extra, script, 0, "sandbox-ok");
	assert_file(xasprintf("%s/test", ws), "blah\n");
	assert_file(xasprintf("%s/o", other), "o\n");
	assert_file(xasprintf("%s/t", tmpdir), "t\n");
	assert_file(tmpfile, "s\n");
	unlink(tmpfile);
	free(script);
	free(extra);

	/* Excluded /tmp and $TMPDIR, and anything outside the roots: each write fails. */
	extra = xstrdup("{'sandboxPolicy':{'type':'workspaceWrite','excludeSlashTmp':true,"
			"'excludeTmpdirEnvVar':true}}");
	script = xasprintf("echo s > '%s' || echo tmp-denied; echo t > \"$TMPDIR/t2\" || "
			   "echo tmpdir-denied; echo o > '%s/o2' || echo other-denied",
		tmpfile, other);
	expect(c, ws, extra, script, 0, "tmp-denied\ntmpdir-denied\nother-denied\n");
	assert_int_equal(access(tmpfile, F_OK), -1);
	assert_false(present(tmpdir, "t2"));
	assert_false(present(other, "o2"));
	assert_no_residue(ws);
	assert_no_residue(other);
	assert_no_residue(tmpdir);
	free(script);
	free(extra);
	asc_free(c);
	unlink(xasprintf("%s/t", tmpdir));
	rmdir(tmpdir);
	free((char *)env[0]);
	free(tmpdir);
	free(tmpfile);
	free(ws);
	free(other);
}

static void
test_metadata(void **state)
{
	struct asc *c = daemon_start(0, NULL);
	char *ws = mkdir_in(c, "ws"), *p, *out;
	struct out o;

	p = xasprintf("%s/.git", ws);
	mkdir(p, 0755);
	free(p);
	p = xasprintf("%s/.codex", ws);
	mkdir(p, 0755);
	free(p);
	put(xasprintf("%s/.git/config", ws), "original");
	put(xasprintf("%s/.codex/config.toml", ws), "original");
	/* Upstream's three steps: the root is writable, the metadata is not, stderr is quiet. */
	exec_ok(c,
		sh_params(ws, "{'sandboxPolicy':{'type':'workspaceWrite'}}",
			"printf permitted > allowed; "
			"if { printf changed > .git/config; } 2>/dev/null; then echo git; fi; "
			"if { printf changed > .codex/config.toml; } 2>/dev/null; then echo codex; fi; "
			"if mkdir .agents/x 2>/dev/null; then echo agents; fi; "
			"if mv .git g2 2>/dev/null; then echo mv; fi; "
			"if rm -rf .codex 2>/dev/null; then echo rm; fi; "
			"printf protected"),
		&o);
	assert_int_equal(o.code, 0);
	assert_string_equal(o.out, "protected");
	assert_string_equal(o.err, "");
	out_free(&o);
	assert_file(xasprintf("%s/allowed", ws), "permitted");
	assert_file(xasprintf("%s/.git/config", ws), "original");
	assert_file(xasprintf("%s/.codex/config.toml", ws), "original");
	assert_false(present(ws, "g2"));
	assert_false(present(ws, ".agents"));

	/* A .codex -> decoy symlink could be swapped: the request is refused, nothing runs. */
	out = xasprintf("%s/decoy", ws);
	mkdir(out, 0755);
	put(xasprintf("%s/decoy/config.toml", ws), "original");
	p = xasprintf("%s/link", ws);
	mkdir(p, 0755);
	assert_int_equal(symlink(out, xasprintf("%s/link/.codex", ws)), 0);
	free(out);
	out = exec_err(c,
		sh_params(p, "{'sandboxPolicy':{'type':'workspaceWrite'}}",
			"echo denied > .codex/config.toml; echo ran > marker"),
		-32603);
	if (strstr(out, "cannot enforce sandbox read-only path") == NULL ||
		strstr(out, "because it crosses writable symlink") == NULL)
		fail_msg("unexpected error: %s", out);
	free(out);
	assert_file(xasprintf("%s/decoy/config.toml", ws), "original");
	assert_false(present(p, "marker"));
	free(p);
	free(ws);
	asc_free(c);
}

static void
test_parent_repo(void **state)
{
	struct asc *c = daemon_start(0, NULL);
	char *repo = mkdir_in(c, "repo"), *sub, *script;
	struct out o;

	expect(c, repo, "{'sandboxPolicy':{'type':'dangerFullAccess'}}",
		"git init -q . && mkdir sub && echo ok", 0, "ok\n");
	sub = xasprintf("%s/sub", repo);
	/* The cwd is a writable root inside a repository: discovery works, metadata cannot be made.
	 */
	script = xasprintf("test \"$(git rev-parse --show-toplevel)\" = '%s' && echo toplevel; "
			   "git init -q 2>/dev/null || echo init-denied; "
			   "mkdir .codex 2>/dev/null || echo mkdir-denied; "
			   "mkdir .agents/skills 2>/dev/null || echo agents-denied; "
			   "printf 'print(6*7)\\n' > t.py && python3 t.py; "
			   "printf 'echo from-sh\\n' > t.sh && sh t.sh; "
			   "git status --porcelain --untracked-files=all",
		repo);
	exec_ok(c,
		sh_params(sub,
			"{'sandboxPolicy':{'type':'workspaceWrite','excludeSlashTmp':true,"
			"'excludeTmpdirEnvVar':true}}",
			script),
		&o);
	assert_int_equal(o.code, 0);
	assert_string_equal(o.out,
		"toplevel\ninit-denied\nmkdir-denied\nagents-denied\n42\n"
		"from-sh\n?? sub/t.py\n?? sub/t.sh\n");
	out_free(&o);
	assert_no_residue(sub);
	assert_false(present(repo, "sub/.git"));
	free(script);
	free(sub);
	free(repo);
	asc_free(c);
}

static void
test_escapes(void **state)
{
	struct asc *c = daemon_start(0, NULL);
	char *ws = mkdir_in(c, "ws"), *ro = mkdir_in(c, "ro"), *script, *target;
	struct out o;

	put(xasprintf("%s/file", ro), "original");
	target = xasprintf("%s/ro/escape", asc_dir(c));
	script = xasprintf(
		"ln -s / root && { echo x > root'%s'; } 2>/dev/null || echo symlink-denied; "
		"ln '%s/file' hard 2>/dev/null || echo hardlink-denied; "
		"{ echo changed >> hard; } 2>/dev/null; "
		"ln .git/config c 2>/dev/null || echo git-hardlink-denied; "
		"printf ok",
		target, ro);
	mkdir(xasprintf("%s/.git", ws), 0755);
	put(xasprintf("%s/.git/config", ws), "original");
	exec_ok(c,
		sh_params(ws,
			"{'sandboxPolicy':{'type':'workspaceWrite','excludeSlashTmp':true,"
			"'excludeTmpdirEnvVar':true}}",
			script),
		&o);
	assert_string_equal(o.out, "symlink-denied\nhardlink-denied\ngit-hardlink-denied\nok");
	out_free(&o);
	assert_int_equal(access(target, F_OK), -1);
	assert_file(xasprintf("%s/file", ro), "original");
	assert_file(xasprintf("%s/.git/config", ws), "original");
	free(script);
	free(target);
	free(ws);
	free(ro);
	asc_free(c);
}

static void
test_privileges(void **state)
{
	struct asc *c = daemon_start(0, NULL);
	char *script = xasprintf("'%s' nnp caps mount", helper);

	expect(c, NULL, "{'sandboxPolicy':{'type':'readOnly'}}", script, 0,
		"nnp: = 1\ncaps: = 0 0 0 0\nmount: EPERM\n");
	expect(c, NULL, "{'sandboxPolicy':{'type':'workspaceWrite','networkAccess':true}}", script,
		0, "nnp: = 1\ncaps: = 0 0 0 0\nmount: EPERM\n");
	expect(c, NULL, "{'sandboxPolicy':{'type':'readOnly'}}",
		"python3 -c 'import ctypes; print(ctypes.CDLL(None).prctl(39, 0, 0, 0, 0))'", 0,
		"1\n");
	/* Unsandboxed, the daemon's root keeps its capabilities: the test proves the difference. */
	expect(c, NULL, "{'sandboxPolicy':{'type':'dangerFullAccess'}}",
		"grep -q '^NoNewPrivs:.0' /proc/self/status && echo free", 0, "free\n");
	free(script);
	asc_free(c);
}

static void
test_syscalls(void **state)
{
	struct asc *c = daemon_start(0, NULL);
	char *script;

	script = xasprintf(
		"'%s' socket-unix socketpair-unix socket-inet socket-inet6 "
		"socket-netlink socket-packet socket-vsock socketpair-inet io_uring_setup "
		"ptrace process_vm_readv tiocsti tioclinux bind-tcp",
		helper);
	expect(c, NULL, "{'sandboxPolicy':{'type':'readOnly'}}", script, 0,
		"socket-unix: OK\nsocketpair-unix: OK\nsocket-inet: EPERM\nsocket-inet6: EPERM\n"
		"socket-netlink: EPERM\nsocket-packet: EPERM\nsocket-vsock: EPERM\n"
		"socketpair-inet: EPERM\nio_uring_setup: EPERM\nptrace: EPERM\n"
		"process_vm_readv: EPERM\ntiocsti: EPERM\ntioclinux: EPERM\nbind-tcp: EPERM\n");
	free(script);
	/* Network enabled: sockets work, vsock, io_uring, ptrace and TIOCSTI still do not. */
	script = xasprintf("'%s' socket-inet socket-vsock io_uring_setup ptrace tiocsti", helper);
	expect(c, NULL, "{'sandboxPolicy':{'type':'workspaceWrite','networkAccess':true}}", script,
		0,
		"socket-inet: OK\nsocket-vsock: EPERM\nio_uring_setup: EPERM\nptrace: EPERM\n"
		"tiocsti: EPERM\n");
	/* The same calls unsandboxed fail harmlessly with another errno (or work). */
	expect(c, NULL, "{'sandboxPolicy':{'type':'dangerFullAccess'}}", script, 0, NULL);
	free(script);
	/* A foreign ABI (i386 int 0x80, x32) kills the process: 128 + SIGSYS. */
	script = xasprintf("'%s' i386", helper);
	expect(c, NULL, "{'sandboxPolicy':{'type':'readOnly'}}", script, 128 + SIGSYS, "");
	free(script);
	script = xasprintf("'%s' x32", helper);
	expect(c, NULL, "{'sandboxPolicy':{'type':'readOnly','networkAccess':true}}", script,
		128 + SIGSYS, "");
	free(script);
	/* strace needs ptrace. */
	expect(c, NULL, "{'sandboxPolicy':{'type':'readOnly'}}",
		"strace -o /dev/null true 2>&1 | grep -q 'Operation not permitted' && echo denied",
		0, "denied\n");
	asc_free(c);
}

static void
test_network(void **state)
{
	static const char *const tools =
		"curl -sS -m 5 http://127.0.0.1:%1$d/ 2>/dev/null && echo; echo curl=$?; "
		"wget --tries=1 -T 5 -qO- http://127.0.0.1:%1$d/ 2>/dev/null; echo \" wget=$?\"; "
		"nc -z -w 5 127.0.0.1 %1$d 2>/dev/null; echo nc=$?; "
		"bash -c 'echo hi > /dev/tcp/127.0.0.1/%1$d' 2>/dev/null; echo devtcp=$?; "
		"'%2$s' connect-tcp:%1$d";
	struct asc *c = daemon_start(0, NULL);
	struct out o;
	pid_t srv;
	int port = http_start(&srv);
	char *script = xasprintf(tools, port, helper);

	/* The listener answers when the network is allowed... */
	exec_ok(c,
		sh_params(
			NULL, "{'sandboxPolicy':{'type':'readOnly','networkAccess':true}}", script),
		&o);
	if (strncmp(o.out, "ok\ncurl=0\nok wget=0\nnc=0\ndevtcp=0\n", 33) != 0 ||
		strstr(o.out, ": OK\n") == NULL)
		fail_msg("network enabled: %s / %s", o.out, o.err);
	out_free(&o);
	/* ... and every tool fails, at the socket, when it is restricted. */
	exec_ok(c, sh_params(NULL, "{'sandboxPolicy':{'type':'readOnly'}}", script), &o);
	if (strncmp(o.out, "curl=7\n wget=4\nnc=1\ndevtcp=1\n", 29) != 0 ||
		strstr(o.out, ": EPERM\n") == NULL)
		fail_msg("network restricted: %s / %s", o.out, o.err);
	out_free(&o);
	exec_ok(c,
		sh_params(NULL, "{'sandboxPolicy':{'type':'workspaceWrite'}}",
			"bash -c 'echo hi > /dev/tcp/127.0.0.1/1' 2>&1; "
			"ssh -o BatchMode=yes -o ConnectTimeout=1 -p 1 127.0.0.1 true 2>&1; "
			"ping -c 1 -W 1 127.0.0.1 >/dev/null 2>&1 || echo ping-denied; "
			"getent ahosts example.invalid || echo getent-denied"),
		&o);
	if (strstr(o.out, "bash: socket: Operation not permitted") == NULL ||
		strstr(o.out, "socket: Operation not permitted") == NULL ||
		strstr(o.out, "ping-denied\ngetent-denied\n") == NULL)
		fail_msg("restricted tools: %s", o.out);
	out_free(&o);
	child_stop(srv);
	free(script);
	asc_free(c);
}

static void
test_unix_and_signals(void **state)
{
	struct asc *c = daemon_start(0, NULL);
	struct sockaddr_un sun;
	char name[64], *script;
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	size_t n;

	/* An abstract unix socket listening outside the sandbox. */
	n = (size_t)snprintf(name, sizeof name, "app-server-test-%d", (int)getpid());
	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path + 1, name, n);
	assert_int_equal(bind(s, (struct sockaddr *)&sun,
				 (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n)),
		0);
	assert_int_equal(listen(s, 8), 0);
	script = xasprintf("'%s' connect-abstract:%s kill:1 kill:%d socketpair-unix", helper, name,
		(int)asc_pid(c));
	/* Reachable unsandboxed; from a sandbox, even with the network on, Landlock scopes it. */
	expect(c, NULL, "{'sandboxPolicy':{'type':'dangerFullAccess'}}",
		xasprintf("'%s' connect-abstract:%s", helper, name), 0,
		xasprintf("connect-abstract:%s: OK\n", name));
	expect(c, NULL, "{'sandboxPolicy':{'type':'readOnly','networkAccess':true}}", script, 0,
		xasprintf("connect-abstract:%s: EPERM\nkill:1: EPERM\nkill:%d: ESRCH\n"
			  "socketpair-unix: OK\n",
			name, (int)asc_pid(c)));
	expect(c, NULL, "{'sandboxPolicy':{'type':'readOnly'}}", script, 0,
		xasprintf("connect-abstract:%s: EPERM\nkill:1: EPERM\nkill:%d: ESRCH\n"
			  "socketpair-unix: OK\n",
			name, (int)asc_pid(c)));
	/* kill(1) from a shell: the host's processes are not even visible. */
	expect(c, NULL, "{'sandboxPolicy':{'type':'readOnly'}}",
		xasprintf("kill -0 %d 2>/dev/null || echo hidden; ls /proc | grep -c '^[0-9]'",
			(int)getpid()),
		0, NULL);
	close(s);
	free(script);
	asc_free(c);
}

/* Take messages until the answer to id; append process name's deltas to *buf. */
static json_t *
collect(struct asc *c, long long id, const char *name, char **buf, int timeout_ms)
{
	long long end = asc_now_ms() + timeout_ms;
	json_t *m, *p;
	const char *b64;
	size_t n, len = *buf != NULL ? strlen(*buf) : 0;
	char *dec;

	for (;;) {
		if ((m = asc_next(c, (int)(end - asc_now_ms()))) == NULL)
			fail_msg("no answer within %d ms; output so far \"%s\"", timeout_ms,
				*buf != NULL ? *buf : "");
		if (json_integer_value(json_object_get(m, "id")) == id &&
			json_object_get(m, "method") == NULL)
			return m;
		p = json_object_get(m, "params");
		if (strcmp(json_string_value(json_object_get(m, "method")), DELTA) == 0 &&
			strcmp(json_string_value(json_object_get(p, "processId")), name) == 0) {
			b64 = json_string_value(json_object_get(p, "deltaBase64"));
			dec = xmalloc(base64_decoded_max(strlen(b64)) + 1);
			assert_int_equal(base64_decode(b64, strlen(b64), dec, &n, NULL), 0);
			*buf = xrealloc(*buf, len + n + 1);
			memcpy(*buf + len, dec, n);
			len += n;
			(*buf)[len] = '\0';
			free(dec);
		}
		json_decref(m);
	}
}

static void
test_pty(void **state)
{
	static const char *const policies[] = {
		"{'sandboxPolicy':{'type':'readOnly'}}",
		"{'sandboxPolicy':{'type':'readOnly','networkAccess':true}}",
		"{'sandboxPolicy':{'type':'workspaceWrite'}}",
		"{'sandboxPolicy':{'type':'dangerFullAccess'}}",
		"{'sandboxPolicy':{'type':'externalSandbox'}}",
		"{'permissionProfile':{'type':'managed','network':'restricted','fileSystem':{'type':"
		"'restricted','entries':[{'path':{'type':'special','value':{'kind':'minimal'}},"
		"'access':'read'},{'path':{'type':'special','value':{'kind':'current_working_"
		"directory'}},'access':'write'}]}}}",
		"{'permissionProfile':{'type':'managed','network':'enabled','fileSystem':{'type':"
		"'unrestricted'}}}",
	};
	struct asc *c = daemon_start(1, NULL);
	char *ws = mkdir_in(c, "ws"), *buf, name[16];
	long long id;
	json_t *m, *p;
	size_t i;

	for (i = 0; i < sizeof policies / sizeof policies[0]; i++) {
		snprintf(name, sizeof name, "pty%zu", i);
		p = sh_params(ws, policies[i],
			"stty size; test -t 0 && test -t 1 && echo tty; echo hi > /dev/tty && "
			"echo devtty; echo out > /dev/stdout");
		json_object_set_new(p, "tty", json_true());
		json_object_set_new(p, "processId", json_string(name));
		id = asc_request(c, "command/exec", p);
		buf = NULL;
		m = collect(c, id, name, &buf, asc_timeout(T_REPLY));
		asc_assert_result(m);
		if (json_integer_value(json_object_get(json_object_get(m, "result"), "exitCode")) !=
				0 ||
			buf == NULL || strcmp(buf, "24 80\r\ntty\r\nhi\r\ndevtty\r\nout\r\n") != 0)
			fail_msg("pty under %s: %s / %s", policies[i], buf != NULL ? buf : "",
				asc_raw(c));
		json_decref(m);
		free(buf);
	}
	/* ^C reaches a sandboxed command on its terminal. */
	p = sh_params(ws, "{'sandboxPolicy':{'type':'workspaceWrite'}}", "echo ready; sleep 20");
	json_object_set_new(p, "tty", json_true());
	json_object_set_new(p, "processId", json_string("intr"));
	id = asc_request(c, "command/exec", p);
	m = asc_wait_notification(c, DELTA, asc_timeout(T_REPLY)); /* "ready": it runs */
	json_decref(m);
	m = asc_wait_response(c,
		asc_request(c, "command/exec/write",
			json_pack("{s:s, s:s}", "processId", "intr", "deltaBase64", "Aw==")),
		asc_timeout(T_REPLY));
	asc_assert_result(m);
	json_decref(m);
	buf = NULL;
	m = collect(c, id, "intr", &buf, asc_timeout(T_REPLY));
	assert_int_equal(
		json_integer_value(json_object_get(json_object_get(m, "result"), "exitCode")), 130);
	json_decref(m);
	free(buf);
	assert_no_residue(ws);
	free(ws);
	asc_free(c);
}

static void
test_timeout_and_terminate(void **state)
{
	struct asc *c = daemon_start(0, NULL);
	char *ws = mkdir_in(c, "ws"), *buf = NULL;
	long long t0 = asc_now_ms(), id;
	json_t *p, *m;

	/* The timeout kills the whole sandbox, background jobs included: 124. */
	expect(c, ws, "{'timeoutMs':300,'sandboxPolicy':{'type':'workspaceWrite'}}",
		"sleep 30 & sleep 30", 124, "");
	assert_true(asc_now_ms() - t0 < asc_timeout(5000));
	assert_no_residue(ws);
	expect(c, ws, "{'timeoutMs':300,'sandboxPolicy':{'type':'readOnly'}}", "sleep 30", 124, "");
	/* terminate: 137, and the placeholders are gone once the answer is out. */
	p = sh_params(ws, "{'sandboxPolicy':{'type':'workspaceWrite'},'streamStdoutStderr':true}",
		"echo started; sleep 30");
	json_object_set_new(p, "processId", json_string("t1"));
	id = asc_request(c, "command/exec", p);
	m = asc_wait_notification(c, DELTA, asc_timeout(T_REPLY));
	json_decref(m);
	assert_true(present(ws, ".codex"));
	m = asc_wait_response(c,
		asc_request(c, "command/exec/terminate", json_pack("{s:s}", "processId", "t1")),
		asc_timeout(T_REPLY));
	asc_assert_result(m);
	json_decref(m);
	m = collect(c, id, "t1", &buf, asc_timeout(T_REPLY));
	assert_int_equal(
		json_integer_value(json_object_get(json_object_get(m, "result"), "exitCode")), 137);
	json_decref(m);
	free(buf);
	assert_no_residue(ws);
	free(ws);
	asc_free(c);
}

static void
test_concurrent(void **state)
{
	struct asc *c = daemon_start(0, NULL);
	char *ws = mkdir_in(c, "ws"), name[8];
	long long ids[6];
	json_t *p, *m, *r;
	int i;

	/* Parallel sandboxes in one workspace share the placeholders; the last one removes them. */
	for (i = 0; i < 6; i++) {
		snprintf(name, sizeof name, "c%d", i);
		p = sh_params(ws, "{'sandboxPolicy':{'type':'workspaceWrite'}}",
			"sleep 0.2; mkdir .codex 2>/dev/null || echo held");
		json_object_set_new(p, "processId", json_string(name));
		ids[i] = asc_request(c, "command/exec", p);
	}
	for (i = 0; i < 6; i++) {
		m = asc_wait_response(c, ids[i], asc_timeout(T_REPLY));
		r = asc_assert_result(m);
		assert_int_equal(json_integer_value(json_object_get(r, "exitCode")), 0);
		assert_string_equal(json_string_value(json_object_get(r, "stdout")), "held\n");
		json_decref(m);
	}
	assert_no_residue(ws);
	free(ws);
	asc_free(c);
}

static void
test_profiles(void **state)
{
	struct asc *c = daemon_start(1, NULL);
	char *ws = mkdir_in(c, "ws"), *extra, *msg;

	mkdir(xasprintf("%s/blocked", ws), 0755);
	put(xasprintf("%s/blocked/secret.txt", ws), "secret");
	expect(c, ws, "{'permissionProfile':':read-only'}",
		"printf profile; echo x > x 2>/dev/null || printf ' ro'", 0, "profile ro");
	expect(c, ws, "{'permissionProfile':':workspace'}", "echo x > x && cat x", 0, "x\n");
	expect(c, ws, "{'permissionProfile':{'type':'external','network':'restricted'}}",
		"echo $CODEX_SANDBOX_NETWORK_DISABLED", 0, "1\n");
	expect(c, ws, "{'permissionProfile':{'type':'disabled'}}",
		"echo \"${CODEX_SANDBOX_NETWORK_DISABLED-unset}\"; test $$ -ne 2 && echo host", 0,
		"unset\nhost\n");
	/* Split entries: platform defaults readable, the cwd writable, one directory denied. */
	extra = xasprintf("{'permissionProfile':{'type':'managed','network':'restricted',"
			  "'fileSystem':{'type':'restricted','entries':["
			  "{'path':{'type':'special','value':{'kind':'minimal'}},'access':'read'},"
			  "{'path':{'type':'special','value':{'kind':'current_working_directory'}},"
			  "'access':'write'},"
			  "{'path':{'type':'path','path':'%s/blocked'},'access':'deny'}]}}}",
		ws);
	expect(c, ws, extra,
		"cat blocked/secret.txt 2>/dev/null || echo denied; echo w > w && cat w; "
		"test -e /home || echo no-home; ls /tmp | wc -l",
		0, "denied\nw\nno-home\n1\n");
	free(extra);
	/* Root readable with a denied directory. */
	extra = xasprintf("{'permissionProfile':{'type':'managed','network':'enabled',"
			  "'fileSystem':{'type':'restricted','entries':["
			  "{'path':{'type':'special','value':{'kind':'root'}},'access':'read'},"
			  "{'path':{'type':'path','path':'%s/blocked'},'access':'deny'}]}}}",
		ws);
	expect(c, ws, extra, "cat blocked/secret.txt 2>/dev/null || echo denied", 0, "denied\n");
	free(extra);
	/* Refusals: globs (not yet), both kinds at once, a bad shape. */
	msg = exec_err(c,
		sh_params(ws,
			"{'permissionProfile':{'type':'managed','fileSystem':{'type':'restricted',"
			"'entries':[{'path':{'type':'glob_pattern','pattern':'**/*.env'},"
			"'access':'deny'}]}}}",
			"echo ran > marker"),
		-32600);
	assert_string_equal(msg,
		"invalid permission profile: glob_pattern entries are not "
		"supported yet (`**/*.env`); list paths instead");
	free(msg);
	assert_false(present(ws, "marker"));
	msg = exec_err(c,
		sh_params(ws, "{'sandboxPolicy':{'type':'workspaceWrite','writableRoots':['rel']}}",
			"true"),
		-32600);
	assert_string_equal(
		msg, "invalid sandbox policy: `writableRoots` entries must be absolute paths");
	free(msg);
	free(ws);
	asc_free(c);
}

static void
test_fail_closed(void **state)
{
	static const char *const faults[][2] = {
		{"landlock", "landlock"},
		{"seccomp", "seccomp"},
		{"mounts", "mounts"},
		{"caps", "capabilities"},
	};
	const char *env[] = {NULL, NULL};
	struct asc *c;
	char *ws, *msg, *want;

	for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++) {
		env[0] = xasprintf("APP_SERVER_SANDBOX_FAULT=%s", faults[i][0]);
		c = daemon_start(0, env);
		ws = mkdir_in(c, "ws");
		msg = exec_err(c,
			sh_params(ws, "{'sandboxPolicy':{'type':'workspaceWrite'}}",
				"echo ran > marker"),
			-32603);
		want = xasprintf("sandbox setup failed: %s: Operation not permitted (os error 1)",
			faults[i][1]);
		assert_string_equal(msg, want);
		assert_false(present(ws, "marker"));
		assert_no_residue(ws);
		/* Unsandboxed policies never touch the sandbox. */
		expect(c, ws, "{'sandboxPolicy':{'type':'dangerFullAccess'}}", "echo ran", 0,
			"ran\n");
		free(want);
		free(msg);
		free(ws);
		free((char *)env[0]);
		asc_free(c);
	}
	/* A command that cannot be executed inside the sandbox: the spawn error, not a hang. */
	c = daemon_start(0, NULL);
	msg = exec_err(c,
		json_pack("{s:[s], s:{s:s}}", "command", "/nonexistent/app-server-cmd",
			"sandboxPolicy", "type", "readOnly"),
		-32603);
	assert_string_equal(msg, "failed to spawn command: No such file or directory (os error 2)");
	free(msg);
	asc_free(c);
}

static void
test_dev_shm(void **state)
{
	struct asc *c = daemon_start(0, NULL);
	char *path = xasprintf("/dev/shm/app-server-sbx-%d", (int)getpid()), *script;

	script = xasprintf("printf sandbox-after > '%s'", path);
	expect(c, NULL, "{'sandboxPolicy':{'type':'workspaceWrite','writableRoots':['/dev/shm']}}",
		script, 0, "");
	assert_file(path, "sandbox-after");
	unlink(path);
	/* Without it, /dev/shm is the sandbox's own. */
	expect(c, NULL, "{'sandboxPolicy':{'type':'readOnly'}}", script, 0, "");
	assert_int_equal(access(path, F_OK), -1);
	free(script);
	free(path);
	asc_free(c);
}

/* Find the helper once, from the repository root. */
static int
group_setup(void **state)
{
	const char *dir = getenv("APP_SERVER_HELPERS");
	char *p = xasprintf("%s/try-syscall", dir != NULL ? dir : "build/helpers");

	helper = realpath(p, NULL);
	free(p);
	if (helper == NULL) {
		fprintf(stderr,
			"test_sandbox: build/helpers/try-syscall is missing (make "
			"build/helpers/try-syscall)\n");
		return -1;
	}
	return 0;
}

static int
group_teardown(void **state)
{
	free(helper);
	return 0;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_writable_roots),
		cmocka_unit_test(test_metadata),
		cmocka_unit_test(test_parent_repo),
		cmocka_unit_test(test_escapes),
		cmocka_unit_test(test_privileges),
		cmocka_unit_test(test_syscalls),
		cmocka_unit_test(test_network),
		cmocka_unit_test(test_unix_and_signals),
		cmocka_unit_test(test_pty),
		cmocka_unit_test(test_timeout_and_terminate),
		cmocka_unit_test(test_concurrent),
		cmocka_unit_test(test_profiles),
		cmocka_unit_test(test_fail_closed),
		cmocka_unit_test(test_dev_shm),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
