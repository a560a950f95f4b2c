/*
 * Thread names in upstream's $CODEX_HOME/session_index.jsonl: an append-only file of
 * {"id","thread_name","updated_at"} lines where the newest line for an id wins. We read it so a
 * thread named by upstream shows its name, and append to it so upstream sees names set here.
 * Lines are bounded (NAMES_LINE_MAX); torn or foreign lines are skipped.
 */
#ifndef NAMES_H
#define NAMES_H

#include <jansson.h>

#define NAMES_FILE     "session_index.jsonl"
#define NAMES_LINE_MAX (64 * 1024)

/* The newest name for id (heap) or NULL; reads the file backwards and stops at the first hit. */
char *names_lookup(const char *home, const char *id);
/* Every id's newest name as a JSON object {id: name} (new reference; empty when no file). */
json_t *names_load(const char *home);
/* Append one entry with one write(2); the caller syncs (names_path + fsync) if it cares. */
int names_append(const char *home, const char *id, const char *name);
/* The file's path (heap). */
char *names_path(const char *home);

#endif
