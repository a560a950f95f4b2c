/*
 * Workspace file operations (fs/readFile, writeFile, createDirectory, getMetadata, readDirectory,
 * remove, copy) with upstream 0.169's semantics and error wording, below the JSON-RPC layer.
 *
 * Each operation takes the request params (already schema-validated: presence and types of the
 * fields are guaranteed, their meaning is not) and either sets *result to a new json_t in the
 * exact response shape and returns 0, or fills *err ({code, message}) and returns a negative
 * errno. The codes are upstream's: FS_ERR_REQUEST (-32600) for a bad request (relative path, a
 * directory where a file is needed, bad base64, ...) and FS_ERR_INTERNAL (-32603) for an OS
 * error, whose message is Rust's io text, e.g. "No such file or directory (os error 2)".
 *
 * The operations block on the disk: they run on an fs_worker thread (fs_worker.h), never on the
 * event loop.
 */
#ifndef FS_H
#define FS_H

#include <jansson.h>
#include <stddef.h>

#define FS_ERR_REQUEST	(-32600)
#define FS_ERR_INTERNAL (-32603)

/* fs/readFile refuses files larger than this (the answer would be a 43 MiB line). */
#define FS_READ_MAX (32u * 1024 * 1024)
/* fs/writeFile refuses decoded data larger than this. */
#define FS_WRITE_MAX (32u * 1024 * 1024)
/* fs/readDirectory answers at most this many entries (an error past it). */
#define FS_READDIR_MAX 100000

struct fs_err {
	int code;      /* FS_ERR_REQUEST or FS_ERR_INTERNAL */
	char *message; /* owned */
};

/* An operation: params in, result or error out. */
typedef int (*fs_op_fn)(const json_t *params, json_t **result, struct fs_err *err);

int fs_read_file(const json_t *params, json_t **result, struct fs_err *err);
int fs_write_file(const json_t *params, json_t **result, struct fs_err *err);
int fs_create_directory(const json_t *params, json_t **result, struct fs_err *err);
int fs_get_metadata(const json_t *params, json_t **result, struct fs_err *err);
int fs_read_directory(const json_t *params, json_t **result, struct fs_err *err);
int fs_remove(const json_t *params, json_t **result, struct fs_err *err);
int fs_copy(const json_t *params, json_t **result, struct fs_err *err);

/*
 * fs/readFile's answer as JSON text, {"dataBase64":"..."}, with the base64 written straight
 * into it (no JSON tree: a 32 MiB file would be copied and scanned three more times). 0 and a
 * heap text of *len bytes, or an error as fs_read_file.
 */
int fs_read_file_text(const json_t *params, char **text, size_t *len, struct fs_err *err);

/* The operation of a method name ("fs/readFile" ...), or NULL. */
fs_op_fn fs_op_lookup(const char *method);

/* Free the message of an error (the struct itself is the caller's). Accepts NULL. */
void fs_err_clear(struct fs_err *err);

/* --- shared helpers (fs_path.c) --- */

/*
 * Upstream's AbsolutePathBuf: the path must be absolute; ".", "..", repeated and trailing
 * slashes are resolved textually (symlinks are not followed). 0 and a heap path in *out, or
 * -EINVAL with err set to -32600 "Invalid request: AbsolutePathBuf deserialized without a
 * base path".
 */
int fs_path_normalize(const char *in, char **out, struct fs_err *err);
/* The normalized path of params[key] (a string), as fs_path_normalize. */
int fs_param_path(const json_t *params, const char *key, char **out, struct fs_err *err);
/* A boolean param with a default (absent or null gives dflt). */
int fs_param_bool(const json_t *params, const char *key, int dflt);
/*
 * mkdir -p (Rust's create_dir_all): 0, or a negative errno (-EEXIST: the path is a file).
 * *made (may be NULL) is the shallowest folder it created (heap), NULL when none.
 */
int fs_mkdir_all(const char *path, char **made);
/* Rust's io error text of an errno, "No such file or directory (os error 2)" (heap). */
char *fs_io_text(int errnum);
/* Fill err with FS_ERR_INTERNAL and the io text of errnum; returns -errnum. */
int fs_err_io(struct fs_err *err, int errnum);
/* Fill err with code and a formatted message; returns -EINVAL. */
int fs_err_set(struct fs_err *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
