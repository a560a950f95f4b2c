/*
 * Landlock: the second file system barrier, under the mount view. It cannot express
 * read-only carve-outs (rules only add rights), so the mounts make .git read-only and mask
 * denied paths; Landlock bounds what the command may change to the writable roots and a few
 * device nodes, and, where the kernel has them, denies TCP bind/connect (ABI 4), scopes
 * abstract unix sockets and signals to the sandbox (ABI 6) and, with the network off, denies
 * reaching any socket file made outside the sandbox (ABI 9: RESOLVE_UNIX is handled and
 * granted nowhere, so connect and sendmsg to a host socket fail with EACCES; sockets the
 * sandbox made itself stay reachable). Seccomp closes the same door on older kernels
 * (filter.c: no unix datagram sockets).
 *
 * The ABI is probed once in the parent; the rights are lowered to it (best effort, as the
 * kernel's sandboxer sample does). The ruleset is built by the sandbox's init after the
 * mounts, from paths in the final view (so the fresh /dev and /dev/pts have their rules),
 * and the command restricts itself with it right before seccomp. The system headers may
 * predate the ABI in use, so the constants are ours.
 */
#include <sys/stat.h>
#include <sys/syscall.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sandbox_int.h"

#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH	  1

#define LL_FS_EXECUTE	   (1ULL << 0)
#define LL_FS_WRITE_FILE   (1ULL << 1)
#define LL_FS_READ_FILE	   (1ULL << 2)
#define LL_FS_READ_DIR	   (1ULL << 3)
#define LL_FS_REMOVE_DIR   (1ULL << 4)
#define LL_FS_REMOVE_FILE  (1ULL << 5)
#define LL_FS_MAKE_CHAR	   (1ULL << 6)
#define LL_FS_MAKE_DIR	   (1ULL << 7)
#define LL_FS_MAKE_REG	   (1ULL << 8)
#define LL_FS_MAKE_SOCK	   (1ULL << 9)
#define LL_FS_MAKE_FIFO	   (1ULL << 10)
#define LL_FS_MAKE_BLOCK   (1ULL << 11)
#define LL_FS_MAKE_SYM	   (1ULL << 12)
#define LL_FS_REFER	   (1ULL << 13) /* ABI 2 */
#define LL_FS_TRUNCATE	   (1ULL << 14) /* ABI 3 */
#define LL_FS_IOCTL_DEV	   (1ULL << 15) /* ABI 5 */
#define LL_FS_RESOLVE_UNIX (1ULL << 16) /* ABI 9 */

#define LL_NET_BIND_TCP	   (1ULL << 0) /* ABI 4 */
#define LL_NET_CONNECT_TCP (1ULL << 1)

#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0) /* ABI 6 */
#define LL_SCOPE_SIGNAL		      (1ULL << 1)

#define LL_FS_READ (LL_FS_EXECUTE | LL_FS_READ_FILE | LL_FS_READ_DIR)
#define LL_FS_FILE                                                                                 \
	(LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV)
#define LL_FS_RW   (LL_FS_READ_FILE | LL_FS_WRITE_FILE | LL_FS_TRUNCATE)
#define LL_MAX_ABI 9

/* The newest layout of the ruleset attributes; older kernels take its zeroed tail. */
struct ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

struct ll_path_beneath {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

/* The device nodes of the fresh /dev, and what the command may do with them. */
static const struct {
	const char *path;
	uint64_t access;
} ll_devices[] = {
	{"/dev/null", LL_FS_RW},
	{"/dev/zero", LL_FS_RW},
	{"/dev/full", LL_FS_RW},
	{"/dev/random", LL_FS_RW},
	{"/dev/urandom", LL_FS_RW},
	{"/dev/tty", LL_FS_RW | LL_FS_IOCTL_DEV},
	{"/dev/pts", LL_FS_RW | LL_FS_IOCTL_DEV},
};

static int ll_errno; /* what the probe's landlock_create_ruleset failed with */

/* The kernel's Landlock ABI (capped to what we know), probed once; 0 without Landlock. */
int
landlock_abi(void)
{
	static int abi = -1;
	long v;

	if (abi >= 0)
		return abi;
	v = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
	ll_errno = v < 0 ? errno : 0;
	abi = v < 0 ? 0 : v > LL_MAX_ABI ? LL_MAX_ABI : (int)v;
	return abi;
}

/* Whether a seccomp filter is on this process (/proc/self/status "Seccomp: 2"). */
static int
landlock_filtered(void)
{
	char line[256];
	FILE *f = fopen("/proc/self/status", "re");
	int mode = -1;

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof line, f) != NULL)
		if (sscanf(line, "Seccomp: %d", &mode) == 1)
			break;
	fclose(f);
	return mode == 2;
}

/*
 * Why Landlock is missing, from the probe's errno: the kernel's answers are ENOSYS (not built
 * in), EOPNOTSUPP (built in, not enabled at boot); a syscall filter of a container runtime
 * answers EPERM (or ENOSYS), and then the kernel may well have Landlock. Empty with Landlock.
 */
