/*
 * Cgroups per command (cgroup.h). Layout, in each hierarchy in use:
 *   <our own cgroup>/app-server-<pid>/c<n>     (and the owner's marker, .../lock)
 * The "app-server-<pid>" directory has no process of its own, so the v2 pids controller can be
 * enabled for its children when our cgroup delegates it; it is ours while we hold its lock
 * (cgroup_owner.c), and the leftovers of dead daemons are killed before it is made. Rules:
 *  - Everything is probed once; cgroup_new fails (and spawn falls back) when nothing works.
 *  - A child is born in its v2 cgroup (clone3's CLONE_INTO_CGROUP) or joins by writing "0" to
 *    the fds of cgroup_join_fds before it forks anything, so no descendant can start outside.
 *    Writing cgroup.procs moves a task: the kernel then waits for an RCU grace period (the
 *    threadgroup rwsem's writer side), 5-15 ms on a loaded machine for a command started
 *    after a pause; being born there costs nothing. A v1 pids cgroup (no clone into it) is
 *    joined only when it caps the command or holds the only kill.
 *  - A cgroup is killed (cgroup.kill, or a pid-by-pid sweep on v1 alone) when its command is
 *    over; an empty one is kept for reuse (CGROUP_POOL), a busy one is retried later, so the
 *    daemon never waits for the kernel to finish killing.
 *  - A cgroup removed under us anyway (an older daemon of another PID namespace sweeping)
 *    is dropped, and cgroup_renew makes our directory again, so one command is retried
 *    rather than every later one failing.
 */
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
#include "cgroup_int.h"
#include "protocol/xmalloc.h"

#define CGROUP_POOL	  4  /* empty cgroups kept for reuse */
#define CGROUP_GRAVE	  64 /* killed cgroups whose processes are still dying, at most */
#define CGROUP_SWEEP	  64 /* rounds of a v1 kill sweep */
#define CGROUP_CLONE_INTO 0x200000000ULL /* CLONE_INTO_CGROUP (linux/sched.h, not glibc's) */

struct cgroup {
	char *dir[2];	/* v2 (kill), pids (v1 or v2; may equal dir[0]'s hierarchy) */
	int procs[2];	/* cgroup.procs of each, O_WRONLY, or -1 */
	int kill_fd;	/* v2 cgroup.kill, or -1 */
	int dir_fd;	/* the v2 directory (CLONE_INTO_CGROUP), or -1 */
	int killed;	/* cgroup_kill ran: never cloned into again (cgroup_reap_graves) */
	unsigned limit; /* pids.max written, 0 for "max" */
};

/* clone3 into the v2 cgroup dir_fd, the child's exit reported with sig (0: none). */
static pid_t
cgroup_clone3(unsigned long clone_flags, int dir_fd, int sig)
{
	struct {
		uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
		uint64_t set_tid, set_tid_size, cgroup;
	} ca = {0}; /* clone_args, version 2 (Linux 5.7, the first with CLONE_INTO_CGROUP) */

	/* No new stack: the child continues on a copy of ours, like fork(). */
	ca.flags = clone_flags | CGROUP_CLONE_INTO;
	ca.exit_signal = (uint64_t)sig;
	ca.cgroup = (uint64_t)dir_fd;
	return (pid_t)syscall(SYS_clone3, &ca, sizeof ca);
}

/* Where each hierarchy's cgroups of this daemon live: [0] v2, [1] v1 pids (path NULL: none). */
static struct cgroup_base cgroup_base[2] = {{NULL, NULL, -1}, {NULL, NULL, -1}};
static struct cgroup_support cgroup_sup;
static int cgroup_probe_done;
static unsigned cgroup_serial;
static pid_t cgroup_into_pid; /* the probe's child, until its end is seen (cgroup_into_poll) */

static void cgroup_bury(struct cgroup *cg);
static struct cgroup *cgroup_pool[CGROUP_POOL];
static struct cgroup *cgroup_grave[CGROUP_GRAVE];

int
cgroup_write(const char *dir, const char *file, const char *text)
{
	char *path = xasprintf("%s/%s", dir, file);
	int fd = open(path, O_WRONLY | O_CLOEXEC), r = 0;
	size_t n = strlen(text);

	free(path);
	if (fd == -1)
		return -errno;
	if (write(fd, text, n) != (ssize_t)n)
		r = -errno;
	close(fd);
	return r;
}

