/* Type expressions of the protocol tables (see pdefs.h): parsed into a small tree. */
#ifndef TEXPR_H
#define TEXPR_H

enum texpr_kind {
	TX_PRIM,  /* name is a primitive: string boolean number int32 ... any */
	TX_REF,	  /* name is a definition */
	TX_ARRAY, /* a[0] is the item type */
	TX_MAP,	  /* a[0] is the value type */
	TX_NULL,  /* a[0] or null */
	TX_OR,	  /* a[0] | a[1] */
};

struct texpr {
	enum texpr_kind kind;
	char name[64];
	struct texpr *a[2];
};

/* Parse expr; NULL with *cause (heap) when malformed. */
struct texpr *texpr_parse(const char *expr, char **cause);
void texpr_free(struct texpr *t);
/* True when name is a primitive type name. */
int texpr_is_prim(const char *name);

#endif
