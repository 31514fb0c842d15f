/* The model loader: a whisper.cpp ggml file (the layout whisper.cpp's
 * models/convert-pt-to-ggml.py writes and whisper_model_load reads; f32, f16, or
 * quantized by whisper.cpp's quantize tool: q4_0, q4_1, q5_0, q5_1, q8_0) becomes
 * validated hyper-parameters, the mel filter bank, the vocabulary and the weights: an
 * f32 arena and the block matrices as the file stores them (below).
 *
 * The file is read (never mapped: a file truncated while it loads is then an error,
 * not a SIGBUS) and parsed with bounds checks on every field; nothing is trusted
 * before it is checked (ggml_file.c).  Tensors are parsed in two
 * passes: the first (ggml_tensors.c) validates every header, name, type, shape and
 * data range and records where each expected tensor's data lies; only then are the
 * arenas allocated here (their sizes follow from the hyper-parameters and the tensors'
 * types, and every tensor is known to be in the file) and the second pass copies the
 * data, widening f16 to f32 for the f32 arena.  Weights that would not fit in this
 * process's memory are refused before the arenas are allocated, and every weight must
 * be finite (docs/reliability.md, "Limits"): a block matrix is widened a chunk at a
 * time into a scratch to be checked.
 *
 * Every block matrix (wkv__layer's typed views, the token embedding) stored f16 or
 * quantized (q4_0, q4_1, q5_0, q5_1, q8_0) is copied as the file stores it into
 * arenaq (decoder kernels compute on it; the encoder and the cross-K/V fill widen
 * one layer at a time); only the small tensors (vectors, convolutions, positional
 * tables) and f32-stored matrices go to the f32 arena.  A matrix an f16 file stores
 * as f32 goes to f16 afterwards (wkv__weights_keep_f16). */
#include "model/ggml_file.h"
#include "base/util.h"
#include "model/vocab.h"
#include "model/quant.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* ---------------------------------------------------------------- weights */

/* Memory this process can have: physical memory, lowered by the address-space and
 * data rlimits and a cgroup (v2) memory.max when they are smaller. */
