/*
 * Bringing the index in line with the rollouts on disk: the index is a cache, the files are
 * the truth. A scan walks sessions/ (dated folders) and archived_sessions/, re-reads the head
 * and tail of every file that is new or whose size or mtime changed (every file when `full`),
 * drops rows whose file is gone, and re-applies names from session_index.jsonl when that file
 * changed. It runs on a worker thread with its own SQLite connection and commits in batches of
 * TSCAN_BATCH rows, so the daemon's own writes wait at most one short transaction.
 * Rows the daemon wrote after the scan began are left alone (it knows better).
 */
#ifndef TSCAN_H
#define TSCAN_H

#include <stdint.h>

#define TSCAN_BATCH 256

struct tscan_result {
	int64_t files;	    /* rollout files seen */
	int64_t summarized; /* of which re-read */
	int64_t removed;    /* rows dropped: their file is gone */
	int64_t failed;	    /* files that could not be read (no session_meta, ...) */
	int r;		    /* 0 or -errno of the index */
	double seconds;
};

/* Scan home's rollouts into its index; fills res. Blocking: call it on a worker. */
void tscan_run(const char *home, int full, struct tscan_result *res);
/* A cheap signature of the session folders' state (for "has anything changed?"), heap. */
char *tscan_signature(const char *home);

#endif