ssize_t
cgroup_read(const char *dir, const char *file, char *buf, size_t size)
{
	char *path = xasprintf("%s/%s", dir, file);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	free(path);
	if (fd == -1)
		return -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return n;
}

/* Whether a space-separated list holds word. */
static int
cgroup_has_word(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *s = list; (s = strstr(s, word)) != NULL; s += n)
		if ((s == list || s[-1] == ' ' || s[-1] == ',') &&
			(s[n] == '\0' || s[n] == ' ' || s[n] == ',' || s[n] == '\n'))
			return 1;
	return 0;
}

/*
 * Mount points from /proc/self/mountinfo: the cgroup2 one, and the v1 one holding the pids
 * controller, each with the path of its root inside the hierarchy.
 */
static void
cgroup_mounts(char **mnt, char **root)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096], r[1024], m[1024], *dash, fstype[64], opts[1024];
	int i;

	if (f == NULL)
		return;
	while (fgets(line, sizeof line, f) != NULL) {
		if ((dash = strstr(line, " - ")) == NULL ||
			sscanf(line, "%*s %*s %*s %1023s %1023s", r, m) != 2 ||
			sscanf(dash + 3, "%63s %*s %1023s", fstype, opts) != 2)
			continue;
		if (strcmp(fstype, "cgroup2") == 0)
			i = 0;
		else if (strcmp(fstype, "cgroup") == 0 && cgroup_has_word(opts, "pids"))
			i = 1;
		else
			continue;
		if (mnt[i] == NULL) {
			mnt[i] = xstrdup(m);
			root[i] = xstrdup(r);
		}
	}
	fclose(f);
}

/* Our cgroup paths from /proc/self/cgroup: [0] "0::path", [1] "N:...pids...:path". */
static void
cgroup_own(char **path)
{
	FILE *f = fopen("/proc/self/cgroup", "re");
	char line[4096], *a, *b;

	if (f == NULL)
		return;
	while (fgets(line, sizeof line, f) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		if ((a = strchr(line, ':')) == NULL || (b = strchr(a + 1, ':')) == NULL)
			continue;
		*b = '\0';
		if (strcmp(line, "0:") == 0 && a[1] == '\0' && path[0] == NULL)
			path[0] = xstrdup(b + 1);
		else if (cgroup_has_word(a + 1, "pids") && path[1] == NULL)
			path[1] = xstrdup(b + 1);
		*b = ':';
	}
	fclose(f);
}

/* Claim this daemon's directory in b->parent (v2: with the pids controller when delegated). */
static int
cgroup_claim_base(struct cgroup_base *b, int v2)
{
	char buf[256];
	int r;

	if ((r = cgroup_owner_claim(b)) != 0) {
		cgroup_sup.error = -r;
		return r;
	}
	if (v2 && cgroup_read(b->parent, "cgroup.subtree_control", buf, sizeof buf) > 0 &&
		cgroup_has_word(buf, "pids") &&
		cgroup_write(b->path, "cgroup.subtree_control", "+pids") == 0)
		cgroup_sup.pids = 2;
	return 0;
}

/*
 * Find our cgroup's directory in one hierarchy, kill and remove what dead daemons left there,
 * and claim ours; 0 or -errno.
 */
static int
cgroup_make_base(struct cgroup_base *b, const char *mnt, const char *root, const char *own, int v2)
{
	size_t rl = strlen(root);
	const char *rel = own;

	/* Our path is relative to the hierarchy; the mount shows it from root down. */
	if (strcmp(root, "/") != 0) {
		if (strncmp(own, root, rl) != 0 || (own[rl] != '/' && own[rl] != '\0'))
			return -ENOENT;
		rel = own + rl;
	}
	b->parent = xasprintf("%s%s", mnt, strcmp(rel, "/") == 0 ? "" : rel);
	cgroup_owner_sweep(b->parent);
	return cgroup_claim_base(b, v2);
}

int
cgroup_probed(void)
{
	return cgroup_probe_done;
}

pid_t
cgroup_clone_into(unsigned long clone_flags, int dir_fd)
{
	return cgroup_clone3(clone_flags, dir_fd, SIGCHLD);
}

