/* What every part of whisperkv-transcribe uses: its one-line messages on stderr, its
 * output files and its clock. */
#ifndef CLI_COMMON_H
#define CLI_COMMON_H

#include <stdio.h>

#include <glib.h>

#define CLI_PROG "whisperkv-transcribe"

/* One line on stderr, "whisperkv-transcribe: <message>" (line breaks become spaces);
 * returns status. */
int cli_fail(int status, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
/* "whisperkv-transcribe: <message> (see --help)" on stderr; returns 2, the exit status
 * of bad options. */
int cli_usage(const char *fmt, ...) G_GNUC_PRINTF(1, 2);
/* The core's messages are malloc'd: a copy of err in GLib memory (of fallback when err
 * is NULL); frees err. */
char *cli_core_error(char *err, const char *fallback);
/* The output: standard output for NULL or "-", else `path` opened for writing; NULL
 * with "cannot write 'PATH': why" in *msg (g_free it). */
FILE *cli_open_output(const char *path, char **msg);
/* Flushes f and closes it unless it is standard output; FALSE (f closed all the same)
 * with "cannot write 'PATH': why" in *msg. */
gboolean cli_close_output(FILE *f, const char *path, char **msg);
/* count floats written little-endian to path (the debug outputs' raw files); FALSE
 * with "cannot write 'PATH': why" in *error (g_free it). */
gboolean cli_write_f32_le(const char *path, const float *data, size_t count, char **error);
/* The monotonic clock, in milliseconds. */
double cli_now_ms(void);

#endif
