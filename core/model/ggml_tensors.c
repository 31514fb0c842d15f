/* The tensors of a ggml file: which ones a model of these hyper-parameters needs
 * (names, shapes, where each goes in wkv__weights) and the first pass over their
 * headers, which validates every name, type, shape and data range and records where
 * each tensor's data lies before model.c allocates anything.  Quantized files carry
 * every 2-D weight matrix in blocks of 32 along ne[0], as whisper.cpp's quantizer
 * writes them; everything else is f32 or f16. */
#include "model/ggml_file.h"
#include "base/util.h"
#include "model/quant.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- tensors */

enum shape_kind {
    S_VEC,     /* [d] */
    S_MAT,     /* [d, d] */
    S_MLP0,    /* [4d, d] */
    S_MLP0B,   /* [4d] */
    S_MLP2,    /* [d, 4d] */
    S_CONV1,   /* [d, n_mels, 3] */
    S_CONV2,   /* [d, d, 3] */
    S_CONVB,   /* [d, 1] or [d] */
    S_APOS,    /* [n_audio_ctx, d] */
    S_TPOS,    /* [n_text_ctx, d] */
    S_TOK,     /* [n_vocab, d] */
};

struct wkv__tensor_def {
    const char *name;
    enum shape_kind shape;
    size_t slot; /* offsetof in wkv__weights (globals) or wkv__layer (blocks) */
    size_t mat;  /* offsetof its typed view (wkv__mat: matrices, convolutions), 0 if none */
};

#define GW(field) offsetof(wkv__weights, field)
#define LW(field) offsetof(wkv__layer, field)

static const wkv__tensor_def GLOBAL_DEFS[] = {
    {"encoder.conv1.weight", S_CONV1, GW(conv1_w), GW(conv1)},
    {"encoder.conv1.bias", S_CONVB, GW(conv1_b), 0},
    {"encoder.conv2.weight", S_CONV2, GW(conv2_w), GW(conv2)},
    {"encoder.conv2.bias", S_CONVB, GW(conv2_b), 0},
    {"encoder.positional_embedding", S_APOS, GW(enc_pos), 0},
    {"encoder.ln_post.weight", S_VEC, GW(enc_ln_w), 0},
    {"encoder.ln_post.bias", S_VEC, GW(enc_ln_b), 0},
    {"decoder.token_embedding.weight", S_TOK, GW(tok_emb), GW(tok)},
    {"decoder.positional_embedding", S_TPOS, GW(dec_pos), 0},
    {"decoder.ln.weight", S_VEC, GW(dec_ln_w), 0},
    {"decoder.ln.bias", S_VEC, GW(dec_ln_b), 0},
};
#define N_GLOBAL ((int)(sizeof GLOBAL_DEFS / sizeof *GLOBAL_DEFS))

/* Block tensors: the first N_ENC_BLOCK are the encoder's, all of them the decoder's.
 * Both kinds of block have the typed views (the encoder's converts them per layer). */
static const wkv__tensor_def BLOCK_DEFS[] = {
    {"attn_ln.weight", S_VEC, LW(attn_ln_w), 0},
    {"attn_ln.bias", S_VEC, LW(attn_ln_b), 0},
    {"attn.query.weight", S_MAT, LW(attn_q_w), LW(attn_q)},
    {"attn.query.bias", S_VEC, LW(attn_q_b), 0},
    {"attn.key.weight", S_MAT, LW(attn_k_w), LW(attn_k)},
    {"attn.value.weight", S_MAT, LW(attn_v_w), LW(attn_v)},
    {"attn.value.bias", S_VEC, LW(attn_v_b), 0},
    {"attn.out.weight", S_MAT, LW(attn_o_w), LW(attn_o)},
    {"attn.out.bias", S_VEC, LW(attn_o_b), 0},
    {"mlp_ln.weight", S_VEC, LW(mlp_ln_w), 0},
    {"mlp_ln.bias", S_VEC, LW(mlp_ln_b), 0},
    {"mlp.0.weight", S_MLP0, LW(mlp0_w), LW(mlp0)},
    {"mlp.0.bias", S_MLP0B, LW(mlp0_b), 0},
    {"mlp.2.weight", S_MLP2, LW(mlp2_w), LW(mlp2)},
    {"mlp.2.bias", S_VEC, LW(mlp2_b), 0},
    /* decoder only */
    {"cross_attn_ln.weight", S_VEC, LW(cross_ln_w), 0},
    {"cross_attn_ln.bias", S_VEC, LW(cross_ln_b), 0},
    {"cross_attn.query.weight", S_MAT, LW(cross_q_w), LW(cross_q)},
    {"cross_attn.query.bias", S_VEC, LW(cross_q_b), 0},
    {"cross_attn.key.weight", S_MAT, LW(cross_k_w), LW(cross_k)},
    {"cross_attn.value.weight", S_MAT, LW(cross_v_w), LW(cross_v)},
    {"cross_attn.value.bias", S_VEC, LW(cross_v_b), 0},
    {"cross_attn.out.weight", S_MAT, LW(cross_o_w), LW(cross_o)},
    {"cross_attn.out.bias", S_VEC, LW(cross_o_b), 0},
};
#define N_DEC_BLOCK ((int)(sizeof BLOCK_DEFS / sizeof *BLOCK_DEFS))
#define N_ENC_BLOCK 15

