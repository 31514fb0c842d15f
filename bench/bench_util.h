/* What the benches share: a monotonic clock, medians, the CPU's name for their first
 * line. */
#ifndef WKV_BENCH_UTIL_H
#define WKV_BENCH_UTIL_H

#include <stddef.h>

/* CLOCK_MONOTONIC in milliseconds. */
double now_ms(void);
/* The median of v[0..n) (n >= 1; v is sorted in place). */
double median(double *v, int n);
/* The CPU's model name and family/model numbers (/proc/cpuinfo), or "unknown CPU". */
void cpu_name(char *out, size_t n);
/* The whole machine's CPU time so far (/proc/stat's first line, in ticks): all of it,
 * and the part the hypervisor gave to others while this VM wanted it (steal). */
typedef struct {
    unsigned long long total, steal;
} cpu_ticks;
void cpu_ticks_now(cpu_ticks *t);
/* The line a bench ends with: steal between a and now as a percentage of the machine's
 * CPU time (a run with much of it is slower for reasons of the host's, not ours). */
void print_steal(const cpu_ticks *a);

#endif
