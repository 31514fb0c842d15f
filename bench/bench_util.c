/* What the benches share (bench_util.h). */
#define _POSIX_C_SOURCE 200809L
#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The CPU's model name and family/model numbers (/proc/cpuinfo), or "unknown CPU". */
void cpu_name(char *out, size_t n)
{
    snprintf(out, n, "unknown CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[256], name[128] = "", fam[16] = "?", mod[16] = "?";
    while (fgets(line, sizeof line, f)) {
        char *v = strchr(line, ':');
        if (!v)
            continue;
        v += v[1] == ' ' ? 2 : 1;
        v[strcspn(v, "\n")] = 0;
        if (!strncmp(line, "model name", 10) && !*name)
            snprintf(name, sizeof name, "%s", v);
        else if (!strncmp(line, "cpu family", 10) && fam[0] == '?')
            snprintf(fam, sizeof fam, "%s", v);
        else if (!strncmp(line, "model\t", 6) && mod[0] == '?')
            snprintf(mod, sizeof mod, "%s", v);
    }
    fclose(f);
    if (*name)
        snprintf(out, n, "%s (family %s, model %s)", name, fam, mod);
}
