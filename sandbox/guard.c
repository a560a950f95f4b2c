/*
 * The guard: protected paths stay protected for the sandbox's whole life, not just at the
 * instant they were looked at (docs/sandbox.md, "Protected paths").
 *
 * A protected name (.git, .codex, .agents, a gitdir, CODEX_HOME) is covered by a read-only
 * mount in the sandbox's own mount namespace. Outside processes can still remove or rename
 * the name on the host: the kernel then detaches mounts on it in every other namespace
 * (since Linux 3.18), so the command would see the name vanish and could create it on the
 * host. Two checks close that:
 *  - at the end of setup, guard_verify() looks every protected name up again: it must still
 *    be the root of the tree we bound there; if it changed during setup the request fails
 *    ("protected path P changed during setup") and nothing runs;
 *  - while the command runs, the init is told of changes in the protected names' parent
 *    directories (an inotify instance the daemon made, guard_open / guard_arm: a SIGIO to the
 *    init); an event naming a protected name makes it look again (guard_breached), and a
 *    name no longer covered kills the whole sandbox at once, saying why on the command's
 *    stderr; when the command ends first, it is reported killed all the same. The window
 *    left is the time from the outside rmdir to the init's SIGKILL.
 * guard_open runs in the daemon; the rest in the sandbox's init, with async-signal-safe calls
 * only.
 */
#include <sys/inotify.h>
#include <sys/sysmacros.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sandbox_int.h"
#include "sandbox/spawn/spawn.h"
#include "protocol/xmalloc.h"

/* Whether op's name is still the root of the tree we bound on it; 0 or an errno. */
static int
guard_check(const struct sbx_op *op)
{
	const char *name = strrchr(op->path, '/') + 1;
	struct statx stx;

	if (statx(op->pdir, name, AT_SYMLINK_NOFOLLOW | AT_STATX_SYNC_AS_STAT, STATX_INO, &stx) ==
		-1)
		return errno;
	if ((stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) != 0 &&
		(stx.stx_attributes & STATX_ATTR_MOUNT_ROOT) == 0)
		return ESTALE; /* the name is there, our mount is not */
	if (stx.stx_ino != op->mino || makedev(stx.stx_dev_major, stx.stx_dev_minor) != op->mdev)
		return ESTALE;
	return 0;
}

/* At the end of setup: every protected mount still in place; 0 or an SBX_ERR naming it. */
int
guard_verify(struct sandbox *sb)
{
	int err;

	for (size_t i = 0; i < sb->nops; i++) {
		if (sb->ops[i].kind != SBX_OP_PROTECT || !sb->ops[i].mounted)
			continue;
		if ((err = guard_check(&sb->ops[i])) != 0)
			return SBX_ERR(SBX_STEP_OP + (int)i, err);
	}
	return 0;
}

/*
 * In the daemon, when the sandbox is planned: an inotify instance watching the parents of the
 * protected names (sb->guard; 0, or -1 with *cause). The daemon creates and finally closes
 * it, not the init: the last close of an instance with watches waits for an SRCU grace period
 * (8-10 ms here), which would delay every sandboxed command's exit; spawn_release closes the
 * daemon's copy on a thread once the init is gone (spawn_close_later).
 */
int
guard_open(struct sandbox *sb, char **cause)
{
	char *parent;
	int fd = -1, e;

	for (size_t i = 0; i < sb->nops; i++) {
		const struct sbx_op *op = &sb->ops[i];

		if (op->kind != SBX_OP_PROTECT)
			continue;
		if (fd < 0 && (fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK)) == -1)
			goto fail;
		parent = plan_dirname(op->path);
		e = inotify_add_watch(
			    fd, parent, IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_ONLYDIR) == -1
			? errno
			: 0;
		free(parent);
		/* A parent that is not there cannot hold a cover: the setup fails on it. */
		if (e != 0 && e != ENOENT && e != ENOTDIR) {
			errno = e;
			goto fail;
		}
	}
	sb->guard = fd;
	return 0;
fail:
	e = errno;
	if (fd >= 0)
		spawn_close_later(fd);
	*cause = xasprintf("sandbox setup failed: protected paths: inotify: %s (os error %d)%s",
		strerror(e), e,
		e == EMFILE ? ": one instance per running sandbox; raise "
			      "fs.inotify.max_user_instances (default 128)"
			    : "");
	return -1;
}

/* In the init, before the command runs: events on the watches raise SIGIO at it; 0 or errno. */
int
guard_arm(struct sandbox *sb)
{
	if (sb->guard < 0)
		return 0;
	if (fcntl(sb->guard, F_SETOWN, getpid()) == -1 ||
		fcntl(sb->guard, F_SETFL, O_ASYNC | O_NONBLOCK) == -1)
		return errno;
	return 0;
}

/* Say on the command's stderr why the sandbox was killed (best effort). */
static void
guard_say(struct sandbox *sb, const char *path)
{
	static const char pre[] = "\napp-server sandbox: protected path ",
			  post[] = " was removed or replaced from outside the sandbox: "
				   "the command was killed\n";

	if (sb->errfd < 0)
		return;
	(void)!write(sb->errfd, pre, sizeof pre - 1);
	(void)!write(sb->errfd, path, strlen(path));
	(void)!write(sb->errfd, post, sizeof post - 1);
}

/* Whether an event's name is one of the protected names. */
static int
guard_named(const struct sandbox *sb, const char *name)
{
	for (size_t i = 0; i < sb->nops; i++)
		if (sb->ops[i].kind == SBX_OP_PROTECT && sb->ops[i].mounted &&
			strcmp(strrchr(sb->ops[i].path, '/') + 1, name) == 0)
			return 1;
	return 0;
}

/*
 * After a SIGIO (all = 0), or when the command has ended (all = 1: its success must not be
 * reported if it ran uncovered, however briefly): drain the events; 1 when a protected name
 * is no longer covered (the sandbox must die now), else 0. An overflowed queue looks at
 * every name.
 */
int
guard_breached(struct sandbox *sb, int fd, int all)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	const struct inotify_event *ev;
	int look = all;
	ssize_t n;

	while ((n = read(fd, buf, sizeof buf)) > 0)
		for (char *p = buf; p < buf + n; p += sizeof *ev + ev->len) {
			ev = (const struct inotify_event *)p;
			if ((ev->mask & IN_Q_OVERFLOW) ||
				(ev->len > 0 && guard_named(sb, ev->name)))
				look = 1;
		}
	if (!look)
		return 0;
	for (size_t i = 0; i < sb->nops; i++) {
		const struct sbx_op *op = &sb->ops[i];

		if (op->kind == SBX_OP_PROTECT && op->mounted && guard_check(op) != 0) {
			guard_say(sb, op->path);
			return 1;
		}
	}
	return 0;
}
