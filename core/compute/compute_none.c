/* The compute types without oneDNN (the build picks this file instead of compute.c
 * and compute_attn.c): bf16 and int8 are an error naming what is missing, and every
 * product falls back to f32. */
#include "compute/compute.h"
#include "base/util.h"
#include "model/model.h"

wkv__compute *wkv__compute_new(const wkv_model *m, wkv_compute_type type, int n_parts,
                             char **error)
{
    (void)m;
    (void)n_parts;
    wkv__set_error(error, "compute type %s needs oneDNN (libdnnl), which this build of "
                         "whisperkv was made without (meson -Ddnnl=enabled)",
                  wkv_compute_type_name(type));
    return NULL;
}

void wkv__compute_free(wkv__compute *c)
{
    (void)c;
}

const wkv__cweight *wkv__compute_weight(const wkv__compute *c, const void *key, int n, int in)
{
    (void)c, (void)key, (void)n, (void)in;
    return NULL;
}

void wkv__compute_convert(wkv__compute *c, wkv__pool *pool, int count, const wkv__mat *const *src,
                         const int *n, const int *in, const wkv__cweight **cw)
{
    (void)c, (void)pool, (void)src, (void)n, (void)in;
    for (int i = 0; i < count; i++)
        cw[i] = NULL;
}

size_t wkv__compute_scratch_bytes(const wkv__compute *c)
{
    (void)c;
    return 0;
}

int wkv__compute_linear(wkv__compute *c, int part, const float *x, int r0, int r1, int in,
                       const wkv__cweight *w, const float *b, int n, float *out, int accumulate,
                       int flags)
{
    (void)c, (void)part, (void)x, (void)r0, (void)r1, (void)in, (void)w, (void)b, (void)n;
    (void)out, (void)accumulate, (void)flags;
    return -1;
}

int wkv__compute_fallbacks(const wkv__compute *c)
{
    (void)c;
    return 0;
}

void wkv__compute_force_fallback(wkv__compute *c, int on)
{
    (void)c, (void)on;
}

void wkv__compute_set_frames(wkv__compute *c, int T)
{
    (void)c, (void)T;
}

void wkv__compute_set_pv_f32(wkv__compute *c, int on)
{
    (void)c, (void)on;
}

int wkv__compute_pv_f32(const wkv__compute *c)
{
    (void)c;
    return 0;
}

void wkv__compute_kv_rows(wkv__compute *c, const float *k, const float *v, int r0, int r1, int d)
{
    (void)c, (void)k, (void)v, (void)r0, (void)r1, (void)d;
}

int wkv__compute_scores(wkv__compute *c, int part, const float *q, int nq, int d, int hd, int h,
                       int T, float scale, float *scores)
{
    (void)c, (void)part, (void)q, (void)nq, (void)d, (void)hd, (void)h, (void)T, (void)scale;
    (void)scores;
    return -1;
}

int wkv__compute_context(wkv__compute *c, int part, const float *p, int nq, int T, int d, int hd,
                        int h, float *inv, float *out)
{
    (void)c, (void)part, (void)p, (void)nq, (void)T, (void)d, (void)hd, (void)h, (void)inv;
    (void)out;
    return -1;
}
