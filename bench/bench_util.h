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

#endif
