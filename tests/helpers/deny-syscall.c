/*
 * deny-syscall: run a program under a seccomp filter that answers chosen system calls with an
 * errno, as a container runtime's profile or systemd-nspawn does. Used by the tests of the
 * sandbox's diagnostics (a kernel with Landlock behind a filter is not a kernel without it).
 *
 *   deny-syscall ERRNO SYSCALL[,SYSCALL...] -- PROGRAM [ARG]...
 *
 * ERRNO is a number or one of EPERM, ENOSYS, EOPNOTSUPP, EACCES.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <seccomp.h>

static int
deny_errno(const char *s)
{
	static const struct {
		const char *name;
		int e;
	} names[] = {{"EPERM", EPERM}, {"ENOSYS", ENOSYS}, {"EOPNOTSUPP", EOPNOTSUPP},
		{"EACCES", EACCES}};

	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strcmp(s, names[i].name) == 0)
			return names[i].e;
	return (int)strtol(s, NULL, 10);
}

int
main(int argc, char **argv)
{
	scmp_filter_ctx ctx;
	char *list, *name, *save = NULL;
	int e, nr;

	if (argc < 5 || strcmp(argv[3], "--") != 0) {
		fprintf(stderr,
			"usage: deny-syscall ERRNO SYSCALL[,SYSCALL...] -- PROGRAM [ARG]...\n");
		return 2;
	}
	e = deny_errno(argv[1]);
	if ((ctx = seccomp_init(SCMP_ACT_ALLOW)) == NULL)
		return 2;
	list = argv[2];
	for (name = strtok_r(list, ",", &save); name != NULL; name = strtok_r(NULL, ",", &save)) {
		if ((nr = seccomp_syscall_resolve_name(name)) == __NR_SCMP_ERROR) {
			fprintf(stderr, "deny-syscall: unknown system call %s\n", name);
			return 2;
		}
		if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO((unsigned)e), nr, 0) != 0)
			return 2;
	}
	if (seccomp_load(ctx) != 0) {
		fprintf(stderr, "deny-syscall: seccomp_load failed\n");
		return 2;
	}
	seccomp_release(ctx);
	execvp(argv[4], argv + 4);
	fprintf(stderr, "deny-syscall: %s: %s\n", argv[4], strerror(errno));
	return 127;
}
