/*
 * Thread attachments (thread/attachment/add, list, remove and thread/attachmentOwner/list), as
 * upstream 0.169 keeps them: a JSON payload on a thread under an identity (attachmentType,
 * identityKey), persisted in the thread index's file (index/tattach.h) by the index worker, one
 * transaction per request, never on the loop.
 *
 * Each call answers through cb on the loop with a result (stolen), or r < 0 and upstream's
 * words; every refusal is -ERANGE (-32602, upstream's code for all of them), -EIO (-32603)
 * when the index cannot be written. add and remove also hand the caller the
 * thread/attachment/updated params to send when something changed (NULL otherwise).
 */
#ifndef ATTACHMENTS_H
#define ATTACHMENTS_H

#include <jansson.h>

#include "thread/store/store.h"

/* Receives a result (stolen), the notification's params (stolen, or NULL), or r < 0 and cause. */
typedef void (*store_attach_fn)(
	void *arg, int r, json_t *result, json_t *updated, const char *cause);

/* {attachment, outcome: created | existing}. */
void store_attachment_add(struct store *s, const char *thread_id, const char *type,
	const char *identity, const json_t *payload, store_attach_fn cb, void *arg);
/* {}: gone (or was never there: no notification then). */
void store_attachment_remove(struct store *s, const char *thread_id, const char *type,
	const char *identity, store_attach_fn cb, void *arg);
/* {data: ThreadAttachment[], nextCursor}: a thread's, in creation order (none: []). */
void store_attachment_list(struct store *s, const char *thread_id, const char *cursor,
	int64_t limit, store_attach_fn cb, void *arg);
/* {data: [{threadId, archived}], nextCursor}: who holds (type, identity); archived < 0: all. */
void store_attachment_owners(struct store *s, const char *type, const char *identity, int archived,
	const char *cursor, int64_t limit, store_attach_fn cb, void *arg);
/* thread/delete: the thread's attachments go (posted; nobody is told). */
void store_attachments_forget(struct store *s, const char *id);

#endif