static uint64_t memory_limit(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    uint64_t lim = pages > 0 && psize > 0 ? (uint64_t)pages * (uint64_t)psize : UINT64_MAX;
    const int res[2] = {RLIMIT_AS, RLIMIT_DATA};
    for (int i = 0; i < 2; i++) {
        struct rlimit rl;
        if (getrlimit(res[i], &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
            (uint64_t)rl.rlim_cur < lim)
            lim = (uint64_t)rl.rlim_cur;
    }
    FILE *f = fopen("/sys/fs/cgroup/memory.max", "re");
    if (f) {
        unsigned long long v;
        if (fscanf(f, "%llu", &v) == 1 && v < lim) /* "max" does not parse */
            lim = v;
        fclose(f);
    }
    return lim;
}

#define CHUNK 16384 /* elements converted and checked at a time: whole blocks */

/* Copies, widens or dequantizes one tensor into dst, a chunk at a time so that each
 * chunk is checked while it is in cache: every weight must be finite, and those the
 * decoder keeps in f16 (non-f32 files) must not overflow it.  With `scratch`, dst is
 * one chunk's buffer reused for every chunk (a tensor kept in its blocks: checked
 * only): `copy` is then the tensor as stored, already read. */
static int load_tensor(wkv__reader *r, const wkv__tensor_rec *x, const uint8_t *copy, float *dst,
                       int to_f16, int scratch)
{
    const size_t chunk = CHUNK;
    const float limit = to_f16 ? 65520.0f : INFINITY; /* 65520 rounds to f16 infinity */
    for (size_t at = 0; at < x->count; at += chunk) {
        size_t n = x->count - at < chunk ? x->count - at : chunk;
        float *out = scratch ? dst : dst + at;
        /* a block type's tensor is a 2-D matrix of whole blocks (wkv__scan_tensors), and
         * CHUNK a whole number of blocks; the chunk from the copy already made, or from
         * the file */
        const uint64_t b0 = wkv__type_bytes(x->type, at);
        const uint8_t *src = copy ? copy + b0
                                  : wkv__at(r, x->data_off + b0, (size_t)wkv__type_bytes(x->type, n));
        if (!src)
            return -1;
        wkv__row_to_f32(x->type, src, out, n);
        size_t i = wkv__first_out_of_range(out, n, limit);
        if (i < n) {
            char name[WKV_MAX_NAME_LEN + 32];
            float v = out[i];
            wkv__tensor_name(x, name, sizeof name);
            uint64_t off = x->data_off + wkv__type_bytes(x->type, at + i);
            if (isnan(v) || isinf(v))
                wkv__fail(r, off, "tensor '%s' element %zu is %s: the weights are corrupt", name,
                         at + i, isnan(v) ? "NaN" : "infinite");
            else
                wkv__fail(r, off, "tensor '%s' element %zu is %g, which overflows f16 (the "
                                 "decoder keeps this matrix in f16: |x| must be below 65520)",
                         name, at + i, (double)v);
            return -1;
        }
    }
    return 0;
}

/* Second pass: the arena, the pointers and the data. */
/* A block matrix (one with a typed view) stored f16 or in quantized blocks: copied
 * as the file stores it (arenaq), never widened, so no f32 copy of the matrices
 * exists at any moment of the load. */
static int kept_in_blocks(const wkv__tensor_rec *x)
{
    return x->mat && x->type != WKV_TYPE_F32;
}

static int load_tensors(wkv__reader *r, wkv_model *m, wkv__tensor_set *ts)
{
    size_t total = 0, qbytes = 0;
    for (int k = 0; k < ts->n; k++) {
        const wkv__tensor_rec *x = &ts->e[k];
        if (kept_in_blocks(x)) { /* within the file: checked by wkv__scan_tensors */
            qbytes += (size_t)wkv__type_bytes(x->type, x->count);
            continue;
        }
        if (x->count > SIZE_MAX / sizeof(float) - total) {
            wkv__fail(r, x->hdr_off, "the weights do not fit in memory");
            return -1;
        }
        total += x->count;
    }
    /* refuse before allocating: a file can be sparse and much larger than memory, and an arena past it would only be paged out or killed while filled */
    uint64_t bytes = (uint64_t)total * sizeof(float) + qbytes, lim = memory_limit();
    if (bytes > lim) {
        wkv__fail(r, ts->e[0].hdr_off, "the weights need %" PRIu64 " MiB as f32, more than the %"
                                      PRIu64 " MiB of memory this process may use",
                 bytes >> 20, lim >> 20);
        return -1;
    }
    m->w.enc = wkv__calloc((size_t)m->hp.n_audio_layer, sizeof *m->w.enc);
    m->w.dec = wkv__calloc((size_t)m->hp.n_text_layer, sizeof *m->w.dec);
    m->arena = wkv__malloc(total * sizeof(float));
    m->arenaq = qbytes ? wkv__malloc(qbytes) : NULL;
    float *scratch = qbytes ? wkv__malloc(CHUNK * sizeof *scratch) : NULL;
    if (!m->w.enc || !m->w.dec || !m->arena || (qbytes && (!m->arenaq || !scratch))) {
        wkv__free(scratch);
        wkv__fail(r, ts->e[0].hdr_off, "out of memory allocating %zu MiB for the weights",
                 (total * sizeof(float) + qbytes) >> 20);
        return -1;
    }
    m->arena_floats = total;
    m->arenaq_bytes = qbytes;
    uint8_t *qdst = m->arenaq;
    const int f16_file = m->hp.ftype % 1000 != 0;
    float *dst = m->arena;
    int rc = 0;
    for (int k = 0; k < ts->n && rc == 0; k++) {
        wkv__tensor_rec *x = &ts->e[k];
        char *base = x->layer < 0 ? (char *)&m->w
                     : x->is_dec  ? (char *)&m->w.dec[x->layer]
                                  : (char *)&m->w.enc[x->layer];
        float **slot = (float **)(void *)(base + x->slot);
        if (kept_in_blocks(x)) {
            size_t nb = (size_t)wkv__type_bytes(x->type, x->count);
            rc = wkv__read_into(r, x->data_off, qdst, nb);
            *(wkv__mat *)(void *)(base + x->mat) = (wkv__mat){x->type, qdst};
            if (rc == 0)
                rc = load_tensor(r, x, qdst, scratch, 0, 1);
            qdst += nb;
            continue;
        }
        *slot = dst;
        int to_f16 = f16_file && x->mat;
        rc = load_tensor(r, x, NULL, dst, to_f16, 0);
        dst += x->count;
    }
    wkv__free(scratch);
    return rc;
}

/* ---------------------------------------------------------------- load */

/* Parses a model file (or image) through its reader; `name` (the path, or "(memory)")
 * heads every message. */
static wkv_model *parse(wkv__reader *rp, const char *name, int vocab_only, char **error)
{
    wkv__reader r = *rp;
    wkv__tensor_set ts = {NULL, 0, 0, 0, 0};
    wkv_model *m = wkv__calloc(1, sizeof *m);
    if (!m || !(m->path = wkv__strdup(name))) {
        wkv__set_error(error, "%s: offset 0: out of memory", name);
        goto fail;
    }
    if (wkv__read_magic(&r))
        goto fail;
    if (wkv__read_hparams(&r, &m->hp) || wkv__read_mel_filters(&r, m) || wkv__read_vocab(&r, m))
        goto fail;
    if (!vocab_only) {
        if (r.off == r.size) {
            wkv__fail(&r, r.off, "no tensors (vocabulary-only file?): the file ends after the "
                                "vocabulary");
            goto fail;
        }
        if (wkv__tensor_set_init(&ts, &m->hp)) {
            wkv__fail(&r, r.off, "out of memory");
            goto fail;
        }
        if (wkv__scan_tensors(&r, &ts))
            goto fail;
        if (load_tensors(&r, m, &ts) || wkv__weights_keep_f16(m, error))
            goto fail;
        wkv__weights_bind(m);
    }
    if (wkv__vocab_init(m, error))
        goto fail;
    wkv__free(ts.e);
    *rp = r; /* its window, for wkv__reader_close */
    return m;
fail:
    wkv__free(ts.e);
    *rp = r;
    wkv_model_free(m);
    return NULL;
}

static wkv_model *load(const char *path, int vocab_only, char **error)
{
    if (!path) {
        wkv__set_error(error, "(null): offset 0: no model path given");
        return NULL;
    }
    wkv__reader r;
    if (wkv__reader_open(&r, path, error))
        return NULL;
    wkv_model *m = parse(&r, path, vocab_only, error);
    wkv__reader_close(&r);
    return m;
}

wkv_model *wkv_model_load(const char *path, char **error)
{
    return load(path, 0, error);
}

wkv_model *wkv_model_load_memory(const void *data, size_t size, char **error)
{
    if (!data && size) {
        wkv__set_error(error, "(memory): offset 0: no data given");
        return NULL;
    }
    wkv__reader r;
    wkv__reader_memory(&r, data, size, "(memory)", error);
    return parse(&r, "(memory)", 0, error);
}

wkv_model *wkv__model_load_vocab_only(const char *path, char **error)
{
    return load(path, 1, error);
}

void wkv_model_free(wkv_model *m)
{
    if (!m)
        return;
    wkv__vocab_free(m);
    wkv__free(m->path);
    wkv__free(m->mel_filters);
    wkv__free(m->tok_off);
    wkv__free(m->tok_len);
    wkv__free(m->tok_bytes);
    wkv__free(m->arena);
    wkv__free(m->arena16);
    wkv__free(m->arenaq);
    wkv__free(m->w.enc);
    wkv__free(m->w.dec);
    wkv__free(m);
}

const wkv_hparams *wkv_model_hparams(const wkv_model *m)
{
    return m ? &m->hp : NULL;
}

const wkv_specials *wkv_model_specials(const wkv_model *m)
{
    return m ? &m->sp : NULL;
}

const float *wkv_model_mel_filters(const wkv_model *m)
{
    return m ? m->mel_filters : NULL;
}
