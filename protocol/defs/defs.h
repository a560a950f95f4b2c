/*
 * The protocol's single source of truth: every type and method the daemon implements, described
 * once in C tables (protocol/defs/defs_*.c). From these tables come the JSON Schema tree under
 * schema/
 * (`app-server generate-json-schema`), the TypeScript types (`generate-ts`) and the compiled
 * validator the daemon runs on every request's params. Nothing else describes the wire.
 *
 * Types are written as small expressions:
 *   string boolean number int32 int64 uint uint16 uint32 uint64 any    primitives ("any" = true)
 *   Name          a reference to another definition
 *   T[]           array of T
 *   {T}           object whose values are T (a map)
 *   T?            T or null
 *   A|B           either (anyOf)
 * Fields are optional unless PF_REQ; a nullable field is written with '?' in its type, as
 * upstream's Option<T> (e.g. "string?").
 */
#ifndef DEFS_H
#define DEFS_H

#include <jansson.h>

#define PF_REQ 0x1 /* the field must be present */

struct pfield {
	const char *name;
	const char *type; /* type expression */
	unsigned flags;
	const char *dflt; /* JSON text of the default, or NULL */
	const char *doc;
};

/* A value of an enum; with docs the schema uses oneOf of one-value enums, as upstream does. */
struct penum {
	const char *value;
	const char *doc;
};

/* One variant of a tagged union: an object whose tag field holds `tag`. */
struct pvariant {
	const char *tag;
	const struct pfield *fields; /* excluding the tag; terminated by a NULL name */
	const char *doc;
	int closed; /* no other members allowed ("additionalProperties": false) */
};

enum pdef_kind { PD_STRUCT, PD_ENUM, PD_UNION, PD_ALIAS };

struct pdef {
	const char *name;
	enum pdef_kind kind;
	const char *doc;
	const struct pfield *fields;	 /* PD_STRUCT, terminated by a NULL name */
	const struct penum *values;	 /* PD_ENUM, terminated by a NULL value */
	const struct pvariant *variants; /* PD_UNION, terminated by a NULL tag */
	const char *tag;		 /* PD_UNION: the tag field's name */
	const char *alias;		 /* PD_ALIAS: a type expression */
	/*
	 * JSON text for what the tables cannot say. PD_STRUCT/ENUM/UNION: keywords merged over
	 * the generated schema (e.g. {"additionalProperties": true}). PD_ALIAS: the whole schema
	 * (e.g. a oneOf mixing strings and objects), with `alias` NULL; the TypeScript and
	 * Python types are then derived from this schema, whose "$ref": "#/definitions/X" name
	 * other definitions (they join the closure of whatever reaches this one).
	 */
	const char *schema;
};

enum pmsg_kind {
	PM_REQUEST,		/* client -> server request */
	PM_NOTIFICATION,	/* server -> client notification */
	PM_SERVER_REQUEST,	/* server -> client request */
	PM_CLIENT_NOTIFICATION, /* client -> server notification */
};

struct pmethod {
	const char *method;
	enum pmsg_kind kind;
	const char *params; /* definition name, or NULL when the message has no params */
	const char *result; /* requests: the response's definition name */
	const char *dir;    /* "v1" or "v2": where the per-message files go */
	const char *doc;
};

/* Definition groups, one per protocol area (defs_*.c), each terminated by a NULL name. */
extern const struct pdef pdefs_core[];
extern const struct pdef pdefs_exec[];
extern const struct pdef pdefs_config[];
extern const struct pdef pdefs_fs[];
extern const struct pdef pdefs_thread[];
extern const struct pdef pdefs_item[];
extern const struct pdef pdefs_turn[];
extern const struct pdef pdefs_profiles[];
extern const struct pdef pdefs_skills[];
extern const struct pdef pdefs_review[];
extern const struct pdef pdefs_shellcmd[];
extern const struct pdef pdefs_user_input[];
extern const struct pdef pdefs_config_write[];
extern const struct pdef pdefs_startup[];
extern const struct pdef pdefs_requirements[];
extern const struct pdef pdefs_history[];
extern const struct pdef pdefs_account[];
extern const struct pdef pdefs_mcp[];
extern const struct pdef pdefs_hooks[];
extern const struct pdef pdefs_mcp_elicit[];
extern const struct pdef pdefs_mcp_oauth[];
extern const struct pdef pdefs_sections[];
extern const struct pdef pdefs_attachments[];

/* Every method, terminated by a NULL method. */
extern const struct pmethod pmethods[];

/*
 * An experimental method or params member (upstream's #[experimental]), refused with -32600
 * "<method>[.<member>] requires experimentalApi capability" to a connection that did not ask
 * for experimentalApi in initialize (defs_experimental.c).
 */
#define PX_TRUE_ONLY 0x1 /* a plain boolean: only true needs the capability */

struct pexperimental {
	const char *method;
	const char *field; /* a member of params, or NULL: the whole method */
	unsigned flags;
};

/* Terminated by a NULL method. */
extern const struct pexperimental pexperimentals[];
/* True when the whole method is experimental. */
int defs_experimental_method(const char *method);
/* What of a request needs experimentalApi: "" (the method), a member's name, or NULL. */
const char *defs_experimental_gate(const char *method, const json_t *params);

/* Find a definition by name; NULL when unknown. */
const struct pdef *defs_find(const char *name);
/* Call fn for every definition, in declaration order. */
void defs_foreach(void (*fn)(const struct pdef *, void *), void *arg);
/* Find a method by name and kind; NULL when unknown. */
const struct pmethod *defs_method_find(const char *method, enum pmsg_kind kind);

#endif
