/* The seam's context side (compute/backend.h): the build's list of encoder backends,
 * the one a compute type picks, and the encoder and cross fill run through it. */
#include "net/context.h"
#include "net/backend_list.h" /* generated: WKV_BACKENDS(X) */
#include "base/util.h"

#define X(name) extern const wkv__backend wkv__backend_##name;
WKV_BACKENDS(X)
#undef X

static const wkv__backend *const backends[] = {
#define X(name) &wkv__backend_##name,
    WKV_BACKENDS(X)
#undef X
};
enum { N_BACKENDS = sizeof backends / sizeof *backends };

void wkv__backend_sizes(const wkv_model *m, int n_parts, size_t *arena_floats,
                       size_t *work_floats)
{
    *arena_floats = *work_floats = 0;
    for (int i = 0; i < N_BACKENDS; i++) {
        size_t a, w;
        backends[i]->sizes(m, n_parts, &a, &w);
        *arena_floats = a > *arena_floats ? a : *arena_floats;
        *work_floats = w > *work_floats ? w : *work_floats;
    }
}

wkv__encoder *wkv__backend_new(const wkv__backend_lend *lend, wkv_compute_type type,
                              char **error)
{
    for (int i = 0; i < N_BACKENDS; i++)
        if (backends[i]->takes(type))
            return backends[i]->create(lend, type, error);
    wkv__set_error(error, "no encoder backend of this build runs compute type %s",
                  wkv_compute_type_name(type));
    return NULL;
}

void wkv__backend_free(wkv__encoder *e)
{
    if (e)
        e->backend->free(e);
}

size_t wkv__backend_bytes(const wkv__encoder *e)
{
    return e ? e->backend->bytes(e) : 0;
}

int wkv__encoder_run(wkv_context *ctx, const float *mel)
{
    return ctx->encoder->backend->run(ctx->encoder, mel, ctx->enc_out, &ctx->stats);
}

void wkv__context_fill_cross(wkv_context *ctx)
{
    ctx->encoder->backend->fill(ctx->encoder, ctx->enc_out, &ctx->cross);
    ctx->cross.valid = 1;
    ctx->stats.cross_kv_computes++;
}
