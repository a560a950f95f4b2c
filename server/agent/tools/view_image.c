/*
 * view_image (view_image.h): arguments, the read and its checks in upstream's words, the
 * output. Texts recorded from 0.169: "unable to locate image at `P`: <io error>", "image path
 * `P` is not a file", "unable to process image: invalid or unsupported image data".
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "view_image.h"
#include "protocol/base64.h"
#include "protocol/xmalloc.h"

int
view_image_args(const char *args, const char *cwd, struct view_image *v, char **cause)
{
	json_t *a;
	json_error_t err;
	const char *p;

	memset(v, 0, sizeof *v);
	a = json_loads(args != NULL ? args : "", JSON_DECODE_ANY, &err);
	if (a == NULL) {
		*cause = xasprintf("failed to parse function arguments: %s at line %d column %d",
			err.text, err.line, err.column);
		return -1;
	}
	p = json_string_value(json_object_get(a, "path"));
	if (!json_is_object(a) || p == NULL) {
		/* serde reports a missing field at the object's end: the text's last column */
		*cause = json_is_object(a) && json_object_get(a, "path") == NULL
			? xasprintf("failed to parse function arguments: missing field "
				    "`path` at line 1 column %zu",
				  strlen(args))
			: xstrdup("failed to parse function arguments: invalid type, "
				  "expected a string path");
		json_decref(a);
		return -1;
	}
	if (p[0] == '/' || cwd == NULL || cwd[0] == '\0')
		v->path = xstrdup(p);
	else
		v->path = xasprintf("%s%s%s", cwd, cwd[strlen(cwd) - 1] == '/' ? "" : "/", p);
	json_decref(a);
	return 0;
}

const char *
view_image_sniff(const unsigned char *b, size_t n)
{
	if (n >= 8 && memcmp(b, "\x89PNG\r\n\x1a\n", 8) == 0)
		return "image/png";
	if (n >= 3 && b[0] == 0xff && b[1] == 0xd8 && b[2] == 0xff)
		return "image/jpeg";
	if (n >= 6 && (memcmp(b, "GIF87a", 6) == 0 || memcmp(b, "GIF89a", 6) == 0))
		return "image/gif";
	if (n >= 12 && memcmp(b, "RIFF", 4) == 0 && memcmp(b + 8, "WEBP", 4) == 0)
		return "image/webp";
	return NULL;
}

/* Rust's io::Error Display: the C library's text and "(os error N)". */
static char *
vi_io_error(int e)
{
	return xasprintf("%s (os error %d)", strerror(e), e);
}

void
view_image_load(struct view_image *v)
{
	struct stat st;
	unsigned char *data = NULL;
	size_t got = 0;
	ssize_t r;
	const char *mime;
	char *why;
	int fd;

	if (stat(v->path, &st) != 0) {
		why = vi_io_error(errno);
		v->error = xasprintf("unable to locate image at `%s`: %s", v->path, why);
		free(why);
		return;
	}
	if (!S_ISREG(st.st_mode)) {
		v->error = xasprintf("image path `%s` is not a file", v->path);
		return;
	}
	if ((uint64_t)st.st_size > VIEW_IMAGE_MAX_BYTES) {
		v->error = xasprintf("unable to process image: the file is larger than %u bytes",
			VIEW_IMAGE_MAX_BYTES);
		return;
	}
	/* O_NONBLOCK: a FIFO swapped in after the stat must not hang the worker */
	if ((fd = open(v->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)) < 0) {
		why = vi_io_error(errno);
		v->error = xasprintf("unable to read image at `%s`: %s", v->path, why);
		free(why);
		return;
	}
	data = xmalloc((size_t)st.st_size + 1);
	while (got <= (size_t)st.st_size &&
		(r = read(fd, data + got, (size_t)st.st_size + 1 - got)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	if (got > (size_t)st.st_size || (mime = view_image_sniff(data, got)) == NULL) {
		/* grown meanwhile past what was checked, or not an image we know */
		v->error = xstrdup("unable to process image: invalid or unsupported image data");
		free(data);
		return;
	}
	v->mime = xstrdup(mime);
	v->b64 = xmalloc(base64_encoded_len(got) + 1);
	base64_encode(data, got, v->b64);
	v->b64[base64_encoded_len(got)] = '\0';
	free(data);
}

char *
view_image_data_url(const struct view_image *v)
{
	return xasprintf("data:%s;base64,%s", v->mime, v->b64);
}

json_t *
view_image_output(const struct view_image *v, const char *call_id)
{
	char *url = view_image_data_url(v);
	json_t *o = json_pack("{s:s, s:s, s:[{s:s, s:s, s:s}]}", "type", "function_call_output",
		"call_id", call_id, "output", "type", "input_image", "image_url", url, "detail",
		"high");

	free(url);
	return o;
}

json_t *
view_image_cell(const struct view_image *v)
{
	char *url = xasprintf("data:application/octet-stream;base64,%s", v->b64);
	json_t *o = json_pack("{s:s}", "image_url", url);

	free(url);
	return o;
}

json_t *
view_image_item(const struct view_image *v, const char *call_id)
{
	return json_pack("{s:s, s:s, s:s}", "type", "imageView", "id", call_id, "path", v->path);
}

char *
view_image_typed_url(const char *url)
{
	static const char pre[] = "data:application/octet-stream;base64,";
	unsigned char head[16];
	size_t n = 0;
	const char *mime;

	/* 16 characters: the first 12 bytes, enough for every signature sniffed */
	if (strncmp(url, pre, sizeof pre - 1) != 0 || strlen(url) < sizeof pre - 1 + 16 ||
		base64_decode(url + sizeof pre - 1, 16, head, &n, NULL) != 0 ||
		(mime = view_image_sniff(head, n)) == NULL)
		return xstrdup(url);
	return xasprintf("data:%s;base64,%s", mime, url + sizeof pre - 1);
}

void
view_image_free(struct view_image *v)
{
	free(v->path);
	free(v->error);
	free(v->mime);
	free(v->b64);
	memset(v, 0, sizeof *v);
}