static void expected_shape(wkv__tensor_rec *x, const wkv_hparams *hp)
{
    int64_t d = hp->n_audio_state;
    int64_t a[3] = {0, 0, 0};
    int nd = 2;
    switch (x->def->shape) {
    case S_VEC: nd = 1; a[0] = d; break;
    case S_MAT: a[0] = d; a[1] = d; break;
    case S_MLP0: a[0] = 4 * d; a[1] = d; break;
    case S_MLP0B: nd = 1; a[0] = 4 * d; break;
    case S_MLP2: a[0] = d; a[1] = 4 * d; break;
    case S_CONV1: nd = 3; a[0] = d; a[1] = hp->n_mels; a[2] = 3; break;
    case S_CONV2: nd = 3; a[0] = d; a[1] = d; a[2] = 3; break;
    case S_CONVB: a[0] = d; a[1] = 1; break;
    case S_APOS: a[0] = hp->n_audio_ctx; a[1] = d; break;
    case S_TPOS: a[0] = hp->n_text_ctx; a[1] = d; break;
    case S_TOK: a[0] = hp->n_vocab; a[1] = d; break;
    }
    x->nd = nd;
    size_t count = 1;
    for (int i = 0; i < nd; i++) {
        x->dims[i] = a[i];
        count *= (size_t)a[i];
    }
    x->count = count;
}

int wkv__tensor_set_init(wkv__tensor_set *ts, const wkv_hparams *hp)
{
    ts->n_audio_layer = hp->n_audio_layer;
    ts->n_text_layer = hp->n_text_layer;
    ts->qnt_version = hp->ftype / 1000;
    ts->n = N_GLOBAL + hp->n_audio_layer * N_ENC_BLOCK + hp->n_text_layer * N_DEC_BLOCK;
    ts->e = wkv__calloc((size_t)ts->n, sizeof *ts->e);
    if (!ts->e)
        return -1;
    int k = 0;
    for (int i = 0; i < N_GLOBAL; i++, k++) {
        ts->e[k].def = &GLOBAL_DEFS[i];
        ts->e[k].layer = -1;
    }
    for (int l = 0; l < hp->n_audio_layer; l++)
        for (int i = 0; i < N_ENC_BLOCK; i++, k++) {
            ts->e[k].def = &BLOCK_DEFS[i];
            ts->e[k].layer = l;
        }
    for (int l = 0; l < hp->n_text_layer; l++)
        for (int i = 0; i < N_DEC_BLOCK; i++, k++) {
            ts->e[k].def = &BLOCK_DEFS[i];
            ts->e[k].layer = l;
            ts->e[k].is_dec = 1;
        }
    for (k = 0; k < ts->n; k++) {
        expected_shape(&ts->e[k], hp);
        ts->e[k].slot = ts->e[k].def->slot;
        ts->e[k].mat = ts->e[k].def->mat;
    }
    return 0;
}

void wkv__tensor_name(const wkv__tensor_rec *x, char *buf, size_t cap)
{
    if (x->layer < 0)
        snprintf(buf, cap, "%s", x->def->name);
    else
        snprintf(buf, cap, "%s.blocks.%d.%s", x->is_dec ? "decoder" : "encoder", x->layer,
                 x->def->name);
}

