/*
 * A call's arguments read as the shell tools need them (tool_args.h): wrong types fall back to
 * the default or fail, never crash; a word with an embedded NUL is refused (it could not reach
 * execve as the model wrote it).
 */
#include <string.h>

#include "tool_args.h"

long long
tool_args_int(const json_t *args, const char *key, long long dflt)
{
	json_t *v = json_object_get(args, key);

	return json_is_integer(v) ? (long long)json_integer_value(v) : dflt;
}

int
tool_args_words(const json_t *a, struct shell_words *w)
{
	json_t *s;
	size_t i;

	if (!json_is_array(a) || json_array_size(a) == 0)
		return -1;
	json_array_foreach((json_t *)a, i, s)
	{
		if (!json_is_string(s) || strlen(json_string_value(s)) != json_string_length(s) ||
			shell_words_push(w, json_string_value(s), json_string_length(s)) != 0)
			return -1;
	}
	return 0;
}
