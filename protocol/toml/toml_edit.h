/*
 * Editing a TOML document in place, as upstream's toml_edit does for config/batchWrite: a
 * value is replaced inside its own span, a key is removed with its line (and the comments
 * above it, which toml_edit counts as the key's decor), a new key goes after the last key of
 * its table, and a new table goes after the last table of its parent (at the end of the file
 * for a top-level one). An edit inside an inline table makes it a table first (`[key ]`, as
 * toml_edit's conversion prints it). Every other byte of the document is kept as it was.
 *
 * Paths are arrays of segments (already split and unquoted). Values are JSON (jansson) trees:
 * strings, integers, reals, booleans, arrays and objects; null is refused.
 */
#ifndef TOML_EDIT_H
#define TOML_EDIT_H

#include <stddef.h>

#include <jansson.h>

struct toml_doc;

/* Take a copy of a document that toml_parse accepts; NULL with *cause when it does not. */
struct toml_doc *toml_edit_open(const char *text, size_t len, char **cause);
void toml_edit_free(struct toml_doc *d);
/* The document's current text (borrowed, NUL-terminated) and its length. */
const char *toml_edit_text(const struct toml_doc *d, size_t *len);

/*
 * Set the value at path (n segments), creating the tables it needs. Objects merge nothing:
 * an object over an existing table replaces its keys one by one (keys not in the object are
 * removed), keeping the table's place and comments. 0, or -1 with *cause (a parent that is
 * not a table, a null value).
 */
int toml_edit_set(
	struct toml_doc *d, const char *const *path, size_t n, const json_t *value, char **cause);
/* Remove the key or table at path; 1 when something was removed, 0 when it was absent. */
int toml_edit_remove(struct toml_doc *d, const char *const *path, size_t n);

/* A value as toml_edit writes it (strings in its choice of quotes); heap, NULL for null. */
char *toml_edit_render(const json_t *value);
/* A key segment: bare when it can be, else a basic quoted string; heap. */
char *toml_edit_render_key(const char *key);

#endif
