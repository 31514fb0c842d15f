/* whisperkv-transcribe's messages, output files and clock (cli_common.h). */
#include "cli_common.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib/gstdio.h>

int cli_fail(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_strdelimit(msg, "\r\n", ' ');
    fprintf(stderr, "%s: %s\n", CLI_PROG, msg);
    g_free(msg);
    return status;
}

int cli_usage(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s: %s (see --help)\n", CLI_PROG, msg);
    g_free(msg);
    return 2;
}

char *cli_core_error(char *err, const char *fallback)
{
    char *s = g_strdup(err ? err : fallback);
    free(err);
    return s;
}

static gboolean is_stdout(const char *path)
{
    return !path || strcmp(path, "-") == 0;
}

FILE *cli_open_output(const char *path, char **msg)
{
    if (is_stdout(path))
        return stdout;
    FILE *f = g_fopen(path, "w");
    if (!f)
        *msg = g_strdup_printf("cannot write '%s': %s", path, g_strerror(errno));
    return f;
}

gboolean cli_close_output(FILE *f, const char *path, char **msg)
{
    gboolean ok = fflush(f) == 0 && !ferror(f);
    if (f != stdout)
        ok = fclose(f) == 0 && ok;
    if (!ok)
        *msg = g_strdup_printf("cannot write '%s': %s", is_stdout(path) ? "stdout" : path,
                               g_strerror(errno));
    return ok;
}

gboolean cli_write_f32_le(const char *path, const float *data, size_t count, char **error)
{
    FILE *f = g_fopen(path, "wb");
    if (!f) {
        *error = g_strdup_printf("cannot write '%s': %s", path, g_strerror(errno));
        return FALSE;
    }
    gboolean ok = TRUE;
#if G_BYTE_ORDER == G_LITTLE_ENDIAN
    ok = fwrite(data, sizeof(float), count, f) == count;
#else
    for (size_t i = 0; i < count && ok; i++) {
        guint32 u;
        memcpy(&u, &data[i], 4);
        u = GUINT32_TO_LE(u);
        ok = fwrite(&u, 4, 1, f) == 1;
    }
#endif
    if (fclose(f) != 0)
        ok = FALSE;
    if (!ok)
        *error = g_strdup_printf("cannot write '%s': %s", path, g_strerror(errno));
    return ok;
}

double cli_now_ms(void)
{
    return (double)g_get_monotonic_time() / 1000.0;
}
