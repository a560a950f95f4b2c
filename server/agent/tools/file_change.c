/*
 * A verified patch as the protocol shows it (file_change.h): the fileChange item and the
 * session's memory of approved paths. Pure: no disk, no loop.
 */
#include <stdlib.h>

#include "file_change.h"
#include "protocol/xmalloc.h"

json_t *
file_change_item(struct apply_patch_result *r, const char *id)
{
	json_t *changes = json_array(), *kind;
	const struct apply_patch_change *ch;

	apply_patch_sort_changes(r);
	for (size_t i = 0; i < r->nchanges; i++) {
		ch = &r->changes[i];
		if (ch->kind == APPLY_PATCH_ADD)
			kind = json_pack("{s:s}", "type", "add");
		else if (ch->kind == APPLY_PATCH_DELETE)
			kind = json_pack("{s:s}", "type", "delete");
		else
			kind = json_pack(
				"{s:s, s:s?}", "type", "update", "move_path", ch->move_path);
		json_array_append_new(changes,
			json_pack("{s:s, s:o, s:s}", "path", ch->path, "kind", kind, "diff",
				ch->diff));
	}
	return json_pack("{s:s, s:s, s:o, s:s}", "type", "fileChange", "id", id, "changes", changes,
		"status", "inProgress");
}

/* acceptForSession's key of a path (heap). */
static char *
file_change_key(const char *path)
{
	return xasprintf("patch:%s", path);
}

/* Remember one path, or say whether it is remembered (c read-only then). */
static int
file_change_path(struct approval_cache *add, const struct approval_cache *has, const char *path)
{
	char *k = file_change_key(path);
	int ok = add != NULL ? approval_cache_add(add, k) == 0 : approval_cache_has(has, k);

	free(k);
	return ok;
}

void
file_change_remember(struct approval_cache *c, const struct apply_patch_result *r)
{
	for (size_t i = 0; i < r->nchanges; i++) {
		file_change_path(c, NULL, r->changes[i].path);
		if (r->changes[i].move_path != NULL)
			file_change_path(c, NULL, r->changes[i].move_path);
	}
}

int
file_change_approved(const struct approval_cache *c, const struct apply_patch_result *r)
{
	int ok = r->nchanges > 0;

	for (size_t i = 0; ok && i < r->nchanges; i++)
		ok = file_change_path(NULL, c, r->changes[i].path) &&
			(r->changes[i].move_path == NULL ||
				file_change_path(NULL, c, r->changes[i].move_path));
	return ok;
}