/* The expected tensor of this name, or NULL.  *why gets a hint for unknown names. */
static wkv__tensor_rec *find_tensor(wkv__tensor_set *ts, const char *name, size_t len,
                                   const char **why, int *bad_layer)
{
    *why = NULL;
    for (int i = 0; i < N_GLOBAL; i++)
        if (strlen(GLOBAL_DEFS[i].name) == len && memcmp(GLOBAL_DEFS[i].name, name, len) == 0)
            return &ts->e[i];
    static const char enc[] = "encoder.blocks.", dec[] = "decoder.blocks.";
    const size_t pl = sizeof enc - 1;
    int is_dec;
    if (len > pl && memcmp(name, enc, pl) == 0)
        is_dec = 0;
    else if (len > pl && memcmp(name, dec, pl) == 0)
        is_dec = 1;
    else
        return NULL;
    size_t i = pl;
    long layer = 0;
    size_t digits = 0;
    while (i < len && name[i] >= '0' && name[i] <= '9' && digits < 6) {
        layer = layer * 10 + (name[i] - '0');
        i++;
        digits++;
    }
    if (digits == 0 || i >= len || name[i] != '.' || (digits > 1 && name[pl] == '0'))
        return NULL;
    i++;
    int nblock = is_dec ? N_DEC_BLOCK : N_ENC_BLOCK;
    int s = -1;
    for (int k = 0; k < nblock; k++)
        if (strlen(BLOCK_DEFS[k].name) == len - i &&
            memcmp(BLOCK_DEFS[k].name, name + i, len - i) == 0) {
            s = k;
            break;
        }
    if (s < 0)
        return NULL;
    int n_layer = is_dec ? ts->n_text_layer : ts->n_audio_layer;
    if (layer >= n_layer) {
        *why = is_dec ? "decoder" : "encoder";
        *bad_layer = n_layer;
        return NULL;
    }
    int base = N_GLOBAL + (is_dec ? ts->n_audio_layer * N_ENC_BLOCK : 0);
    return &ts->e[base + (int)layer * nblock + s];
}

static void shape_str(const int64_t *dims, int nd, char *buf, size_t cap)
{
    size_t o = 0;
    o += (size_t)snprintf(buf + o, cap - o, "[");
    for (int i = 0; i < nd && o < cap; i++)
        o += (size_t)snprintf(buf + o, cap - o, "%s%" PRId64, i ? ", " : "", dims[i]);
    if (o < cap)
        snprintf(buf + o, cap - o, "]");
}
/* A tensor name for messages: printable ASCII kept, the rest as \xNN. */
static void printable_name(const uint8_t *s, size_t n, char *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < n && o + 5 < cap; i++) {
        uint8_t c = s[i];
        if (c >= 0x20 && c < 0x7f && c != '\\' && c != '\'')
            out[o++] = (char)c;
        else
            o += (size_t)snprintf(out + o, cap - o, "\\x%02x", c);
    }
    out[o] = 0;
}

