/*
 * The file walk behind fuzzyFileSearch, as upstream's (the `ignore` crate with hidden files
 * shown, symlinks followed, git rules only inside a work tree): every entry under each root is
 * reported with its path relative to the root, folders included, dot-folders walked (`.git/`
 * contents too, as upstream returns them), ignored entries (gitignore.h) left out and ignored
 * folders not entered. The root itself is reported first as "" (a folder).
 *
 * Each folder is read whole with getdents64 before any of its entries is reported, so the
 * ignore files it holds are only opened when its listing names them, and no entry is stat'ed
 * unless its type is unknown or it is a symlink (followed, as upstream).
 *
 * Never entered: /proc, /sys and /dev, and whatever is on the proc or sysfs file systems
 * (reached by a link too, or as a root): they hold no files a user searches for, and
 * /proc/<pid>/cwd and /proc/<pid>/root lead back into the tree (a walk of / went through it
 * once per process). They are reported as entries, not walked.
 *
 * Bounded: at most WALK_ENTRIES_MAX entries in all (the walk stops and says so), WALK_DEPTH_MAX
 * levels and WALK_DIR_BYTES of listing per folder; symlink loops are detected by (device,
 * inode) of the folders open above.
 */
#ifndef WALK_H
#define WALK_H

#include <stdatomic.h>
#include <stddef.h>

#define WALK_ENTRIES_MAX 2000000
#define WALK_DEPTH_MAX	 128
#define WALK_DIR_BYTES	 (32u * 1024 * 1024)

/* Called for each entry; return non-zero to stop the walk. rel is borrowed (NUL-terminated). */
typedef int (*walk_fn)(void *arg, size_t root, const char *rel, size_t len, int is_dir);

struct walk_ops {
	walk_fn fn;
	/*
	 * Optional: a folder is about to be read (rel "" for the root); abs is its absolute path.
	 * Called before the listing is read, so a watch added here misses nothing.
	 */
	void (*dir)(void *arg, size_t root, const char *abs, const char *rel);
	void *arg;
	const atomic_int *cancel; /* polled every 1024 entries; may be NULL */
};

struct walk_stats {
	size_t entries;
	int truncated; /* stopped at WALK_ENTRIES_MAX, or a folder's listing was cut */
	int cancelled;
};

/*
 * Walk the roots in order. A missing root is skipped. Returns 0 (also when stopped), stats
 * filled.
 */
int walk_roots(const char *const *roots, size_t nroots, const struct walk_ops *ops,
	struct walk_stats *stats);

/*
 * Report the entries `names` of the folder `dir` (relative to roots[ri], "" for the root) as
 * the full walk would: the ignore rules of every folder above apply, a name that is missing or
 * ignored is skipped, and a folder among them is walked entirely. The folder itself is not
 * reported and ops->dir is not called for it. 0, or a negative errno when dir cannot be opened.
 */
int walk_names(const char *const *roots, size_t ri, const char *dir, const char *const *names,
	size_t n, const struct walk_ops *ops, struct walk_stats *stats);

#endif
