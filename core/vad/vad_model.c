/* The ggml Silero VAD file (whisper.cpp's models/convert-silero-vad-to-ggml.py): a
 * 106-byte header, then 15 tensor records.  Read with the Whisper loader's
 * bounds-checked reader (ggml_file.h), so every message names the file and the byte
 * offset.  whisper.cpp's graph hard-codes the network's shape, so every header value
 * and tensor shape must be exactly Silero's; a Whisper model (same magic) fails at
 * the model-type string, where it keeps n_vocab. */
#include "model/ggml_file.h"
#include "model/quant.h"
#include "base/util.h"
#include "vad/vad_internal.h"
#include "vad/vad_layout.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MODEL_TYPE WKV_VAD_MODEL_TYPE
#define N_TENSORS WKV_VAD_N_TENSORS

typedef wkv__vad_tensor_def tensor_def;
static const tensor_def *const defs = wkv__vad_tensors;

/* in, out channels and stride of each encoder layer (the strides are the graph's) */
const int wkv__vad_enc_shape[WKV_VAD_LAYERS][3] = {
    {129, 128, 1}, {128, 64, 2}, {64, 64, 2}, {64, 128, 1},
};

static size_t def_count(const tensor_def *d)
{
    size_t n = 1;
    for (int i = 0; i < d->n_dims; i++)
        n *= (size_t)d->ne[i];
    return n;
}

/* ---------------------------------------------------------------- header */

static int expect_i32(wkv__reader *r, int32_t want, const char *what)
{
    uint64_t at = r->off;
    int32_t v;
    if (wkv__rd_i32(r, &v, what))
        return -1;
    if (v != want) {
        wkv__fail(r, at, "%s is %" PRId32 ", expected %" PRId32 " (only the Silero VAD "
                        "network whisper.cpp runs is supported)", what, v, want);
        return -1;
    }
    return 0;
}

static int read_model_type(wkv__reader *r)
{
    uint64_t at = r->off;
    int32_t len;
    if (wkv__rd_i32(r, &len, "the model type length"))
        return -1;
    if (len != (int32_t)strlen(MODEL_TYPE)) {
        /* a Whisper file keeps n_vocab (51864..51866) here */
        if (len >= 50000 && len <= 60000)
            wkv__fail(r, at, "this is a Whisper model (n_vocab %" PRId32 " where a VAD file "
                            "names its model type), not a Silero VAD model", len);
        else
            wkv__fail(r, at, "model type length %" PRId32 ", expected %zu for \"%s\": not a "
                            "Silero VAD model file", len, strlen(MODEL_TYPE), MODEL_TYPE);
        return -1;
    }
    if (wkv__need(r, (uint64_t)len, "the model type"))
        return -1;
    const uint8_t *q = wkv__at(r, r->off, (size_t)len);
    if (!q)
        return -1;
    if (memcmp(q, MODEL_TYPE, (size_t)len) != 0) {
        wkv__fail(r, r->off, "model type \"%.*s\", expected \"%s\"", (int)len,
                 (const char *)q, MODEL_TYPE);
        return -1;
    }
    r->off += (uint64_t)len;
    return 0;
}

static int read_header(wkv__reader *r, wkv_vad_model *m)
{
    static const char *const vnames[3] = {"version major", "version minor", "version patch"};
    if (wkv__read_magic(r) || read_model_type(r))
        return -1;
    for (int i = 0; i < 3; i++) {
        uint64_t at = r->off;
        int32_t v;
        if (wkv__rd_i32(r, &v, vnames[i]))
            return -1;
        if (v < 0 || v > 999) {
            wkv__fail(r, at, "%s is %" PRId32 ", expected 0..999", vnames[i], v);
            return -1;
        }
        m->version[i] = v;
    }
    static const char *const names[WKV_VAD_N_HEADER] = {
        "n_window", "n_context", "n_encoder_layers",
        "layer 0 in_channels", "layer 0 out_channels", "layer 0 kernel_size",
        "layer 1 in_channels", "layer 1 out_channels", "layer 1 kernel_size",
        "layer 2 in_channels", "layer 2 out_channels", "layer 2 kernel_size",
        "layer 3 in_channels", "layer 3 out_channels", "layer 3 kernel_size",
        "lstm_input_size", "lstm_hidden_size", "final_conv_in", "final_conv_out",
    };
    for (int i = 0; i < WKV_VAD_N_HEADER; i++)
        if (expect_i32(r, wkv__vad_header[i], names[i]))
            return -1;
    return 0;
}

/* ---------------------------------------------------------------- tensors */