/*
 * Whether a child can be created in a cgroup (a kernel before 5.7 cannot; a kernel that
 * compares kill counts of the wrong cgroups kills it at birth when ours was ever killed):
 * one child that exits at once, started at the probe and not waited for (no SIGCHLD, so the
 * loop's reaper leaves it to us), its end looked at when a command asks; until then, and if
 * it was killed, children join by writing cgroup.procs.
 */
static void
cgroup_into_start(const struct cgroup *cg)
{
	pid_t pid;

	if (cg->dir_fd < 0 || cg->procs[0] < 0)
		return;
	if ((pid = cgroup_clone3(0, cg->dir_fd, 0)) == 0)
		_exit(0);
	cgroup_into_pid = pid > 0 ? pid : 0;
}

/* The probe's answer, once its child ended (cgroup_sup.into). */
static void
cgroup_into_poll(void)
{
	pid_t r;
	int st;

	if (cgroup_into_pid <= 0)
		return;
	while ((r = waitpid(cgroup_into_pid, &st, WNOHANG | __WCLONE)) == -1 && errno == EINTR)
		;
	if (r == 0)
		return; /* not yet: this command joins by writing */
	cgroup_into_pid = 0;
	cgroup_sup.into = r > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

const struct cgroup_support *
cgroup_support(void)
{
	char *mnt[2] = {NULL, NULL}, *root[2] = {NULL, NULL}, *own[2] = {NULL, NULL};
	struct cgroup *cg;

	if (cgroup_probe_done)
		return &cgroup_sup;
	cgroup_probe_done = 1;
	cgroup_sup.error = ENOENT;
	/* Tests play a machine without cgroups to exercise the fallbacks. */
	if (getenv("APP_SERVER_NO_CGROUPS") != NULL)
		return &cgroup_sup;
	cgroup_mounts(mnt, root);
	cgroup_own(own);
	if (mnt[0] != NULL && own[0] != NULL &&
		cgroup_make_base(&cgroup_base[0], mnt[0], root[0], own[0], 1) == 0)
		cgroup_sup.kill = 1;
	if (cgroup_sup.pids == 0 && mnt[1] != NULL && own[1] != NULL &&
		cgroup_make_base(&cgroup_base[1], mnt[1], root[1], own[1], 0) == 0)
		cgroup_sup.pids = 1;
	for (int i = 0; i < 2; i++) {
		free(mnt[i]);
		free(root[i]);
		free(own[i]);
	}
	/* Prove it: one cgroup made now (and kept for the first command). */
	if ((cgroup_sup.kill || cgroup_sup.pids) && cgroup_new(0, &cg) == 0) {
		cgroup_into_start(cg);
		cgroup_bury(cg); /* not killed: the probe's child ends by itself */
	} else if (cgroup_sup.kill || cgroup_sup.pids) {
		cgroup_sup.kill = cgroup_sup.pids = 0;
		cgroup_cleanup();
	}
	return &cgroup_sup;
}

/* Make one cgroup directory under base with its procs fd; 0 or -errno. */
static int
cgroup_make(struct cgroup *cg, int i, const char *base, unsigned n)
{
	char *path;

	cg->dir[i] = xasprintf("%s/c%u", base, n);
	if (mkdir(cg->dir[i], 0755) == -1 && errno != EEXIST)
		return -errno;
	path = xasprintf("%s/cgroup.procs", cg->dir[i]);
	cg->procs[i] = open(path, O_WRONLY | O_CLOEXEC);
	free(path);
	return cg->procs[i] == -1 ? -errno : 0;
}

/* Free a cgroup's memory and fds (its directories stay). */
static void
cgroup_release(struct cgroup *cg)
{
	for (int i = 0; i < 2; i++) {
		if (cg->procs[i] >= 0)
			close(cg->procs[i]);
		free(cg->dir[i]);
	}
	if (cg->kill_fd >= 0)
		close(cg->kill_fd);
	if (cg->dir_fd >= 0)
		close(cg->dir_fd);
	free(cg);
}

/* Remove a cgroup's directories and free it; 0, or -EBUSY while processes remain. */
static int
cgroup_remove(struct cgroup *cg)
{
	for (int i = 0; i < 2; i++)
		if (cg->dir[i] != NULL && rmdir(cg->dir[i]) == -1 && errno == EBUSY)
			return -EBUSY;
	cgroup_release(cg);
	return 0;
}

/* Whether a cgroup's directories were removed (by someone else: we keep ours until empty). */
static int
cgroup_gone(const struct cgroup *cg)
{
	for (int i = 0; i < 2; i++)
		if (cg->dir[i] != NULL && access(cg->dir[i], F_OK) == -1 && errno == ENOENT)
			return 1;
	return 0;
}

/* Retire killed cgroups whose processes are gone: reuse or remove them. */
static void
cgroup_reap_graves(void)
{
	struct cgroup *cg;
	int i, j;

	cgroup_owner_retry();
	for (i = 0; i < CGROUP_GRAVE; i++) {
		if ((cg = cgroup_grave[i]) == NULL || !cgroup_empty(cg))
			continue;
		cgroup_grave[i] = NULL;
		for (j = 0; j < CGROUP_POOL && cgroup_pool[j] != NULL; j++)
			;
		/*
		 * Never reused: one removed under us (joining it would fail), one killed (some
		 * kernels, 6.18's among them, kill a child cloned into a cgroup whose kill count
		 * differs from its parent's: a fresh one is made instead).
		 */
		if (cgroup_gone(cg) || (cg->killed && cgroup_sup.into)) {
			if (cgroup_remove(cg) != 0)
				cgroup_grave[i] = cg; /* busy a moment longer: the next reap */
		} else if (j < CGROUP_POOL)
			cgroup_pool[j] = cg;
		else if (cgroup_remove(cg) != 0)
			cgroup_grave[i] = cg;
	}
}

/* Set the process cap of a cgroup; 0 or -errno. */
static int
cgroup_limit(struct cgroup *cg, unsigned max_pids)
{
	char text[24];
	int i = cgroup_sup.pids == 2 ? 0 : 1;

	if (cgroup_sup.pids == 0 || cg->limit == max_pids)
		return 0;
	if (max_pids == 0)
		snprintf(text, sizeof text, "max");
	else
		snprintf(text, sizeof text, "%u", max_pids);
	cg->limit = max_pids;
	return cgroup_write(cg->dir[i], "pids.max", text);
}

int
cgroup_new(unsigned max_pids, struct cgroup **out)
{
	struct cgroup *cg = NULL;
	char *path;
	int r, i;

	*out = NULL;
	if (!cgroup_support()->kill && !cgroup_sup.pids)
		return -cgroup_sup.error;
	/* Our directory vanished and could not be made again: no cgroup, not half of one. */
	if ((cgroup_sup.kill && cgroup_base[0].path == NULL) ||
		(cgroup_sup.pids == 1 && cgroup_base[1].path == NULL))
		return cgroup_sup.error != 0 ? -cgroup_sup.error : -ENOENT;
	cgroup_reap_graves();
	for (i = 0; i < CGROUP_POOL && cg == NULL; i++) {
		cg = cgroup_pool[i];
		cgroup_pool[i] = NULL;
	}
	if (cg == NULL) {
		cg = xcalloc(1, sizeof *cg);
		cg->procs[0] = cg->procs[1] = cg->kill_fd = cg->dir_fd = -1;
		cg->limit = (unsigned)-1;
		cgroup_serial++;
		for (i = 0; i < 2; i++)
			if (cgroup_base[i].path != NULL &&
				(r = cgroup_make(cg, i, cgroup_base[i].path, cgroup_serial)) != 0)
				goto fail;
		if (cg->dir[0] != NULL) {
			path = xasprintf("%s/cgroup.kill", cg->dir[0]);
			cg->kill_fd = open(path, O_WRONLY | O_CLOEXEC);
			free(path);
			cg->dir_fd = open(cg->dir[0], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		}
	}
	if ((r = cgroup_limit(cg, max_pids)) != 0)
		goto fail;
	*out = cg;
	return 0;
fail:
	(void)cgroup_remove(cg);
	return r;
}

int
cgroup_join_fds(const struct cgroup *cg, unsigned max_pids, int *into, int fds[2])
{
	int n = 0;

	cgroup_into_poll();
	*into = cgroup_sup.into && !cg->killed && cg->procs[0] >= 0 ? cg->dir_fd : -1;
	if (cg->procs[0] >= 0 && *into < 0)
		fds[n++] = cg->procs[0];
	/* v1 pids: for its cap, or where its pid-by-pid sweep is the only kill */
	if (cg->procs[1] >= 0 && (max_pids > 0 || cg->kill_fd < 0))
		fds[n++] = cg->procs[1];
	return n;
}

/* v1 alone: signal each listed process until none is left (forks are capped by pids.max). */
int
cgroup_kill_listed(const char *dir)
{
	char buf[8192], *s, *end;
	ssize_t n;
	long pid;
	int round;

	for (round = 0; round < CGROUP_SWEEP; round++) {
		if ((n = cgroup_read(dir, "cgroup.procs", buf, sizeof buf)) < 0)
			return (int)n;
		if (n == 0)
			return 0;
		for (s = buf; (pid = strtol(s, &end, 10)) > 0; s = end)
			kill((pid_t)pid, SIGKILL);
	}
	return -EAGAIN;
}

int
cgroup_kill(struct cgroup *cg)
{
	cg->killed = 1;
	if (cg->kill_fd >= 0)
		return write(cg->kill_fd, "1", 1) == 1 ? 0 : -errno;
	if (cg->dir[1] != NULL)
		return cgroup_kill_listed(cg->dir[1]);
	return -ENOSYS;
}

int
cgroup_empty(const struct cgroup *cg)
{
	char buf[512];
	ssize_t n;

	/* A cgroup removed under us holds nothing any more. */
	if (cg->dir[0] != NULL &&
		((n = cgroup_read(cg->dir[0], "cgroup.events", buf, sizeof buf)) > 0 ||
			n == -ENOENT))
		return n == -ENOENT || strstr(buf, "populated 0") != NULL;
	if (cg->dir[1] != NULL)
		return (n = cgroup_read(cg->dir[1], "cgroup.procs", buf, sizeof buf)) == 0 ||
			n == -ENOENT;
	return 1;
}

void
cgroup_free(struct cgroup *cg)
{
	if (cg == NULL)
		return;
	if (!cgroup_empty(cg))
		(void)cgroup_kill(cg);
	cgroup_bury(cg);
}

/* A cgroup given back: reused or removed once its processes are gone. */
static void
cgroup_bury(struct cgroup *cg)
{
	int i;

	for (i = 0; i < CGROUP_GRAVE && cgroup_grave[i] != NULL; i++)
		;
	if (i == CGROUP_GRAVE) {
		cgroup_reap_graves();
		for (i = 0; i < CGROUP_GRAVE && cgroup_grave[i] != NULL; i++)
			;
	}
	if (i < CGROUP_GRAVE) {
		cgroup_grave[i] = cg; /* reused or removed once its processes are gone */
		cgroup_reap_graves();
	} else if (cgroup_remove(cg) != 0)
		cgroup_release(cg); /* the directory outlives us; the next daemon sweeps it */
}

void
cgroup_cleanup(void)
{
	int i;

	for (i = 0; i < CGROUP_GRAVE; i++) {
		if (cgroup_grave[i] != NULL) {
			(void)cgroup_kill(cgroup_grave[i]);
			if (cgroup_remove(cgroup_grave[i]) != 0)
				cgroup_release(cgroup_grave[i]);
			cgroup_grave[i] = NULL;
		}
	}
	for (i = 0; i < CGROUP_POOL; i++) {
		if (cgroup_pool[i] != NULL && cgroup_remove(cgroup_pool[i]) != 0)
			cgroup_release(cgroup_pool[i]);
		cgroup_pool[i] = NULL;
	}
	cgroup_owner_retry();
	for (i = 0; i < 2; i++) {
		cgroup_owner_release(&cgroup_base[i], 1);
		free(cgroup_base[i].parent);
		cgroup_base[i].parent = NULL;
	}
}

void
cgroup_renew(void)
{
	struct cgroup *cg;
	int i;

	/* Pooled cgroups may be the ones removed: make fresh ones. */
	for (i = 0; i < CGROUP_POOL; i++) {
		if ((cg = cgroup_pool[i]) != NULL && cgroup_remove(cg) != 0)
			cgroup_release(cg);
		cgroup_pool[i] = NULL;
	}
	/* A directory of ours that vanished (or could not be made again last time): claim it. */
	for (i = 0; i < 2; i++) {
		if (!(i == 0 ? cgroup_sup.kill : cgroup_sup.pids == 1) ||
			cgroup_base[i].parent == NULL ||
			(cgroup_base[i].path != NULL && !cgroup_owner_lost(&cgroup_base[i])))
			continue;
		cgroup_owner_release(&cgroup_base[i], 0);
		(void)cgroup_claim_base(&cgroup_base[i], i == 0); /* else cgroup_new says why */
	}
}
