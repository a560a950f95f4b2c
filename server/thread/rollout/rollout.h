/*
 * Rollout files: where they live and how their timestamps read. Upstream's layout, kept exactly
 * so each side finds the other's threads:
 *   $CODEX_HOME/sessions/YYYY/MM/DD/rollout-YYYY-MM-DDTHH-MM-SS-<id>.jsonl   (local time)
 *   $CODEX_HOME/archived_sessions/rollout-...jsonl                        (flat, same name)
 *   ...rollout-<stamp>-<id>_<rollout id>.jsonl  a later segment of thread <id> (rollout_chain.h)
 * Record timestamps are UTC with milliseconds: 2026-11-23T20:15:34.281Z.
 */
#ifndef ROLLOUT_H
#define ROLLOUT_H

#include <stdint.h>

#define ROLLOUT_SESSIONS "sessions"
#define ROLLOUT_ARCHIVED "archived_sessions"
#define ROLLOUT_TS_LEN	 24 /* "YYYY-MM-DDTHH:MM:SS.mmmZ" */

/* Milliseconds since the epoch, wall clock. */
int64_t rollout_now_ms(void);
/* Format ms as a record timestamp into out (ROLLOUT_TS_LEN + 1 bytes). */
void rollout_ts_format(int64_t ms, char out[ROLLOUT_TS_LEN + 1]);
/* Parse an RFC 3339 UTC timestamp (fraction optional, 'Z' or +00:00); 0 or -EINVAL. */
int rollout_ts_parse(const char *s, int64_t *ms);
/* The path a new rollout for id created at ms gets (heap). */
char *rollout_path_new(const char *home, const char *id, int64_t ms);
/* The archived_sessions path for a rollout path (heap). */
char *rollout_path_archived(const char *home, const char *path);
/* The sessions/YYYY/MM/DD path to restore an archived rollout to, from its file name (heap). */
char *rollout_path_unarchived(const char *home, const char *path);
/*
 * The thread id in a rollout file name (basename or path); 0, or -EINVAL when not one of ours.
 * A thread upstream reverted has later segments, rollout-<stamp>-<thread id>_<rollout id>.jsonl.
 */
int rollout_name_id(const char *path, char id[37]);
/* The file's rollout id: the part after '_' in a segment's name, else the thread id. */
int rollout_name_rollout_id(const char *path, char id[37]);
/* Create every missing directory of path's parent (mode 0700); 0 or -errno. */
int rollout_mkdirs(const char *path);

#endif