/* First pass: every tensor header until the end of the file. */
int wkv__scan_tensors(wkv__reader *r, wkv__tensor_set *ts)
{
    int index = 0;
    char what[96], name[WKV_MAX_NAME_LEN * 4 + 1];
    while (r->off < r->size) {
        uint64_t hdr = r->off;
        int32_t n_dims, name_len, type;
        snprintf(what, sizeof what, "the header of tensor #%d", index);
        if (wkv__need(r, 12, what))
            return -1;
        const uint8_t *q = wkv__at(r, hdr, 12);
        if (!q)
            return -1;
        n_dims = (int32_t)wkv__ld_u32(q);
        name_len = (int32_t)wkv__ld_u32(q + 4);
        type = (int32_t)wkv__ld_u32(q + 8);
        if (n_dims < 1 || n_dims > 4) {
            wkv__fail(r, hdr, "tensor #%d has n_dims %" PRId32 ", expected 1..4", index, n_dims);
            return -1;
        }
        if (name_len < 1 || name_len > WKV_MAX_NAME_LEN) {
            wkv__fail(r, hdr + 4, "tensor #%d has name length %" PRId32 ", expected 1..%d", index,
                     name_len, WKV_MAX_NAME_LEN);
            return -1;
        }
        r->off += 12;
        uint64_t ne_off = r->off;
        int64_t ne[4];
        snprintf(what, sizeof what, "the shape of tensor #%d", index);
        if (wkv__need(r, 4 * (uint64_t)n_dims, what))
            return -1;
        const uint8_t *dims = wkv__at(r, r->off, 4 * (size_t)n_dims);
        if (!dims)
            return -1;
        for (int i = 0; i < n_dims; i++) {
            ne[i] = (int32_t)wkv__ld_u32(dims + 4 * i);
            if (ne[i] < 1) {
                wkv__fail(r, r->off, "tensor #%d has ne[%d] = %" PRId64 ", expected a positive "
                                    "size", index, i, ne[i]);
                return -1;
            }
            r->off += 4;
        }
        uint64_t name_off = r->off;
        snprintf(what, sizeof what, "the name of tensor #%d", index);
        if (wkv__need(r, (uint64_t)name_len, what))
            return -1;
        /* a copy: the reader's window moves on */
        char nm[WKV_MAX_NAME_LEN + 1];
        const uint8_t *nq = wkv__at(r, name_off, (size_t)name_len);
        if (!nq)
            return -1;
        memcpy(nm, nq, (size_t)name_len);
        nm[name_len] = 0;
        printable_name((const uint8_t *)nm, (size_t)name_len, name, sizeof name);
        r->off += (uint64_t)name_len;

        const char *why;
        int n_layer = 0;
        wkv__tensor_rec *x = find_tensor(ts, nm, (size_t)name_len, &why, &n_layer);
        if (!x) {
            if (why)
                wkv__fail(r, name_off, "tensor '%s': the %s has only %d blocks", name, why,
                         n_layer);
            else
                wkv__fail(r, name_off, "unknown tensor name '%s'", name);
            return -1;
        }
        if (x->seen) {
            wkv__fail(r, hdr, "tensor '%s' appears twice (first at offset %" PRIu64 ")", name,
                     x->hdr_off);
            return -1;
        }
        /* the one check of a tensor's type: nothing past the loader sees an unknown one */
        const wkv__qtype *qt = wkv__qtype_of(type);
        if (!qt) {
            char types[160];
            wkv__fail(r, hdr + 8, "tensor '%s' has unknown tensor type %" PRId32 " (expected %s)",
                     name, type, wkv__qtype_list(types, sizeof types, WKV_QLIST_TYPES));
            return -1;
        }
        if (qt->block_elems > 1) {
            /* whisper.cpp quantizes the 2-D weight matrices only: never the 1-D
             * tensors, the 3-D conv weights, the [d, 1] conv biases or the
             * positional embeddings */
            const char *qn = qt->name;
            enum shape_kind sk = x->def->shape;
            if (sk != S_MAT && sk != S_MLP0 && sk != S_MLP2 && sk != S_TOK) {
                wkv__fail(r, hdr + 8, "tensor '%s' (%d-D) has quantized type %s, but only the 2-D "
                                     "weight matrices may be quantized (this one must be F32 or "
                                     "F16)", name, (int)n_dims, qn);
                return -1;
            }
            if (n_dims != 2) {
                wkv__fail(r, hdr, "tensor '%s' has quantized type %s and %" PRId32 " dimensions, "
                                 "expected 2", name, qn, n_dims);
                return -1;
            }
            if (ne[0] % qt->block_elems != 0) {
                wkv__fail(r, ne_off, "tensor '%s' has quantized type %s but ne[0] = %" PRId64
                                    " is not a multiple of the block size %d", name, qn, ne[0],
                         qt->block_elems);
                return -1;
            }
            if (ts->qnt_version != WKV_QNT_VERSION) {
                wkv__fail(r, hdr + 8, "tensor '%s' has quantized type %s in a file of "
                                     "quantization version %d (ftype / 1000); only version %d "
                                     "blocks are understood", name, qn, ts->qnt_version,
                         WKV_QNT_VERSION);
                return -1;
            }
        }
        /* ne[] is innermost first: the PyTorch shape reversed */
        int64_t got[4];
        for (int i = 0; i < n_dims; i++)
            got[i] = ne[n_dims - 1 - i];
        int ok = n_dims == x->nd;
        for (int i = 0; ok && i < n_dims; i++)
            ok = got[i] == x->dims[i];
        if (!ok && x->def->shape == S_CONVB && n_dims == 1 && got[0] == x->dims[0])
            ok = 1; /* a conv bias may be [d] as well as [d, 1] */
        if (!ok) {
            char gs[96], es[96];
            shape_str(got, n_dims, gs, sizeof gs);
            shape_str(x->dims, x->nd, es, sizeof es);
            wkv__fail(r, ne_off, "tensor '%s' has shape %s, expected %s (PyTorch order)", name, gs,
                     es);
            return -1;
        }
        /* blocks * bytes per block, without overflow (the count is the expected shape's,
         * whole blocks: a block type's rows are) */
        uint64_t blocks = (uint64_t)x->count / (uint64_t)qt->block_elems;
        if (blocks > UINT64_MAX / (uint64_t)qt->block_bytes) {
            wkv__fail(r, ne_off, "tensor '%s' is too large", name);
            return -1;
        }
        uint64_t bytes = blocks * (uint64_t)qt->block_bytes;
        if (bytes > wkv__left(r)) {
            wkv__fail(r, r->off, "the data of tensor '%s' is truncated: needs %" PRIu64
                                " bytes, %" PRIu64 " left", name, bytes, wkv__left(r));
            return -1;
        }
        x->seen = 1;
        x->type = type;
        x->hdr_off = hdr;
        x->data_off = r->off;
        r->off += bytes;
        index++;
    }
    int missing = 0;
    const wkv__tensor_rec *first = NULL;
    for (int k = 0; k < ts->n; k++)
        if (!ts->e[k].seen) {
            if (!first)
                first = &ts->e[k];
            missing++;
        }
    if (missing) {
        wkv__tensor_name(first, name, sizeof name);
        if (missing > 1)
            wkv__fail(r, r->off, "tensor '%s' is missing (and %d more of the %d expected)", name,
                     missing - 1, ts->n);
        else
            wkv__fail(r, r->off, "tensor '%s' is missing", name);
        return -1;
    }
    return 0;
}
