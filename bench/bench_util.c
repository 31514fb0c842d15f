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

void cpu_ticks_now(cpu_ticks *t)
{
    t->total = t->steal = 0;
    FILE *f = fopen("/proc/stat", "r");
    unsigned long long v[8] = {0};
    if (f && fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
                    &v[3], &v[4], &v[5], &v[6], &v[7]) == 8) {
        for (int i = 0; i < 8; i++)
            t->total += v[i];
        t->steal = v[7];
    }
    if (f)
        fclose(f);
}

void print_steal(const cpu_ticks *a)
{
    cpu_ticks b;
    cpu_ticks_now(&b);
    if (b.total > a->total)
        printf("\nhost steal during the run: %.1f %% of this machine's CPU time (/proc/stat)\n",
               100.0 * (double)(b.steal - a->steal) / (double)(b.total - a->total));
    else
        printf("\nhost steal during the run: unknown (no /proc/stat)\n");
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
