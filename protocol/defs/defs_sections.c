/*
 * Thread sections (upstream 0.169's stable threadSection methods, thread/section/move and
 * thread/section/changed): shapes of the experimental schema, word for word where it has docs.
 * ThreadSection and ThreadSectionAppearance themselves are Thread's (defs_thread.c).
 */
#include "defs.h"

static const struct pfield section_list_params[] = {
	{"cursor", "string?", 0, NULL, "Opaque pagination cursor returned by a previous call."},
	{"limit", "uint32?", 0, NULL, "Maximum number of sections to return."},
	{NULL},
};

static const struct pfield section_list_response[] = {
	{"data", "ThreadSection[]", PF_REQ, NULL, NULL},
	{"nextCursor", "string?", 0, NULL,
		"Opaque cursor for the next page, or `null` when no sections remain."},
	{NULL},
};

static const struct pfield section_create_params[] = {
	{"appearance", "ThreadSectionAppearance?", 0, "null", NULL},
	{"name", "string", PF_REQ, NULL, "The user-visible name of the section."},
	{NULL},
};

static const struct pfield section_response[] = {
	{"section", "ThreadSection", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield section_update_params[] = {
	{"appearance", "ThreadSectionAppearance?", 0, NULL,
		"Omit to preserve appearance, use `null` to clear it, or provide a replacement."},
	{"name", "string", PF_REQ, NULL, "The updated user-visible name of the section."},
	{"sectionId", "string", PF_REQ, NULL,
		"The stable, server-generated identity of the section to update."},
	{NULL},
};

static const struct pfield section_delete_params[] = {
	{"sectionId", "string", PF_REQ, NULL,
		"The stable, server-generated identity of the section to delete."},
	{NULL},
};

static const struct pfield section_move_params[] = {
	{"beforeThreadId", "string?", 0, NULL,
		"Existing thread to insert before; omission or null appends to the section."},
	{"sectionId", "string?", PF_REQ, NULL,
		"Destination section, or `null` to remove the thread from its section."},
	{"threadId", "string", PF_REQ, NULL, "Thread to move into, within, or out of a section."},
	{NULL},
};

static const struct pfield section_changed[] = {
	{"sectionId", "string?", PF_REQ, NULL,
		"Destination section, or `null` when the thread was removed from its section."},
	{"threadId", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield empty_response[] = {
	{NULL},
};

const struct pdef pdefs_sections[] = {
	{.name = "ThreadSectionListParams",
		.kind = PD_STRUCT,
		.fields = section_list_params,
		.doc = "Parameters for listing independently persisted thread sections."},
	{.name = "ThreadSectionListResponse",
		.kind = PD_STRUCT,
		.fields = section_list_response,
		.doc = "One page of independently persisted thread sections."},
	{.name = "ThreadSectionCreateParams",
		.kind = PD_STRUCT,
		.fields = section_create_params,
		.doc = "Parameters for creating an independently persisted thread section."},
	{.name = "ThreadSectionCreateResponse",
		.kind = PD_STRUCT,
		.fields = section_response,
		.doc = "The independently persisted section created by the server."},
	{.name = "ThreadSectionUpdateParams",
		.kind = PD_STRUCT,
		.fields = section_update_params,
		.doc = "Parameters for updating an independently persisted thread section."},
	{.name = "ThreadSectionUpdateResponse",
		.kind = PD_STRUCT,
		.fields = section_response,
		.doc = "The independently persisted section after its name is updated."},
	{.name = "ThreadSectionDeleteParams",
		.kind = PD_STRUCT,
		.fields = section_delete_params,
		.doc = "Parameters for deleting an independently persisted thread section."},
	{.name = "ThreadSectionDeleteResponse",
		.kind = PD_STRUCT,
		.fields = empty_response,
		.doc = "Successful deletion does not return additional section data."},
	{.name = "ThreadSectionMoveParams",
		.kind = PD_STRUCT,
		.fields = section_move_params,
		.doc = "Parameters for moving a thread within a server-owned section ordering."},
	{.name = "ThreadSectionMoveResponse", .kind = PD_STRUCT, .fields = empty_response},
	{.name = "ThreadSectionChangedNotification",
		.kind = PD_STRUCT,
		.fields = section_changed,
		.doc = "Broadcast after a successful move into, within, or out of a section."},
	{NULL},
};
