/* The compute types' names, descriptions and availability (whisperkv.h), from the one
 * list WKV_COMPUTE_TYPES, whether or not the build has oneDNN. */
#include "whisperkv.h"
#include "base/cpu.h"

#include <string.h>

static const struct {
    const char *name, *description;
} types[] = {
#define X(suffix, name, description) {name, description},
    WKV_COMPUTE_TYPES(X)
#undef X
};
enum { N_TYPES = sizeof types / sizeof *types };

int wkv_compute_type_count(void)
{
    return N_TYPES;
}

int wkv_compute_type_parse(const char *name)
{
    for (int i = 0; name && i < N_TYPES; i++)
        if (!strcmp(name, types[i].name))
            return i;
    return -1;
}

const char *wkv_compute_type_name(wkv_compute_type type)
{
    return (unsigned)type < N_TYPES ? types[type].name : "?";
}

const char *wkv_compute_type_description(wkv_compute_type type)
{
    return (unsigned)type < N_TYPES ? types[type].description : NULL;
}

int wkv_compute_type_available(wkv_compute_type type)
{
    switch (type) {
    case WKV_COMPUTE_AUTO:
    case WKV_COMPUTE_F32:
        return 1;
#ifdef WKV_HAVE_DNNL
    /* the CPU tests compute.c's wkv__compute_new makes before anything else */
    case WKV_COMPUTE_BF16:
        return wkv__bf16_isa() >= WKV_ISA_AVX512_BF16;
    case WKV_COMPUTE_INT8:
        return wkv__cpu_vnni();
#endif
    default:
        return 0;
    }
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
