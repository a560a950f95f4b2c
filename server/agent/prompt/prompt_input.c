/*
 * The user's input (wire UserInput[]) as the model's Responses message, local images read
 * into data URLs, and as the v2 userMessage item, as upstream 0.169 converts them.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "prompt_input.h"
#include "protocol/base64.h"
#include "protocol/xmalloc.h"

#define PROMPT_IMAGE_MAX (20u << 20) /* a local image file, at most */

/* A local image as a data URL; NULL with *cause. */
static char *
prompt_image_url(const char *path, char **cause)
{
	static const char *const types[][2] = {{".png", "image/png"}, {".jpg", "image/jpeg"},
		{".jpeg", "image/jpeg"}, {".gif", "image/gif"}, {".webp", "image/webp"}};
	const char *mime = "application/octet-stream", *dot = strrchr(path, '.');
	struct stat st;
	char *data, *url = NULL;
	size_t n = 0;
	ssize_t r;
	int fd;

	for (size_t i = 0; dot != NULL && i < sizeof types / sizeof types[0]; i++)
		if (strcasecmp(dot, types[i][0]) == 0)
			mime = types[i][1];
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1 || fstat(fd, &st) == -1) {
		*cause = xasprintf("cannot read image %s: %s", path, strerror(errno));
		if (fd != -1)
			close(fd);
		return NULL;
	}
	if (!S_ISREG(st.st_mode) || (size_t)st.st_size > PROMPT_IMAGE_MAX) {
		*cause = xasprintf("cannot read image %s: not a file of at most %u bytes", path,
			PROMPT_IMAGE_MAX);
		close(fd);
		return NULL;
	}
	data = xmalloc((size_t)st.st_size + 1);
	while (n < (size_t)st.st_size && (r = read(fd, data + n, (size_t)st.st_size - n)) > 0)
		n += (size_t)r;
	close(fd);
	url = xmalloc(strlen(mime) + 14 + base64_encoded_len(n) + 1);
	r = snprintf(url, strlen(mime) + 14, "data:%s;base64,", mime);
	base64_encode(data, n, url + r);
	url[r + (ssize_t)base64_encoded_len(n)] = '\0';
	free(data);
	return url;
}

/* The user's input as a Responses user message (new reference); NULL with *cause. */
json_t *
agent_user_message(const json_t *input, char **cause)
{
	json_t *content = json_array(), *in;
	const char *type, *s;
	char *url, *label;
	size_t i;
	int images = 0;

	json_array_foreach((json_t *)input, i, in)
	{
		type = json_string_value(json_object_get(in, "type"));
		if (type == NULL)
			continue;
		if (strcmp(type, "text") == 0) {
			s = json_string_value(json_object_get(in, "text"));
			json_array_append_new(content,
				json_pack("{s:s, s:s}", "type", "input_text", "text",
					s != NULL ? s : ""));
		} else if (strcmp(type, "image") == 0) {
			s = json_string_value(json_object_get(in, "url"));
			if (s == NULL || strncmp(s, "data:", 5) != 0) {
				*cause = xstrdup(
					"remote image URLs are not supported; use an inline "
					"data URL instead");
				goto fail;
			}
			json_array_append_new(content,
				json_pack("{s:s, s:s}", "type", "input_image", "image_url", s));
		} else if (strcmp(type, "localImage") == 0) {
			s = json_string_value(json_object_get(in, "path"));
			if (s == NULL || (url = prompt_image_url(s, cause)) == NULL) {
				if (s == NULL)
					*cause = xstrdup("localImage needs a path");
				goto fail;
			}
			label = xasprintf("<image name=[Image #%d] path=\"%s\">", ++images, s);
			json_array_append_new(content,
				json_pack("{s:s, s:s}", "type", "input_text", "text", label));
			json_array_append_new(content,
				json_pack("{s:s, s:s}", "type", "input_image", "image_url", url));
			free(label);
			free(url);
		}
	}
	return json_pack("{s:s, s:s, s:o}", "type", "message", "role", "user", "content", content);
fail:
	json_decref(content);
	return NULL;
}

/* The v2 userMessage item of the input (new reference). */
json_t *
agent_user_item(const json_t *input, const char *id)
{
	json_t *content = json_array(), *in, *c;
	size_t i;

	json_array_foreach((json_t *)input, i, in)
	{
		c = json_deep_copy(in);
		if (strcmp(json_string_value(json_object_get(c, "type")) ?: "", "text") == 0 &&
			json_object_get(c, "text_elements") == NULL)
			json_object_set_new(c, "text_elements", json_array());
		json_array_append_new(content, c);
	}
	return json_pack("{s:s, s:s, s:n, s:o}", "type", "userMessage", "id", id, "clientId",
		"content", content);
}
