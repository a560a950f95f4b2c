/*
 * Thread attachments (upstream 0.169's stable thread/attachment methods,
 * thread/attachmentOwner/list and thread/attachment/updated): shapes of the experimental
 * schema, its docs word for word.
 */
#include "defs.h"

static const struct pfield attachment_fields[] = {
	{"attachmentType", "string", PF_REQ, NULL, NULL},
	{"createdAt", "int64", PF_REQ, NULL, NULL},
	{"id", "string", PF_REQ, NULL, NULL},
	{"identityKey", "string", PF_REQ, NULL, NULL},
	{"payload", "any", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct penum add_outcome_values[] = {{"created"}, {"existing"}, {NULL}};
static const struct penum operation_values[] = {{"created"}, {"deleted"}, {NULL}};

static const struct pfield owner_fields[] = {
	{"archived", "boolean", PF_REQ, NULL,
		"Whether the owning thread is archived, not whether it is currently executing a "
		"turn."},
	{"threadId", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield add_params[] = {
	{"attachmentType", "string", PF_REQ, NULL, NULL},
	{"identityKey", "string", PF_REQ, NULL, NULL},
	{"payload", "any", PF_REQ, NULL, NULL},
	{"threadId", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield add_response[] = {
	{"attachment", "ThreadAttachment", PF_REQ, NULL, NULL},
	{"outcome", "ThreadAttachmentAddOutcome", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield list_params[] = {
	{"cursor", "string?", 0, NULL, NULL},
	{"limit", "uint32?", 0, NULL, NULL},
	{"threadId", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield list_response[] = {
	{"data", "ThreadAttachment[]", PF_REQ, NULL, NULL},
	{"nextCursor", "string?", 0, NULL, NULL},
	{NULL},
};

static const struct pfield owner_list_params[] = {
	{"archived", "boolean?", 0, NULL,
		"Omitted or null returns all matches; false returns non-archived threads only."},
	{"attachmentType", "string", PF_REQ, NULL, NULL},
	{"cursor", "string?", 0, NULL, NULL},
	{"identityKey", "string", PF_REQ, NULL, NULL},
	{"limit", "uint32?", 0, NULL, NULL},
	{NULL},
};

static const struct pfield owner_list_response[] = {
	{"data", "ThreadAttachmentOwner[]", PF_REQ, NULL, NULL},
	{"nextCursor", "string?", 0, NULL, NULL},
	{NULL},
};

static const struct pfield remove_params[] = {
	{"attachmentType", "string", PF_REQ, NULL, NULL},
	{"identityKey", "string", PF_REQ, NULL, NULL},
	{"threadId", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield updated_fields[] = {
	{"attachmentId", "string", PF_REQ, NULL, NULL},
	{"attachmentType", "string", PF_REQ, NULL, NULL},
	{"identityKey", "string", PF_REQ, NULL, NULL},
	{"operation", "ThreadAttachmentOperation", PF_REQ, NULL, NULL},
	{"threadId", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield empty_response[] = {
	{NULL},
};

const struct pdef pdefs_attachments[] = {
	{.name = "ThreadAttachment",
		.kind = PD_STRUCT,
		.fields = attachment_fields,
		.doc = "An independently persisted attachment associated with a thread."},
	{.name = "ThreadAttachmentAddOutcome",
		.kind = PD_ENUM,
		.values = add_outcome_values,
		.doc = "Result of attempting to associate an attachment with a thread."},
	{.name = "ThreadAttachmentOperation",
		.kind = PD_ENUM,
		.values = operation_values,
		.doc = "The persisted attachment change represented by a notification."},
	{.name = "ThreadAttachmentOwner",
		.kind = PD_STRUCT,
		.fields = owner_fields,
		.doc = "A thread that currently owns an attachment with the requested identity."},
	{.name = "ThreadAttachmentAddParams",
		.kind = PD_STRUCT,
		.fields = add_params,
		.doc = "Parameters for creating or locating an attachment on its owning thread."},
	{.name = "ThreadAttachmentAddResponse",
		.kind = PD_STRUCT,
		.fields = add_response,
		.doc = "The created or existing attachment."},
	{.name = "ThreadAttachmentListParams",
		.kind = PD_STRUCT,
		.fields = list_params,
		.doc = "Parameters for listing attachments from one thread."},
	{.name = "ThreadAttachmentListResponse",
		.kind = PD_STRUCT,
		.fields = list_response,
		.doc = "One page of attachments associated with the requested thread."},
	{.name = "ThreadAttachmentOwnerListParams",
		.kind = PD_STRUCT,
		.fields = owner_list_params,
		.doc = "Parameters for reverse lookup by attachment identity within this server's "
		       "store."},
	{.name = "ThreadAttachmentOwnerListResponse",
		.kind = PD_STRUCT,
		.fields = owner_list_response,
		.doc = "One page of matching owners, including threads without their own user "
		       "messages."},
	{.name = "ThreadAttachmentRemoveParams",
		.kind = PD_STRUCT,
		.fields = remove_params,
		.doc = "Parameters for deleting an attachment by its stable thread-local identity."},
	{.name = "ThreadAttachmentRemoveResponse",
		.kind = PD_STRUCT,
		.fields = empty_response,
		.doc = "Successful deletion does not return additional attachment data."},
	{.name = "ThreadAttachmentUpdatedNotification",
		.kind = PD_STRUCT,
		.fields = updated_fields,
		.doc = "Notification published after a thread attachment is created or deleted."},
	{NULL},
};
