/*
 * A verified patch as the protocol shows it: the fileChange ThreadItem (each change's path,
 * kind and unified diff, in upstream's path order) and the acceptForSession memory of its
 * paths ("patch:<path>" keys: a patch is covered when every path and move target is).
 */
#ifndef FILE_CHANGE_H
#define FILE_CHANGE_H

#include <jansson.h>

#include "agent/approval/approval_rules.h"
#include "agent/patch/apply_patch.h"

/* The item (status "inProgress"; new reference). Sorts r's changes. */
json_t *file_change_item(struct apply_patch_result *r, const char *id);
/* Remember every path of r for the session / whether the session covers them all. */
void file_change_remember(struct approval_cache *c, const struct apply_patch_result *r);
int file_change_approved(const struct approval_cache *c, const struct apply_patch_result *r);

#endif
