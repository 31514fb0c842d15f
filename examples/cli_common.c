/* whisperkv-transcribe's messages and clock (cli_common.h). */
#include "cli_common.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

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

double cli_now_ms(void)
{
    return (double)g_get_monotonic_time() / 1000.0;
}
