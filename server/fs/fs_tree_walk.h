/*
 * A descent through a folder tree of any depth with one open folder (two for a copy): the
 * tree walks of fs/remove and fs/copy (fs_tree.c). Only the deepest folder is open; each
 * level above keeps its (device, inode), the part of its listing not yet looked at and where
 * its next chunk starts, so going back up reopens the parent through ".." and checks that it
 * is still the same folder. Nothing here follows a symlink: children are opened with
 * O_NOFOLLOW relative to their parent's fd, and no path string is ever built, so no depth or
 * path length limit applies (PATH_MAX included).
 *
 * Bounded: the listings held by every level together stay under FS_TREE_HELD_MAX (past it
 * the walk fails with -ENOMEM).
 */
#ifndef FS_TREE_WALK_H
#define FS_TREE_WALK_H

#include <stddef.h>
#include <sys/types.h>

#define FS_TREE_HELD_MAX (256u * 1024 * 1024) /* bytes of listings and levels held */

struct fs_tree_level;

struct fs_tree {
	struct fs_tree_level *lv;
	size_t depth, cap;
	int fd;	    /* the deepest folder */
	int dfd;    /* its copy (fs/copy), else -1 */
	int relist; /* fs/remove: at the end, the folder is read again from its start */
	size_t held;
};

/*
 * Start at the folder open as fd (and its copy dfd, or -1); both are taken over, also on
 * failure. 0 or a negative errno.
 */
int fs_tree_open(struct fs_tree *t, int fd, int dfd, int relist);
/* Close what is open and free the levels. */
void fs_tree_close(struct fs_tree *t);
/*
 * The next entry of the deepest folder ("." and ".." skipped): 1 with its name (valid until
 * the next call) and d_type (DT_UNKNOWN possible), 0 at the end of the folder, or -errno.
 */
int fs_tree_next(struct fs_tree *t, const char **name, unsigned char *type);
/*
 * Go down into the child folder open as fd (and its copy dfd, or -1), both taken over; made
 * says the copy was created by this walk (fs_tree_made). 0 or -errno.
 */
int fs_tree_down(struct fs_tree *t, int fd, int dfd, int made);
/*
 * Back to the parent of the deepest folder; *child (may be NULL) is the name the walk went
 * down by (valid until the next fs_tree_next). 0, -ESTALE when the parent is no longer the
 * folder walked through (the tree was moved meanwhile), or -errno.
 */
int fs_tree_up(struct fs_tree *t, const char **child);
/* Was the deepest folder's copy, or one of its ancestors', created by this walk? */
int fs_tree_made(const struct fs_tree *t);
/* The names the walk went down by, "a/b/c" (heap; "" at the top). */
char *fs_tree_path(const struct fs_tree *t);

#endif
