/*
 * view_image: an image file given to the model (upstream 0.169's tool, recorded in
 * tests/fixtures/image_clock/upstream/vi_*.json). The file is read on a worker thread
 * (view_image_load), never on the loop; the model gets one input_image part with a data URL
 * and `detail: "high"`, or upstream's error text. Formats are told by their bytes (PNG, JPEG,
 * GIF, WebP), never by the name; no image is decoded here (no image library): upstream
 * re-encodes GIFs and shrinks images past 2048 pixels, we pass the file's bytes as they are.
 */
#ifndef VIEW_IMAGE_H
#define VIEW_IMAGE_H

#include <stddef.h>

#include <jansson.h>

/* A file larger than this is refused (ours: upstream shrinks big images instead). */
#define VIEW_IMAGE_MAX_BYTES (20u << 20)

struct view_image {
	char *path;  /* absolute: the call's path joined onto the turn's cwd */
	char *error; /* after view_image_load: the text for the model, or NULL */
	char *mime;  /* after a successful load: image/png, ... */
	char *b64;   /* and the file's bytes in base64 */
};

/*
 * The call's arguments `{"path": string}` joined onto cwd: 0 and v->path set, or -1 and
 * *cause the model's text ("failed to parse function arguments: missing field `path` at line
 * 1 column N", upstream's serde words).
 */
int view_image_args(const char *args, const char *cwd, struct view_image *v, char **cause);

/* The MIME type of an image's first bytes, or NULL for none we pass on. */
const char *view_image_sniff(const unsigned char *b, size_t n);

/* Read and check v->path (blocking: call it on a worker); sets error, or mime and b64. */
void view_image_load(struct view_image *v);

/* The data URL of a loaded image (heap). */
char *view_image_data_url(const struct view_image *v);

/* The model's function_call_output for call_id: output [{type: input_image, image_url,
 * detail: high}] (new reference). */
json_t *view_image_output(const struct view_image *v, const char *call_id);

/* What a cell's tools.view_image resolves to: {image_url}, typed application/octet-stream
 * as upstream's (recorded) (new reference). */
json_t *view_image_cell(const struct view_image *v);

/* The client's imageView item {type, id: the call id, path} (new reference). */
json_t *view_image_item(const struct view_image *v, const char *call_id);

/*
 * An image URL as a cell's image() passes it on (heap): a `data:application/octet-stream`
 * URL (what tools.view_image gives a cell, recorded) gets the type its bytes tell, as
 * upstream's does; any other URL is kept.
 */
char *view_image_typed_url(const char *url);

void view_image_free(struct view_image *v);

#endif