const char *
landlock_why(void)
{
	static char why[400];
	const char *filter = landlock_filtered() ? "; this process runs under a seccomp filter, "
						   "which may be what answers"
						 : "";
	int e;

	if (landlock_abi() > 0)
		return "";
	e = ll_errno;
	switch (e) {
	case ENOSYS:
		snprintf(why, sizeof why,
			"landlock_create_ruleset failed with ENOSYS: the kernel was built without "
			"Landlock (CONFIG_SECURITY_LANDLOCK)%s",
			filter);
		break;
	case EOPNOTSUPP:
		snprintf(why, sizeof why,
			"landlock_create_ruleset failed with EOPNOTSUPP: Landlock is built into the "
			"kernel but disabled at boot (add landlock to the lsm= kernel parameter)%s",
			filter);
		break;
	case EPERM:
	case EACCES:
		snprintf(why, sizeof why,
			"landlock_create_ruleset failed with %s: a syscall filter blocks it (a "
			"container runtime's seccomp profile, systemd-nspawn); the kernel itself may "
			"have Landlock: allow landlock_create_ruleset, landlock_add_rule and "
			"landlock_restrict_self%s",
			strerrorname_np(e), filter);
		break;
	default:
		snprintf(why, sizeof why, "landlock_create_ruleset failed with %s (%s)%s",
			strerrorname_np(e) != NULL ? strerrorname_np(e) : "an unknown errno",
			strerror(e), filter);
	}
	return why;
}

/* Every file system right this ABI handles (net: whether the sandbox has the network). */
static uint64_t
landlock_fs_handled(int abi, int net)
{
	uint64_t fs = LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_READ_DIR |
		LL_FS_REMOVE_DIR | LL_FS_REMOVE_FILE | LL_FS_MAKE_CHAR | LL_FS_MAKE_DIR |
		LL_FS_MAKE_REG | LL_FS_MAKE_SOCK | LL_FS_MAKE_FIFO | LL_FS_MAKE_BLOCK |
		LL_FS_MAKE_SYM;

	if (abi >= 2)
		fs |= LL_FS_REFER;
	if (abi >= 3)
		fs |= LL_FS_TRUNCATE;
	if (abi >= 5)
		fs |= LL_FS_IOCTL_DEV;
	/* With the network on, host sockets are reachable, as under upstream's sandbox. */
	if (abi >= 9 && !net)
		fs |= LL_FS_RESOLVE_UNIX;
	return fs;
}

/* In the child: allow access beneath fd (a directory, or a file: file rights only). */
static int
landlock_rule_fd(int ruleset, int fd, uint64_t access, uint64_t handled)
{
	struct ll_path_beneath pb;
	struct stat st;

	if (fstat(fd, &st) == -1)
		return errno;
	if (!S_ISDIR(st.st_mode))
		access &= LL_FS_FILE;
	pb.allowed_access = access & handled;
	pb.parent_fd = fd;
	if (pb.allowed_access == 0)
		return 0;
	if (syscall(SYS_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &pb, 0) == -1)
		return errno;
	return 0;
}

/* In the child: allow access beneath path; a missing path is skipped. */
static int
landlock_rule_path(int ruleset, const char *path, uint64_t access, uint64_t handled)
{
	int fd, err;

	if ((fd = open(path, O_PATH | O_CLOEXEC)) == -1)
		return errno == ENOENT ? 0 : errno;
	err = landlock_rule_fd(ruleset, fd, access, handled);
	close(fd);
	return err;
}

/* In the child (the init, after the mounts): build the ruleset into sb->ruleset; 0 or errno. */
int
landlock_build(struct sandbox *sb)
{
	struct ll_ruleset_attr attr;
	struct stat st;
	uint64_t handled = landlock_fs_handled(sb->ll_abi, sb->net);
	/* What a rule may grant: never RESOLVE_UNIX, which stays handled and denied. */
	uint64_t fs = handled & ~LL_FS_RESOLVE_UNIX;
	size_t i;
	int rs, fd, err;

	memset(&attr, 0, sizeof attr);
	attr.handled_access_fs = handled;
	if (!sb->net && sb->ll_abi >= 4)
		attr.handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
	if (sb->ll_abi >= 6)
		attr.scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL;
	if ((rs = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0)) == -1)
		return errno;
	sb->ruleset = rs;
	if ((err = landlock_rule_path(rs, "/", sb->root_write ? fs : LL_FS_READ, fs)) != 0)
		return err;
	for (i = 0; i < sb->nwritable; i++)
		if ((err = landlock_rule_path(rs, sb->writable[i], fs, fs)) != 0)
			return err;
	for (i = 0; i < sizeof ll_devices / sizeof ll_devices[0]; i++)
		if ((err = landlock_rule_path(rs, ll_devices[i].path, ll_devices[i].access, fs)) !=
			0)
			return err;
	if ((err = landlock_rule_path(rs, "/dev/shm", fs, fs)) != 0)
		return err;
	/* A terminal we were given (the PTY slave, a CLI's tty) lives outside the view. */
	for (fd = 0; fd < 3; fd++) {
		if (fstat(fd, &st) == 0 && S_ISCHR(st.st_mode) &&
			(err = landlock_rule_fd(rs, fd, LL_FS_RW | LL_FS_IOCTL_DEV, fs)) != 0)
			return err;
	}
	return 0;
}

/* In the command (no_new_privs set): enforce the ruleset; 0 or errno. */
int
landlock_restrict(struct sandbox *sb)
{
	if (syscall(SYS_landlock_restrict_self, sb->ruleset, 0) == -1)
		return errno;
	return 0;
}
