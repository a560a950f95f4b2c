/*
 * Between cgroup.c (a cgroup per command) and cgroup_owner.c (whose a daemon's directory is:
 * claimed under an flock its owner holds for life, and the leftovers of dead owners killed).
 */
#ifndef CGROUP_INT_H
#define CGROUP_INT_H

#include <sys/types.h>

/* The marker child of a directory whose owner locks it; older daemons did not lock theirs. */
#define CGROUP_MARKER "lock"

/* This daemon's "app-server-<pid>" directory in one hierarchy. */
struct cgroup_base {
	char *parent; /* the hierarchy's directory it is made in (our own cgroup) */
	char *path;   /* NULL until claimed */
	int lock_fd;  /* the directory, opened and flock'd for the daemon's life; -1 */
};

/* Write text to dir/file; 0 or -errno. */
int cgroup_write(const char *dir, const char *file, const char *text);
/* Read dir/file into buf (NUL-terminated); bytes read or -errno. */
ssize_t cgroup_read(const char *dir, const char *file, char *buf, size_t size);
/* SIGKILL the processes cgroup.procs lists, until none are left (bounded); 0 or -errno. */
int cgroup_kill_listed(const char *dir);

/*
 * Kill the leftovers of dead daemons in parent and remove their directories (those still
 * busy are retried by cgroup_owner_retry). A directory is a live daemon's while its lock is
 * held, whatever PID namespace that daemon is in.
 */
void cgroup_owner_sweep(const char *parent);
/* Make and lock this daemon's directory in b->parent; 0 or -errno. */
int cgroup_owner_claim(struct cgroup_base *b);
/* Whether the claimed directory is no longer there (someone removed it). */
int cgroup_owner_lost(const struct cgroup_base *b);
/* Unlock and forget it; with remove, rmdir it first (it must have no cgroup left but ours). */
void cgroup_owner_release(struct cgroup_base *b, int remove);
/* Remove the swept directories whose processes have died since. */
void cgroup_owner_retry(void);

#endif
