/*
 * Files in CODEX_HOME that hold secrets (auth.json, the MCP servers' .credentials.json):
 * written whole and atomically (a 0600 temporary file, fsync, rename), so a reader sees the
 * old file or the new one and nobody else ever sees the secret, not even briefly.
 */
#ifndef SECRET_FILE_H
#define SECRET_FILE_H

/* Write text to dir/name (dir made 0700 if missing); 0, or -1 with *cause (heap). */
int secret_file_save(const char *dir, const char *name, const char *text, char **cause);

#endif
