/*
 * Unix sockets on the host, seen from a sandbox (issue 21, item 2): with the network off, a
 * command must not reach a socket file listening outside, whatever the kind of socket it
 * uses. Before the datagram rule (sandbox/filter.c) a sendmsg naming the host socket, from a
 * datagram socket or from one end of a datagram socketpair, was delivered while connect and
 * sendto were already EPERM. Each check is made by build/helpers/try-syscall inside a real
 * sandbox, and the host listener counts what actually arrived. What stays reachable is
 * checked too (docs/sandbox.md "Unix sockets"): with the network on, socket files are
 * reachable, as under upstream's sandbox; socketpairs of the stream and seqpacket kinds work.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sandbox_util.h"
#include "protocol/xmalloc.h"

/* The try-syscall helper (absolute). */
static char *helper;

/* A socket of type bound at dir/name on the host (listening when a stream); its fd. */
static int
listener(const char *dir, const char *name, int type, char **path)
{
	struct sockaddr_un sun;
	int s = socket(AF_UNIX, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	*path = xasprintf("%s/%s", dir, name);
	assert_true(s >= 0);
	assert_true(strlen(*path) < sizeof sun.sun_path);
	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, *path, strlen(*path));
	assert_int_equal(bind(s, (struct sockaddr *)&sun, sizeof sun), 0);
	if (type == SOCK_STREAM)
		assert_int_equal(listen(s, 8), 0);
	return s;
}

/* The datagrams waiting on s, each followed by a space ("" when none). */
static char *
drain(int s)
{
	char buf[256], *all = xstrdup(""), *next;
	ssize_t n;

	while ((n = recv(s, buf, sizeof buf - 1, 0)) > 0) {
		buf[n] = '\0';
		next = xasprintf("%s%s ", all, buf);
		free(all);
		all = next;
	}
	assert_true(n == -1 && errno == EAGAIN);
	return all;
}

/* The three ways to send to a socket file, with their expected outcomes. */
static char *
sends(const char *path)
{
	return xasprintf("'%s' dgram-sendmsg:%s pair-sendmsg:%s seqpacket-sendmsg:%s", helper, path,
		path, path);
}

/* With the network off, nothing reaches a host datagram socket, under any policy. */
static void
test_dgram_network_off(void **state)
{
	struct asc *c = sbt_daemon(1, NULL); /* experimentalApi: permissionProfile */
	char *dir = sbt_mkdir_in(c, "s"), *path, *script, *got, *want;
	const char *extra;
	int s = listener(dir, "log", SOCK_DGRAM, &path);
	const char *const policies[] = {
		"{'sandboxPolicy':{'type':'readOnly'}}",
		/* The socket file inside a writable root changes nothing. */
		"{'sandboxPolicy':{'type':'workspaceWrite'}}",
		NULL,
	};

	script = sends(path);
	want = xasprintf("dgram-sendmsg:%s: EPERM\npair-sendmsg:%s: EPERM\n"
			 "seqpacket-sendmsg:%s: ENOTCONN\n",
		path, path, path);
	for (const char *const *p = policies; *p != NULL; p++) {
		sbt_expect(c, dir, *p, script, 0, want);
		got = drain(s);
		assert_string_equal(got, "");
		free(got);
	}
	/* Full disk write with the network off: seccomp alone, no Landlock, same rule. */
	extra = "{'permissionProfile':{'type':'managed','fileSystem':{'type':'unrestricted'},"
		"'network':'restricted'}}";
	sbt_expect(c, dir, extra, script, 0, want);
	got = drain(s);
	assert_string_equal(got, "");
	free(got);
	free(want);
	free(script);
	close(s);
	free(path);
	free(dir);
	asc_free(c);
}

/* What stays reachable: unsandboxed and with the network on, the datagrams arrive. */
static void
test_dgram_network_on(void **state)
{
	struct asc *c = sbt_daemon(0, NULL);
	char *dir = sbt_mkdir_in(c, "s"), *path, *script, *got, *want;
	int s = listener(dir, "log", SOCK_DGRAM, &path);

	script = sends(path);
	want = xasprintf("dgram-sendmsg:%s: OK\npair-sendmsg:%s: OK\n"
			 "seqpacket-sendmsg:%s: ENOTCONN\n",
		path, path, path);
	sbt_expect(c, dir, "{'sandboxPolicy':{'type':'dangerFullAccess'}}", script, 0, want);
	got = drain(s);
	assert_string_equal(got, "dgram pair ");
	free(got);
	sbt_expect(c, dir, "{'sandboxPolicy':{'type':'readOnly','networkAccess':true}}", script, 0,
		want);
	got = drain(s);
	assert_string_equal(got, "dgram pair ");
	free(got);
	free(want);
	free(script);
	close(s);
	free(path);
	free(dir);
	asc_free(c);
}

/* A stream listener: EPERM with the network off, reachable with it on; socketpairs work. */
static void
test_stream_and_pairs(void **state)
{
	struct asc *c = sbt_daemon(0, NULL);
	char *dir = sbt_mkdir_in(c, "s"), *path, *script, *want;
	int s = listener(dir, "srv", SOCK_STREAM, &path);

	script = xasprintf("'%s' connect-unix:%s socketpair-unix", helper, path);
	want = xasprintf("connect-unix:%s: EPERM\nsocketpair-unix: OK\n", path);
	sbt_expect(c, dir, "{'sandboxPolicy':{'type':'readOnly'}}", script, 0, want);
	free(want);
	want = xasprintf("connect-unix:%s: OK\nsocketpair-unix: OK\n", path);
	sbt_expect(c, dir, "{'sandboxPolicy':{'type':'readOnly','networkAccess':true}}", script, 0,
		want);
	/* Seqpacket pairs (Chromium's) stay (write and read: send is sendto, denied). */
	sbt_expect(c, dir, "{'sandboxPolicy':{'type':'readOnly'}}",
		"python3 -c 'import os, socket; a, b = socket.socketpair(socket.AF_UNIX, "
		"socket.SOCK_SEQPACKET); os.write(a.fileno(), b\"x\"); "
		"print(os.read(b.fileno(), 1))'",
		0, "b'x'\n");
	free(want);
	free(script);
	close(s);
	free(path);
	free(dir);
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
			"test_sandbox_unix: build/helpers/try-syscall is missing (make "
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
		cmocka_unit_test(test_dgram_network_off),
		cmocka_unit_test(test_dgram_network_on),
		cmocka_unit_test(test_stream_and_pairs),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
