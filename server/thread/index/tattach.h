/*
 * Thread attachments in the thread index's file (tindex.h), as upstream 0.169 keeps them in its
 * state database: small JSON payloads a client attaches to a thread under an identity
 * (attachmentType, identityKey) unique within the thread, found again by identity across
 * threads (the owners). One row per attachment; every write is one transaction, run on the
 * store's index worker.
 */
#ifndef TATTACH_H
#define TATTACH_H

#include <stdint.h>

#include <jansson.h>

struct tindex;

#define TATTACH_PER_THREAD   100   /* attachments a thread may hold (upstream's limit) */
#define TATTACH_LIST_DEFAULT 25	   /* a page without a limit */
#define TATTACH_LIST_MAX     100   /* and the largest */
#define TATTACH_NAME_MAX     256   /* bytes of attachmentType and of identityKey */
#define TATTACH_PAYLOAD_MAX  65536 /* bytes of a payload as compact JSON */

/*
 * Add (thread, type, identity) unless the thread holds it: *att the wire ThreadAttachment (new
 * reference) and *created 1 when made now (id, payload text and now_ms used), 0 when it was
 * there (the stored one returned, payload untouched). -EMLINK when the thread already holds
 * TATTACH_PER_THREAD, -EIO.
 */
int tattach_add(struct tindex *x, const char *thread_id, const char *type, const char *identity,
	const char *id, const char *payload, int64_t now_ms, json_t **att, int *created);
/* Remove one: 0 and its id (heap) in *id, or 0 with *id NULL when there was none; -EIO. */
int tattach_remove(
	struct tindex *x, const char *thread_id, const char *type, const char *identity, char **id);
/*
 * A thread's attachments in creation order after cursor ("<created_ms>:<id>", NULL: from the
 * first): *data, *next (heap) when more follow. -ERANGE for a cursor that is not ours.
 */
int tattach_list(struct tindex *x, const char *thread_id, const char *cursor, int limit,
	json_t **data, char **next);
/*
 * The threads holding (type, identity), in id order after cursor (a thread id): *data of
 * {threadId, archived}; archived < 0 all, else only those archived or not. -ERANGE, -EIO.
 */
int tattach_owners(struct tindex *x, const char *type, const char *identity, int archived,
	const char *cursor, int limit, json_t **data, char **next);
/* A deleted thread's attachments go with it. */
int tattach_forget(struct tindex *x, const char *thread_id);

#endif