/* Reads one record's header at r->off; *idx gets its entry in defs. */
static int read_record(wkv__reader *r, const int *seen, int *idx)
{
    uint64_t at = r->off;
    int32_t n_dims, name_len, type, ne[4];
    if (wkv__rd_i32(r, &n_dims, "a tensor's n_dims") ||
        wkv__rd_i32(r, &name_len, "a tensor's name length") ||
        wkv__rd_i32(r, &type, "a tensor's type"))
        return -1;
    if (n_dims < 0 || n_dims > 4) {
        wkv__fail(r, at, "tensor n_dims %" PRId32 ", expected 0..4", n_dims);
        return -1;
    }
    if (name_len < 1 || name_len > WKV_MAX_NAME_LEN) {
        wkv__fail(r, at + 4, "tensor name length %" PRId32 ", expected 1..%d", name_len,
                 WKV_MAX_NAME_LEN);
        return -1;
    }
    for (int i = 0; i < n_dims; i++)
        if (wkv__rd_i32(r, &ne[i], "a tensor's dimensions"))
            return -1;
    if (wkv__need(r, (uint64_t)name_len, "a tensor name"))
        return -1;
    const char *name = (const char *)wkv__at(r, r->off, (size_t)name_len);
    if (!name)
        return -1;
    *idx = -1;
    for (int k = 0; k < N_TENSORS; k++)
        if ((size_t)name_len == strlen(defs[k].name) && !memcmp(name, defs[k].name, (size_t)name_len))
            *idx = k;
    if (*idx < 0) {
        wkv__fail(r, r->off, "unknown tensor \"%.*s\" in a Silero VAD file", (int)name_len, name);
        return -1;
    }
    r->off += (uint64_t)name_len;
    const tensor_def *d = &defs[*idx];
    if (seen[*idx]) {
        wkv__fail(r, at, "tensor \"%s\" appears twice", d->name);
        return -1;
    }
    int same = n_dims == d->n_dims;
    for (int i = 0; same && i < n_dims; i++)
        same = ne[i] == d->ne[i];
    if (!same) {
        char want[48] = "", got[64] = "";
        for (int i = 0; i < d->n_dims; i++)
            snprintf(want + strlen(want), sizeof want - strlen(want), " %" PRId32, d->ne[i]);
        for (int i = 0; i < n_dims; i++)
            snprintf(got + strlen(got), sizeof got - strlen(got), " %" PRId32, ne[i]);
        wkv__fail(r, at, "tensor \"%s\" has the wrong shape [%s ], expected [%s ] (innermost "
                        "first)", d->name, got, want);
        return -1;
    }
    if (type != d->type) {
        wkv__fail(r, at + 8, "tensor \"%s\" has type %" PRId32 ", expected %d (%s)", d->name, type,
                 d->type, wkv__quant_type_name(d->type));
        return -1;
    }
    return 0;
}

/* The data of tensor defs[idx] at r->off into dst, widened to f32. */
static int read_data(wkv__reader *r, int idx, float *dst)
{
    const tensor_def *d = &defs[idx];
    size_t n = def_count(d);
    uint64_t bytes = wkv__type_bytes(d->type, n);
    if (wkv__need(r, bytes, d->name))
        return -1;
    const uint8_t *q = wkv__at(r, r->off, (size_t)bytes);
    if (!q)
        return -1;
    wkv__row_to_f32(d->type, q, dst, n);
    size_t bad = wkv__first_out_of_range(dst, n, INFINITY);
    if (bad < n) {
        wkv__fail(r, r->off + wkv__type_bytes(d->type, bad), "tensor \"%s\": value %zu is not "
                 "finite", d->name, bad);
        return -1;
    }
    r->off += bytes;
    return 0;
}

static int read_tensors(wkv__reader *r, float *const *dst)
{
    int seen[N_TENSORS] = {0}, n_seen = 0;
    if (r->off == r->size) {
        wkv__fail(r, r->off, "no tensors: the file ends after the header");
        return -1;
    }
    while (r->off < r->size) {
        int idx;
        if (read_record(r, seen, &idx) || read_data(r, idx, dst[idx]))
            return -1;
        seen[idx] = 1;
        n_seen++;
    }
    for (int k = 0; k < N_TENSORS; k++)
        if (!seen[k]) {
            wkv__fail(r, r->off, "tensor \"%s\" is missing (%d of %d found; truncated file?)",
                     defs[k].name, n_seen, N_TENSORS);
            return -1;
        }
    return 0;
}

/* ---------------------------------------------------------------- load */

static wkv_vad_model *parse(wkv__reader *r, const char *name, char **error)
{
    wkv_vad_model *m = wkv__calloc(1, sizeof *m);
    size_t total = 0;
    for (int k = 0; k < N_TENSORS; k++)
        total += def_count(&defs[k]);
    if (!m || !(m->arena = wkv__malloc(total * sizeof *m->arena))) {
        wkv__set_error(error, "%s: offset 0: out of memory", name);
        goto fail;
    }
    float *dst[N_TENSORS];
    float *p = m->arena;
    for (int k = 0; k < N_TENSORS; k++) {
        dst[k] = p;
        p += def_count(&defs[k]);
    }
    if (read_header(r, m) || read_tensors(r, dst))
        goto fail;
    for (int l = 0; l < WKV_VAD_LAYERS; l++) {
        m->enc_w[l] = dst[2 * l];
        m->enc_b[l] = dst[2 * l + 1];
    }
    m->w_ih = dst[8];
    m->w_hh = dst[9];
    m->b_ih = dst[10];
    m->b_hh = dst[11];
    m->out_w = dst[12];
    m->out_b = dst[13][0];
    m->basis = dst[14];
    return m;
fail:
    wkv_vad_model_free(m);
    return NULL;
}

wkv_vad_model *wkv_vad_model_load(const char *path, char **error)
{
    if (!path) {
        wkv__set_error(error, "(null): offset 0: no VAD model path given");
        return NULL;
    }
    wkv__reader r;
    if (wkv__reader_open(&r, path, error))
        return NULL;
    wkv_vad_model *m = parse(&r, path, error);
    wkv__reader_close(&r);
    return m;
}

wkv_vad_model *wkv_vad_model_load_memory(const void *data, size_t size, char **error)
{
    if (!data && size) {
        wkv__set_error(error, "(memory): offset 0: no data given");
        return NULL;
    }
    wkv__reader r;
    wkv__reader_memory(&r, data, size, "(memory)", error);
    return parse(&r, "(memory)", error);
}

void wkv_vad_model_free(wkv_vad_model *m)
{
    if (!m)
        return;
    wkv__free(m->arena);
    wkv__free(m);
}

void wkv_vad_model_version(const wkv_vad_model *m, int version[3])
{
    for (int i = 0; i < 3; i++)
        version[i] = m->version[i];
}
