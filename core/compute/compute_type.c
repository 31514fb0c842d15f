/* The compute types' names (whisperkv.h), whether or not the build has oneDNN. */
#include "whisperkv.h"

#include <string.h>

int wkv_compute_type_parse(const char *name)
{
    static const char *const names[] = {"auto", "f32", "bf16", "int8"};
    for (int i = 0; name && i < 4; i++)
        if (!strcmp(name, names[i]))
            return i;
    return -1;
}

const char *wkv_compute_type_name(wkv_compute_type type)
{
    switch (type) {
    case WKV_COMPUTE_AUTO: return "auto";
    case WKV_COMPUTE_F32: return "f32";
    case WKV_COMPUTE_BF16: return "bf16";
    case WKV_COMPUTE_INT8: return "int8";
    }
    return "?";
}

int wkv_cache_type_parse(const char *name)
{
    static const char *const names[] = {"auto", "f32", "f16"};
    for (int i = 0; name && i < 3; i++)
        if (!strcmp(name, names[i]))
            return i;
    return -1;
}

const char *wkv_cache_type_name(wkv_cache_type type)
{
    switch (type) {
    case WKV_CACHE_AUTO: return "auto";
    case WKV_CACHE_F32: return "f32";
    case WKV_CACHE_F16: return "f16";
    }
    return "?";
}
