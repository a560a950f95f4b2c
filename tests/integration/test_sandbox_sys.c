/*
 * The sandbox end to end, what a sandboxed process may still do: command/exec under
 * sandboxPolicy and permissionProfile against the real daemon. Privileges (no_new_privs, no
 * capabilities, no mount), the seccomp filter (each denied syscall's errno, printed by
 * build/helpers/try-syscall; foreign ABIs killed), the network (every "blocked" check has a
 * twin with networkAccess that succeeds against a loopback listener this test starts; no test
 * contacts a non-loopback address), abstract unix sockets and signals scoped away from the
 * host, a PTY under every policy and ^C through it, timeouts and terminate killing the whole
 * sandbox, parallel sandboxes sharing one workspace, and setup failures that fail closed.
 * test_sandbox_fs.c has the filesystem policies.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "protocol/base64.h"
#include "protocol/buf.h"
#include "sandbox_util.h"
#include "protocol/xmalloc.h"

#define DELTA "command/exec/outputDelta"

/* The try-syscall helper (absolute). */
static char *helper;

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

/* Kill a child of ours and reap it. */
static void
child_stop(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static void
test_privileges(void **state)
{
	struct asc *c = sbt_daemon(0, NULL);
	char *script = xasprintf("'%s' nnp caps mount", helper);

	sbt_expect(c, NULL, "{'sandboxPolicy':{'type':'readOnly'}}", script, 0,
		"nnp: = 1\ncaps: = 0 0 0 0\nmount: EPERM\n");
	sbt_expect(c, NULL, "{'sandboxPolicy':{'type':'workspaceWrite','networkAccess':true}}",
		script, 0, "nnp: = 1\ncaps: = 0 0 0 0\nmount: EPERM\n");
	sbt_expect(c, NULL, "{'sandboxPolicy':{'type':'readOnly'}}",
		"python3 -c 'import ctypes; print(ctypes.CDLL(None).prctl(39, 0, 0, 0, 0))'", 0,
		"1\n");
	/* Unsandboxed, the daemon's root keeps its capabilities: the test proves the difference. */
	sbt_expect(c, NULL, "{'sandboxPolicy':{'type':'dangerFullAccess'}}",
		"grep -q '^NoNewPrivs:.0' /proc/self/status && echo free", 0, "free\n");
	free(script);
	asc_free(c);
}

static void
test_syscalls(void **state)
{
	struct asc *c = sbt_daemon(0, NULL);
	char *script;

	script = xasprintf(
		"'%s' socket-unix socketpair-unix socket-inet socket-inet6 "
		"socket-netlink socket-packet socket-vsock socketpair-inet io_uring_setup "
		"ptrace process_vm_readv tiocsti tioclinux bind-tcp",
		helper);
	sbt_expect(c, NULL, "{'sandboxPolicy':{'type':'readOnly'}}", script, 0,
		"socket-unix: OK\nsocketpair-unix: OK\nsocket-inet: EPERM\nsocket-inet6: EPERM\n"
		"socket-netlink: EPERM\nsocket-packet: EPERM\nsocket-vsock: EPERM\n"
		"socketpair-inet: EPERM\nio_uring_setup: EPERM\nptrace: EPERM\n"
		"process_vm_readv: EPERM\ntiocsti: EPERM\ntioclinux: EPERM\nbind-tcp: EPERM\n");
	free(script);
	/* Network enabled: sockets work, vsock, io_uring, ptrace and TIOCSTI still do not. */
	script = xasprintf("'%s' socket-inet socket-vsock io_uring_setup ptrace tiocsti", helper);
	sbt_expect(c, NULL, "{'sandboxPolicy':{'type':'workspaceWrite','networkAccess':true}}",
		script, 0,
		"socket-inet: OK\nsocket-vsock: EPERM\nio_uring_setup: EPERM\nptrace: EPERM\n"
		"tiocsti: EPERM\n");
	/* The same calls unsandboxed fail harmlessly with another errno (or work). */
	sbt_expect(c, NULL, "{'sandboxPolicy':{'type':'dangerFullAccess'}}", script, 0, NULL);
	free(script);
	/* A foreign ABI (i386 int 0x80, x32) kills the process: 128 + SIGSYS. */
	script = xasprintf("'%s' i386", helper);
	sbt_expect(c, NULL, "{'sandboxPolicy':{'type':'readOnly'}}", script, 128 + SIGSYS, "");
	free(script);
	script = xasprintf("'%s' x32", helper);
	sbt_expect(c, NULL, "{'sandboxPolicy':{'type':'readOnly','networkAccess':true}}", script,
		128 + SIGSYS, "");
	free(script);
	/* strace needs ptrace. */
	sbt_expect(c, NULL, "{'sandboxPolicy':{'type':'readOnly'}}",
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
	struct asc *c = sbt_daemon(0, NULL);
	struct sbt_out o;
	pid_t srv;
	int port = http_start(&srv);
	char *script = xasprintf(tools, port, helper);

	/* The listener answers when the network is allowed... */
	sbt_exec_ok(c,
		sbt_sh(NULL, "{'sandboxPolicy':{'type':'readOnly','networkAccess':true}}", script),
		&o);
	if (strncmp(o.out, "ok\ncurl=0\nok wget=0\nnc=0\ndevtcp=0\n", 33) != 0 ||
		strstr(o.out, ": OK\n") == NULL)
		fail_msg("network enabled: %s / %s", o.out, o.err);
	sbt_out_free(&o);
	/* ... and every tool fails, at the socket, when it is restricted. */
	sbt_exec_ok(c, sbt_sh(NULL, "{'sandboxPolicy':{'type':'readOnly'}}", script), &o);
	if (strncmp(o.out, "curl=7\n wget=4\nnc=1\ndevtcp=1\n", 29) != 0 ||
		strstr(o.out, ": EPERM\n") == NULL)
		fail_msg("network restricted: %s / %s", o.out, o.err);
	sbt_out_free(&o);
	sbt_exec_ok(c,
		sbt_sh(NULL, "{'sandboxPolicy':{'type':'workspaceWrite'}}",
			"bash -c 'echo hi > /dev/tcp/127.0.0.1/1' 2>&1; "
			"ssh -o BatchMode=yes -o ConnectTimeout=1 -p 1 127.0.0.1 true 2>&1; "
			"ping -c 1 -W 1 127.0.0.1 >/dev/null 2>&1 || echo ping-denied; "
			"getent ahosts example.invalid || echo getent-denied"),
		&o);
	if (strstr(o.out, "bash: socket: Operation not permitted") == NULL ||
		strstr(o.out, "socket: Operation not permitted") == NULL ||
		strstr(o.out, "ping-denied\ngetent-denied\n") == NULL)
		fail_msg("restricted tools: %s", o.out);
	sbt_out_free(&o);
	child_stop(srv);
	free(script);
	asc_free(c);
}

static void
test_unix_and_signals(void **state)
{
	struct asc *c = sbt_daemon(0, NULL);
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
	sbt_expect(c, NULL, "{'sandboxPolicy':{'type':'dangerFullAccess'}}",
		xasprintf("'%s' connect-abstract:%s", helper, name), 0,
		xasprintf("connect-abstract:%s: OK\n", name));
	sbt_expect(c, NULL, "{'sandboxPolicy':{'type':'readOnly','networkAccess':true}}", script, 0,
		xasprintf("connect-abstract:%s: EPERM\nkill:1: EPERM\nkill:%d: ESRCH\n"
			  "socketpair-unix: OK\n",
			name, (int)asc_pid(c)));
	sbt_expect(c, NULL, "{'sandboxPolicy':{'type':'readOnly'}}", script, 0,
		xasprintf("connect-abstract:%s: EPERM\nkill:1: EPERM\nkill:%d: ESRCH\n"
			  "socketpair-unix: OK\n",
			name, (int)asc_pid(c)));
	/* kill(1) from a shell: the host's processes are not even visible. */
	sbt_expect(c, NULL, "{'sandboxPolicy':{'type':'readOnly'}}",
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

/* Take messages until the answer to id, dropping process name's output; its exit code. */
static long long
collect_exit(struct asc *c, long long id, const char *name)
{
	char *buf = NULL;
	json_t *m = collect(c, id, name, &buf, asc_timeout(SBT_REPLY));
	long long code =
		json_integer_value(json_object_get(json_object_get(m, "result"), "exitCode"));

	json_decref(m);
	free(buf);
	return code;
}

/* A follow-up request (write, terminate) that must succeed. */
static void
call_ok(struct asc *c, const char *method, json_t *params)
{
	json_t *m = asc_wait_response(c, asc_request(c, method, params), asc_timeout(SBT_REPLY));

	asc_assert_result(m);
	json_decref(m);
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
	struct asc *c = sbt_daemon(1, NULL);
	char *ws = sbt_mkdir_in(c, "ws"), *buf, name[16];
	long long id;
	json_t *m, *p;
	size_t i;

	for (i = 0; i < sizeof policies / sizeof policies[0]; i++) {
		snprintf(name, sizeof name, "pty%zu", i);
		p = sbt_sh(ws, policies[i],
			"stty size; test -t 0 && test -t 1 && echo tty; echo hi > /dev/tty && "
			"echo devtty; echo out > /dev/stdout");
		json_object_set_new(p, "tty", json_true());
		json_object_set_new(p, "processId", json_string(name));
		id = asc_request(c, "command/exec", p);
		buf = NULL;
		m = collect(c, id, name, &buf, asc_timeout(SBT_REPLY));
		asc_assert_result(m);
		if (json_integer_value(json_object_get(json_object_get(m, "result"), "exitCode")) !=
				0 ||
			buf == NULL || strcmp(buf, "24 80\r\ntty\r\nhi\r\ndevtty\r\nout\r\n") != 0)
			fail_msg("pty under %s: %s / %s", policies[i], buf != NULL ? buf : "",
				asc_raw(c));
		json_decref(m);
		free(buf);
	}
	/*
	 * ^C reaches a sandboxed command on its terminal. `exec`: dash catches SIGINT while it
	 * waits for a child, so a ^C landing between its fork and the child's exec is consumed by
	 * the not-yet-exec'd child's copy of that handler and lost (a shell race, ~2 % of runs).
	 */
	p = sbt_sh(ws, "{'sandboxPolicy':{'type':'workspaceWrite'}}", "echo ready; exec sleep 20");
	json_object_set_new(p, "tty", json_true());
	json_object_set_new(p, "processId", json_string("intr"));
	id = asc_request(c, "command/exec", p);
	m = asc_wait_notification(c, DELTA, asc_timeout(SBT_REPLY)); /* "ready": it runs */
	json_decref(m);
	call_ok(c, "command/exec/write",
		json_pack("{s:s, s:s}", "processId", "intr", "deltaBase64", "Aw=="));
	assert_int_equal(collect_exit(c, id, "intr"), 130);
	sbt_assert_no_residue(ws);
	free(ws);
	asc_free(c);
}

static void
test_timeout_and_terminate(void **state)
{
	struct asc *c = sbt_daemon(0, NULL);
	char *ws = sbt_mkdir_in(c, "ws");
	long long t0 = asc_now_ms(), id;
	json_t *p, *m;

	/* The timeout kills the whole sandbox, background jobs included: 124. */
	sbt_expect(c, ws, "{'timeoutMs':300,'sandboxPolicy':{'type':'workspaceWrite'}}",
		"sleep 30 & sleep 30", 124, "");
	assert_true(asc_now_ms() - t0 < asc_timeout(5000));
	sbt_assert_no_residue(ws);
	sbt_expect(c, ws, "{'timeoutMs':300,'sandboxPolicy':{'type':'readOnly'}}", "sleep 30", 124,
		"");
	/* terminate: 137, and the placeholders are gone once the answer is out. */
	p = sbt_sh(ws, "{'sandboxPolicy':{'type':'workspaceWrite'},'streamStdoutStderr':true}",
		"echo started; sleep 30");
	json_object_set_new(p, "processId", json_string("t1"));
	id = asc_request(c, "command/exec", p);
	m = asc_wait_notification(c, DELTA, asc_timeout(SBT_REPLY));
	json_decref(m);
	assert_true(sbt_present(ws, ".codex"));
	call_ok(c, "command/exec/terminate", json_pack("{s:s}", "processId", "t1"));
	assert_int_equal(collect_exit(c, id, "t1"), 137);
	sbt_assert_no_residue(ws);
	free(ws);
	asc_free(c);
}

static void
test_concurrent(void **state)
{
	struct asc *c = sbt_daemon(0, NULL);
	char *ws = sbt_mkdir_in(c, "ws"), name[8];
	long long ids[6];
	json_t *p, *m, *r;
	int i;

	/* Parallel sandboxes in one workspace share the placeholders; the last one removes them. */
	for (i = 0; i < 6; i++) {
		snprintf(name, sizeof name, "c%d", i);
		p = sbt_sh(ws, "{'sandboxPolicy':{'type':'workspaceWrite'}}",
			"sleep 0.2; mkdir .codex 2>/dev/null || echo held");
		json_object_set_new(p, "processId", json_string(name));
		ids[i] = asc_request(c, "command/exec", p);
	}
	for (i = 0; i < 6; i++) {
		m = asc_wait_response(c, ids[i], asc_timeout(SBT_REPLY));
		r = asc_assert_result(m);
		assert_int_equal(json_integer_value(json_object_get(r, "exitCode")), 0);
		assert_string_equal(json_string_value(json_object_get(r, "stdout")), "held\n");
		json_decref(m);
	}
	sbt_assert_no_residue(ws);
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
		c = sbt_daemon(0, env);
		ws = sbt_mkdir_in(c, "ws");
		msg = sbt_exec_err(c,
			sbt_sh(ws, "{'sandboxPolicy':{'type':'workspaceWrite'}}",
				"echo ran > marker"),
			-32603);
		want = xasprintf("sandbox setup failed: %s: Operation not permitted (os error 1)",
			faults[i][1]);
		assert_string_equal(msg, want);
		assert_false(sbt_present(ws, "marker"));
		sbt_assert_no_residue(ws);
		/* Unsandboxed policies never touch the sandbox. */
		sbt_expect(c, ws, "{'sandboxPolicy':{'type':'dangerFullAccess'}}", "echo ran", 0,
			"ran\n");
		free(want);
		free(msg);
		free(ws);
		free((char *)env[0]);
		asc_free(c);
	}
	/* A command that cannot be executed inside the sandbox: the spawn error, not a hang. */
	c = sbt_daemon(0, NULL);
	msg = sbt_exec_err(c,
		json_pack("{s:[s], s:{s:s}}", "command", "/nonexistent/app-server-cmd",
			"sandboxPolicy", "type", "readOnly"),
		-32603);
	assert_string_equal(msg, "failed to spawn command: No such file or directory (os error 2)");
	free(msg);
	asc_free(c);
}

/* Run argv with stdout and stderr into one string (heap); *status its wait status. */
static char *
sys_run(char *const argv[], int *status)
{
	struct buf out;
	char chunk[4096];
	ssize_t n;
	pid_t pid;
	int p[2];

	buf_init(&out, 1 << 20);
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	if ((pid = fork()) == 0) {
		dup2(p[1], 1);
		dup2(p[1], 2);
		execv(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	while ((n = read(p[0], chunk, sizeof chunk)) > 0)
		buf_add(&out, chunk, (size_t)n);
	close(p[0]);
	assert_int_equal(waitpid(pid, status, 0), pid);
	return buf_steal(&out, NULL);
}

/*
 * A kernel with Landlock behind a syscall filter is not a kernel without it: --check and the
 * setup error name the errno and what it means (docs/sandbox.md, "Diagnostics").
 */
static void
test_landlock_diagnostics(void **state)
{
	static const char *const cases[][2] = {
		{"EPERM", "landlock_create_ruleset failed with EPERM: a syscall filter blocks it"},
		{"EACCES",
			"landlock_create_ruleset failed with EACCES: a syscall filter blocks it"},
		{"ENOSYS",
			"landlock_create_ruleset failed with ENOSYS: the kernel was built without "
			"Landlock"},
		{"EOPNOTSUPP",
			"landlock_create_ruleset failed with EOPNOTSUPP: Landlock is built "
			"into the kernel but disabled at boot"},
	};
	const char *bin = getenv("APP_SERVER_BIN");
	char *deny, *server, *out, *want;
	int status;

	deny = realpath("build/helpers/deny-syscall", NULL);
	server = realpath(bin != NULL ? bin : "build/app-server", NULL);
	assert_non_null(deny);
	assert_non_null(server);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *check[] = {deny, (char *)cases[i][0], "landlock_create_ruleset", "--", server,
			"sandbox", "--check", NULL};
		char *run[] = {deny, (char *)cases[i][0], "landlock_create_ruleset", "--", server,
			"sandbox", "--", "/bin/true", NULL};

		out = sys_run(check, &status);
		want = xasprintf("landlock: no (%s", cases[i][1]);
		if (strstr(out, want) == NULL || !strstr(out, "runs under a seccomp filter"))
			fail_msg("%s: sandbox --check says:\n%s", cases[i][0], out);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) != 0);
		free(want);
		free(out);
		/* The error a sandboxed request gets is the same text. */
		out = sys_run(run, &status);
		want = xasprintf("sandbox setup failed: landlock: %s", cases[i][1]);
		if (strstr(out, want) == NULL)
			fail_msg("%s: sandbox -- true says:\n%s", cases[i][0], out);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) != 0);
		free(want);
		free(out);
	}
	free(deny);
	free(server);
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
			"test_sandbox_sys: build/helpers/try-syscall is missing (make "
			"build/helpers/try-syscall)\n");
		return -1;
	}
	return 0;
}

/* Free what group_setup found. */
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
		cmocka_unit_test(test_privileges),
		cmocka_unit_test(test_syscalls),
		cmocka_unit_test(test_network),
		cmocka_unit_test(test_unix_and_signals),
		cmocka_unit_test(test_pty),
		cmocka_unit_test(test_timeout_and_terminate),
		cmocka_unit_test(test_concurrent),
		cmocka_unit_test(test_fail_closed),
		cmocka_unit_test(test_landlock_diagnostics),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
