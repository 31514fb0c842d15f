/* The loaders' contract on a refused input, shared by the loader fuzz targets: a
 * "(memory): offset N: ..." message with N inside the input; anything else aborts
 * (a finding). */
#ifndef WKV_FUZZ_REFUSAL_H
#define WKV_FUZZ_REFUSAL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline void wkv_fuzz_check_refusal(const char *err, size_t size)
{
    static const char head[] = "(memory): offset ";
    if (!err || strncmp(err, head, sizeof head - 1) != 0) {
        fprintf(stderr, "refused without a proper message: %s\n", err ? err : "(null)");
        abort();
    }
    unsigned long long off = strtoull(err + sizeof head - 1, NULL, 10);
    if (off > size) {
        fprintf(stderr, "offset %llu past the input's %zu bytes: %s\n", off, size, err);
        abort();
    }
}

#endif
