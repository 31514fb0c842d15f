/* The model loader: a whisper.cpp ggml file (reference doc §1) becomes validated
 * hyper-parameters, the mel filter bank, the vocabulary and one f32 weight arena.
 *
 * The file is mapped (or read) whole and parsed with bounds checks on every field;
 * nothing is trusted before it is checked.  Only regular files are opened (a FIFO
 * would block), weights that would not fit in this process's memory are refused
 * before the arena is allocated, and every weight must be finite (docs/reliability.md,
 * "Limits").  Tensors are parsed in two passes: the
 * first validates every header, name, type, shape and data range and records where
 * each expected tensor's data lies; only then is the arena allocated (its size
 * follows from the hyper-parameters, and every tensor is known to be in the file)
 * and the second pass copies, widens or dequantizes the data.
 *
 * Quantized files (q4_0, q4_1, q5_0, q5_1, q8_0, as whisper.cpp's quantizer writes
 * them: every 2-D weight matrix quantized in blocks of 32 along ne[0], the rest f32 or
 * f16) are dequantized here into the same f32 arena, so the compute path never sees
 * them.  Afterwards, for any non-f32 file, weights.c keeps the decoder's per-token
 * matrices in f16 instead (wkv_weights_keep_f16). */
#include "internal.h"
#include "quant.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define GGML_MAGIC 0x67676d6cu
#define GGUF_MAGIC 0x46554747u /* "GGUF" */
#define MAX_TOKEN_LEN 1024u
#define MAX_NAME_LEN 255
#define MAX_STATE 8192
#define MAX_LAYERS 64
#define MEL_BINS 201 /* n_fft / 2 + 1 */
#define MMAP_MIN (1u << 20)
#define MAX_QNT_VERSION 99 /* "a small version": f32/f16 files may carry any */

/* ---------------------------------------------------------------- byte access */

static uint32_t ld_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

static uint16_t ld_u16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

/* little-endian f32 data into floats */
static void copy_f32(float *dst, const uint8_t *src, size_t n)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(dst, src, n * sizeof *dst);
#else
    for (size_t i = 0; i < n; i++) {
        uint32_t u = ld_u32(src + 4 * i);
        memcpy(&dst[i], &u, sizeof u);
    }
#endif
}

/* f16 data into floats, through a 65536-entry table when one is given */
static void widen_f16(float *dst, const uint8_t *src, size_t n, const float *table)
{
    if (table)
        for (size_t i = 0; i < n; i++)
            dst[i] = table[ld_u16(src + 2 * i)];
    else
        for (size_t i = 0; i < n; i++)
            dst[i] = wkv_f16_to_f32(ld_u16(src + 2 * i));
}

/* Index of the first value that is not below `limit` in magnitude (NaN included),
 * or n.  Branch-free blocks so the common all-good case vectorizes. */
static size_t first_out_of_range(const float *x, size_t n, float limit)
{
    for (size_t b = 0; b < n; b += 256) {
        size_t e = n - b < 256 ? n : b + 256;
        int bad = 0;
        for (size_t i = b; i < e; i++)
            bad |= !(fabsf(x[i]) < limit);
        if (bad)
            for (size_t i = b; i < e; i++)
                if (!(fabsf(x[i]) < limit))
                    return i;
    }
    return n;
}

/* ---------------------------------------------------------------- reader */

typedef struct {
    const uint8_t *p;
    uint64_t size;
    uint64_t off;
    const char *path;
    char **error;
    int mapped; /* p is our own read-only file mapping: pages may be dropped */
} reader;

static void fail(reader *r, uint64_t off, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* "<path>: offset <N>: <message>" */
static void fail(reader *r, uint64_t off, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    wkv_set_error(r->error, "%s: offset %" PRIu64 ": %s", r->path, off, msg);
}

static uint64_t left(const reader *r)
{
    return r->size - r->off;
}

/* Checks that n more bytes are in the file. */
static int need(reader *r, uint64_t n, const char *what)
{
    if (left(r) >= n)
        return 0;
    fail(r, r->off, "unexpected end of file in %s: needs %" PRIu64 " bytes, %" PRIu64
                    " left (truncated file?)",
         what, n, left(r));
    return -1;
}

static int rd_u32(reader *r, uint32_t *v, const char *what)
{
    if (need(r, 4, what))
        return -1;
    *v = ld_u32(r->p + r->off);
    r->off += 4;
    return 0;
}

static int rd_i32(reader *r, int32_t *v, const char *what)
{
    uint32_t u;
    if (rd_u32(r, &u, what))
        return -1;
    *v = (int32_t)u;
    return 0;
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

/* ---------------------------------------------------------------- the file */

typedef struct {
    const uint8_t *data;
    uint64_t size;
    void *map;      /* mmap'd region, or NULL */
    size_t map_len;
    uint8_t *buf;   /* read() fallback, or NULL */
} file_view;

static void view_close(file_view *v)
{
    if (v->map)
        munmap(v->map, v->map_len);
    free(v->buf);
    memset(v, 0, sizeof *v);
}

static int view_open(const char *path, file_view *v, char **error)
{
    memset(v, 0, sizeof *v);
    /* O_NONBLOCK: opening a FIFO with no writer would otherwise wait forever; the
     * fstat below then refuses anything but a regular file (for which the flag has
     * no effect) */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        wkv_set_error(error, "%s: offset 0: cannot open the model file: %s", path,
                      strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        wkv_set_error(error, "%s: offset 0: cannot stat the model file: %s", path,
                      strerror(errno));
        close(fd);
        return -1;
    }
    if (S_ISDIR(st.st_mode)) {
        wkv_set_error(error, "%s: offset 0: is a directory, not a model file", path);
        close(fd);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        wkv_set_error(error, "%s: offset 0: not a regular file", path);
        close(fd);
        return -1;
    }
    if (st.st_size <= 0) {
        wkv_set_error(error, "%s: offset 0: the file is empty", path);
        close(fd);
        return -1;
    }
    if ((uint64_t)st.st_size > (uint64_t)SIZE_MAX / 2) {
        wkv_set_error(error, "%s: offset 0: the file is too large (%" PRIu64 " bytes)",
                      path, (uint64_t)st.st_size);
        close(fd);
        return -1;
    }
    size_t len = (size_t)st.st_size;
    /* big files are mapped (no second copy of a 3-GB model in memory); small ones
     * are read, which is cheaper than a mapping in a process with many threads
     * (every munmap then costs a TLB shoot-down on each CPU) */
    void *p = len >= MMAP_MIN ? mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
    if (p != MAP_FAILED) {
        v->map = p;
        v->map_len = len;
        v->data = p;
        v->size = len;
        madvise(p, len, MADV_SEQUENTIAL);
        close(fd);
        return 0;
    }
    /* small, or no mmap on this file system: read it */
    v->buf = malloc(len);
    if (!v->buf) {
        wkv_set_error(error, "%s: offset 0: out of memory reading %zu bytes", path, len);
        close(fd);
        return -1;
    }
    size_t got = 0;
    while (got < len) {
        ssize_t k = read(fd, v->buf + got, len - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            wkv_set_error(error, "%s: offset %zu: read error: %s", path, got,
                          k < 0 ? strerror(errno) : "file shrank while reading");
            close(fd);
            view_close(v);
            return -1;
        }
        got += (size_t)k;
    }
    close(fd);
    v->data = v->buf;
    v->size = len;
    return 0;
}

/* ---------------------------------------------------------------- header */

static int read_hparams(reader *r, wkv_hparams *hp)
{
    static const char *const names[11] = {
        "n_vocab", "n_audio_ctx", "n_audio_state", "n_audio_head", "n_audio_layer",
        "n_text_ctx", "n_text_state", "n_text_head", "n_text_layer", "n_mels", "ftype",
    };
    int32_t v[11];
    for (int i = 0; i < 11; i++) {
        uint64_t at = r->off;
        char what[64];
        snprintf(what, sizeof what, "the header (%s)", names[i]);
        if (rd_i32(r, &v[i], what))
            return -1;
        int32_t x = v[i];
        switch (i) {
        case 0:
            if (x != 51864 && x != 51865 && x != 51866) {
                fail(r, at, "n_vocab is %" PRId32 ", expected 51864 (English-only), "
                            "51865 (multilingual) or 51866 (large-v3)", x);
                return -1;
            }
            break;
        case 1:
            if (x < 1 || x > 1500) {
                fail(r, at, "n_audio_ctx is %" PRId32 ", expected 1..1500", x);
                return -1;
            }
            break;
        case 2:
            if (x < 1 || x > MAX_STATE) {
                fail(r, at, "n_audio_state is %" PRId32 ", expected 1..%d", x, MAX_STATE);
                return -1;
            }
            break;
        case 3:
        case 7:
            if (x < 1 || x > v[2] || v[2] % x != 0) {
                fail(r, at, "%s is %" PRId32 ", expected a positive divisor of the state "
                            "size %" PRId32, names[i], x, v[2]);
                return -1;
            }
            break;
        case 4:
        case 8:
            if (x < 1 || x > MAX_LAYERS) {
                fail(r, at, "%s is %" PRId32 ", expected 1..%d", names[i], x, MAX_LAYERS);
                return -1;
            }
            break;
        case 5:
            if (x < 1 || x > 448) {
                fail(r, at, "n_text_ctx is %" PRId32 ", expected 1..448", x);
                return -1;
            }
            break;
        case 6:
            if (x != v[2]) {
                fail(r, at, "n_text_state is %" PRId32 ", expected n_audio_state (%" PRId32
                            ")", x, v[2]);
                return -1;
            }
            break;
        case 9:
            if (x != 80 && x != 128) {
                fail(r, at, "n_mels is %" PRId32 ", expected 80 or 128", x);
                return -1;
            }
            break;
        case 10: {
            /* ftype % 1000 is the weight type, ftype / 1000 the quantization version
             * (whisper.cpp writes 2000 + type since the f16-scale block layout) */
            int t = x >= 0 ? x % 1000 : -1, ver = x >= 0 ? x / 1000 : -1;
            if (t < 0 || ver > MAX_QNT_VERSION) {
                fail(r, at, "unknown ftype %" PRId32 " (expected version * 1000 + type, "
                            "type 0 = f32, 1 = f16, 2 = q4_0, 3 = q4_1, 7 = q8_0, "
                            "8 = q5_0, 9 = q5_1)", x);
                return -1;
            }
            if (t == 0 || t == 1)
                break;
            int qt = wkv_quant_type_of_ftype(t);
            if (qt < 0) {
                fail(r, at, "unknown ftype %" PRId32 " (type %d; expected 0 = f32, 1 = f16, "
                            "2 = q4_0, 3 = q4_1, 7 = q8_0, 8 = q5_0 or 9 = q5_1)", x, t);
                return -1;
            }
            if (ver != WKV_QNT_VERSION) {
                fail(r, at, "ftype %" PRId32 ": a %s model of quantization version %d; only "
                            "version %d (f16 block scales, whisper.cpp since May 2023) is "
                            "supported: quantize the f16 model again with a current "
                            "whisper.cpp", x, wkv_quant_type_name(qt), ver, WKV_QNT_VERSION);
                return -1;
            }
            break;
        }
        }
    }
    hp->n_vocab = v[0];
    hp->n_audio_ctx = v[1];
    hp->n_audio_state = v[2];
    hp->n_audio_head = v[3];
    hp->n_audio_layer = v[4];
    hp->n_text_ctx = v[5];
    hp->n_text_state = v[6];
    hp->n_text_head = v[7];
    hp->n_text_layer = v[8];
    hp->n_mels = v[9];
    hp->ftype = v[10];
    return 0;
}

static int read_mel_filters(reader *r, wkv_model *m)
{
    int32_t n_mel, n_fft;
    uint64_t at = r->off;
    if (rd_i32(r, &n_mel, "the mel filter header (n_mel)"))
        return -1;
    if (n_mel != m->hp.n_mels) {
        fail(r, at, "the mel filter bank has %" PRId32 " bands, expected n_mels = %" PRId32,
             n_mel, m->hp.n_mels);
        return -1;
    }
    at = r->off;
    if (rd_i32(r, &n_fft, "the mel filter header (n_fft)"))
        return -1;
    if (n_fft != MEL_BINS) {
        fail(r, at, "the mel filter bank has %" PRId32 " frequency bins, expected %d", n_fft,
             MEL_BINS);
        return -1;
    }
    size_t n = (size_t)n_mel * MEL_BINS;
    if (need(r, (uint64_t)n * 4, "the mel filter bank"))
        return -1;
    m->mel_filters = malloc(n * sizeof *m->mel_filters);
    if (!m->mel_filters) {
        fail(r, r->off, "out of memory");
        return -1;
    }
    copy_f32(m->mel_filters, r->p + r->off, n);
    size_t bad = first_out_of_range(m->mel_filters, n, INFINITY);
    if (bad < n) {
        fail(r, r->off + 4 * (uint64_t)bad, "mel filter value %zu is not finite", bad);
        return -1;
    }
    r->off += (uint64_t)n * 4;
    return 0;
}

static int read_vocab(reader *r, wkv_model *m)
{
    int32_t n;
    uint64_t at = r->off;
    if (rd_i32(r, &n, "the vocabulary size"))
        return -1;
    if (n < 1 || n > m->hp.n_vocab) {
        fail(r, at, "the vocabulary has %" PRId32 " tokens, expected 1..n_vocab (%" PRId32 ")",
             n, m->hp.n_vocab);
        return -1;
    }
    /* first pass: bounds and the total size */
    uint64_t start = r->off, total = 0;
    char what[64];
    for (int32_t i = 0; i < n; i++) {
        uint32_t len;
        at = r->off;
        if (left(r) < 4) { /* the message is only formatted when needed */
            snprintf(what, sizeof what, "the length of token %" PRId32, i);
            return need(r, 4, what);
        }
        len = ld_u32(r->p + r->off);
        r->off += 4;
        if (len > MAX_TOKEN_LEN) {
            fail(r, at, "token %" PRId32 " has length %" PRIu32 " (at most %u)", i, len,
                 MAX_TOKEN_LEN);
            return -1;
        }
        if (left(r) < len) {
            snprintf(what, sizeof what, "the bytes of token %" PRId32, i);
            return need(r, len, what);
        }
        r->off += len;
        total += (uint64_t)len + 1;
    }
    /* second pass: copy; every token is followed by a NUL that tok_len excludes */
    m->tok_off = malloc((size_t)n * sizeof *m->tok_off);
    m->tok_len = malloc((size_t)n * sizeof *m->tok_len);
    m->tok_bytes = malloc((size_t)total);
    if (!m->tok_off || !m->tok_len || !m->tok_bytes) {
        fail(r, start, "out of memory for the vocabulary");
        return -1;
    }
    uint64_t p = start;
    uint32_t pos = 0;
    for (int32_t i = 0; i < n; i++) {
        uint32_t len = ld_u32(r->p + p);
        p += 4;
        m->tok_off[i] = pos;
        m->tok_len[i] = len;
        memcpy(m->tok_bytes + pos, r->p + p, len);
        m->tok_bytes[pos + len] = 0;
        pos += len + 1;
        p += len;
    }
    m->n_tokens = n;
    return 0;
}

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

typedef struct {
    const char *name;
    enum shape_kind shape;
    size_t slot; /* offsetof in wkv_weights (globals) or wkv_layer (blocks) */
    int f16;     /* kept in f16 for non-f32 files (weights.c: tok_emb_h, dec_f16) */
} tensor_def;

#define GW(field) offsetof(wkv_weights, field)
#define LW(field) offsetof(wkv_layer, field)

static const tensor_def GLOBAL_DEFS[] = {
    {"encoder.conv1.weight", S_CONV1, GW(conv1_w), 0},
    {"encoder.conv1.bias", S_CONVB, GW(conv1_b), 0},
    {"encoder.conv2.weight", S_CONV2, GW(conv2_w), 0},
    {"encoder.conv2.bias", S_CONVB, GW(conv2_b), 0},
    {"encoder.positional_embedding", S_APOS, GW(enc_pos), 0},
    {"encoder.ln_post.weight", S_VEC, GW(enc_ln_w), 0},
    {"encoder.ln_post.bias", S_VEC, GW(enc_ln_b), 0},
    {"decoder.token_embedding.weight", S_TOK, GW(tok_emb), 1},
    {"decoder.positional_embedding", S_TPOS, GW(dec_pos), 0},
    {"decoder.ln.weight", S_VEC, GW(dec_ln_w), 0},
    {"decoder.ln.bias", S_VEC, GW(dec_ln_b), 0},
};
#define N_GLOBAL ((int)(sizeof GLOBAL_DEFS / sizeof *GLOBAL_DEFS))

/* Block tensors: the first N_ENC_BLOCK are the encoder's, all of them the decoder's.
 * The f16 flag only applies to the decoder's blocks. */
static const tensor_def BLOCK_DEFS[] = {
    {"attn_ln.weight", S_VEC, LW(attn_ln_w), 0},
    {"attn_ln.bias", S_VEC, LW(attn_ln_b), 0},
    {"attn.query.weight", S_MAT, LW(attn_q_w), 1},
    {"attn.query.bias", S_VEC, LW(attn_q_b), 0},
    {"attn.key.weight", S_MAT, LW(attn_k_w), 1},
    {"attn.value.weight", S_MAT, LW(attn_v_w), 1},
    {"attn.value.bias", S_VEC, LW(attn_v_b), 0},
    {"attn.out.weight", S_MAT, LW(attn_o_w), 1},
    {"attn.out.bias", S_VEC, LW(attn_o_b), 0},
    {"mlp_ln.weight", S_VEC, LW(mlp_ln_w), 0},
    {"mlp_ln.bias", S_VEC, LW(mlp_ln_b), 0},
    {"mlp.0.weight", S_MLP0, LW(mlp0_w), 1},
    {"mlp.0.bias", S_MLP0B, LW(mlp0_b), 0},
    {"mlp.2.weight", S_MLP2, LW(mlp2_w), 1},
    {"mlp.2.bias", S_VEC, LW(mlp2_b), 0},
    /* decoder only */
    {"cross_attn_ln.weight", S_VEC, LW(cross_ln_w), 0},
    {"cross_attn_ln.bias", S_VEC, LW(cross_ln_b), 0},
    {"cross_attn.query.weight", S_MAT, LW(cross_q_w), 1},
    {"cross_attn.query.bias", S_VEC, LW(cross_q_b), 0},
    {"cross_attn.key.weight", S_MAT, LW(cross_k_w), 0},
    {"cross_attn.value.weight", S_MAT, LW(cross_v_w), 0},
    {"cross_attn.value.bias", S_VEC, LW(cross_v_b), 0},
    {"cross_attn.out.weight", S_MAT, LW(cross_o_w), 1},
    {"cross_attn.out.bias", S_VEC, LW(cross_o_b), 0},
};
#define N_DEC_BLOCK ((int)(sizeof BLOCK_DEFS / sizeof *BLOCK_DEFS))
#define N_ENC_BLOCK 15

/* One expected tensor and what the first pass found about it. */
typedef struct {
    const tensor_def *def;
    int layer;          /* -1 for globals */
    int is_dec;         /* block of the decoder */
    int nd;             /* expected PyTorch dims */
    int64_t dims[3];
    size_t count;       /* elements */
    int seen;
    int type;           /* 0 F32, 1 F16, or a quantized WKV_TYPE_* */
    uint64_t hdr_off, data_off;
} expected;

typedef struct {
    expected *e;
    int n;
    int n_audio_layer, n_text_layer;
    int qnt_version;    /* ftype / 1000 of the file */
} tensor_set;

static void expected_shape(expected *x, const wkv_hparams *hp)
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

static int tensor_set_init(tensor_set *ts, const wkv_hparams *hp)
{
    ts->n_audio_layer = hp->n_audio_layer;
    ts->n_text_layer = hp->n_text_layer;
    ts->qnt_version = hp->ftype / 1000;
    ts->n = N_GLOBAL + hp->n_audio_layer * N_ENC_BLOCK + hp->n_text_layer * N_DEC_BLOCK;
    ts->e = calloc((size_t)ts->n, sizeof *ts->e);
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
    for (k = 0; k < ts->n; k++)
        expected_shape(&ts->e[k], hp);
    return 0;
}

static void expected_name(const expected *x, char *buf, size_t cap)
{
    if (x->layer < 0)
        snprintf(buf, cap, "%s", x->def->name);
    else
        snprintf(buf, cap, "%s.blocks.%d.%s", x->is_dec ? "decoder" : "encoder", x->layer,
                 x->def->name);
}

/* The expected tensor of this name, or NULL.  *why gets a hint for unknown names. */
static expected *find_tensor(tensor_set *ts, const char *name, size_t len, const char **why,
                             int *bad_layer)
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

/* First pass: every tensor header until the end of the file. */
static int scan_tensors(reader *r, tensor_set *ts)
{
    int index = 0;
    char what[96], name[MAX_NAME_LEN * 4 + 1];
    while (r->off < r->size) {
        uint64_t hdr = r->off;
        int32_t n_dims, name_len, type;
        snprintf(what, sizeof what, "the header of tensor #%d", index);
        if (need(r, 12, what))
            return -1;
        n_dims = (int32_t)ld_u32(r->p + hdr);
        name_len = (int32_t)ld_u32(r->p + hdr + 4);
        type = (int32_t)ld_u32(r->p + hdr + 8);
        if (n_dims < 1 || n_dims > 4) {
            fail(r, hdr, "tensor #%d has n_dims %" PRId32 ", expected 1..4", index, n_dims);
            return -1;
        }
        if (name_len < 1 || name_len > MAX_NAME_LEN) {
            fail(r, hdr + 4, "tensor #%d has name length %" PRId32 ", expected 1..%d", index,
                 name_len, MAX_NAME_LEN);
            return -1;
        }
        r->off += 12;
        uint64_t ne_off = r->off;
        int64_t ne[4];
        snprintf(what, sizeof what, "the shape of tensor #%d", index);
        if (need(r, 4 * (uint64_t)n_dims, what))
            return -1;
        for (int i = 0; i < n_dims; i++) {
            ne[i] = (int32_t)ld_u32(r->p + r->off);
            if (ne[i] < 1) {
                fail(r, r->off, "tensor #%d has ne[%d] = %" PRId64 ", expected a positive "
                                "size", index, i, ne[i]);
                return -1;
            }
            r->off += 4;
        }
        uint64_t name_off = r->off;
        snprintf(what, sizeof what, "the name of tensor #%d", index);
        if (need(r, (uint64_t)name_len, what))
            return -1;
        const char *nm = (const char *)r->p + name_off;
        printable_name((const uint8_t *)nm, (size_t)name_len, name, sizeof name);
        r->off += (uint64_t)name_len;

        const char *why;
        int n_layer = 0;
        expected *x = find_tensor(ts, nm, (size_t)name_len, &why, &n_layer);
        if (!x) {
            if (why)
                fail(r, name_off, "tensor '%s': the %s has only %d blocks", name, why,
                     n_layer);
            else
                fail(r, name_off, "unknown tensor name '%s'", name);
            return -1;
        }
        if (x->seen) {
            fail(r, hdr, "tensor '%s' appears twice (first at offset %" PRIu64 ")", name,
                 x->hdr_off);
            return -1;
        }
        size_t qbytes = wkv_quant_block_bytes(type);
        if (type != WKV_TYPE_F32 && type != WKV_TYPE_F16 && !qbytes) {
            fail(r, hdr + 8, "tensor '%s' has unknown tensor type %" PRId32
                             " (expected 0 = F32, 1 = F16, 2 = Q4_0, 3 = Q4_1, 6 = Q5_0, "
                             "7 = Q5_1 or 8 = Q8_0)", name, type);
            return -1;
        }
        if (qbytes) {
            /* whisper.cpp quantizes the 2-D weight matrices only: never the 1-D
             * tensors, the 3-D conv weights, the [d, 1] conv biases or the
             * positional embeddings */
            const char *qn = wkv_quant_type_name(type);
            enum shape_kind sk = x->def->shape;
            if (sk != S_MAT && sk != S_MLP0 && sk != S_MLP2 && sk != S_TOK) {
                fail(r, hdr + 8, "tensor '%s' (%d-D) has quantized type %s, but only the 2-D "
                                 "weight matrices may be quantized (this one must be F32 or "
                                 "F16)", name, (int)n_dims, qn);
                return -1;
            }
            if (n_dims != 2) {
                fail(r, hdr, "tensor '%s' has quantized type %s and %" PRId32 " dimensions, "
                             "expected 2", name, qn, n_dims);
                return -1;
            }
            if (ne[0] % WKV_QK != 0) {
                fail(r, ne_off, "tensor '%s' has quantized type %s but ne[0] = %" PRId64
                                " is not a multiple of the block size %d", name, qn, ne[0],
                     WKV_QK);
                return -1;
            }
            if (ts->qnt_version != WKV_QNT_VERSION) {
                fail(r, hdr + 8, "tensor '%s' has quantized type %s in a file of quantization "
                                 "version %d (ftype / 1000); only version %d blocks are "
                                 "understood", name, qn, ts->qnt_version, WKV_QNT_VERSION);
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
            fail(r, ne_off, "tensor '%s' has shape %s, expected %s (PyTorch order)", name, gs,
                 es);
            return -1;
        }
        uint64_t bytes;
        if (qbytes) {
            /* rows * blocks per row * bytes per block, without overflow */
            uint64_t rows = (uint64_t)ne[1], blocks = (uint64_t)ne[0] / WKV_QK;
            if (blocks > UINT64_MAX / rows || blocks * rows > UINT64_MAX / qbytes) {
                fail(r, ne_off, "tensor '%s' is too large", name);
                return -1;
            }
            bytes = rows * blocks * qbytes;
        } else {
            bytes = (uint64_t)x->count * (type == 0 ? 4 : 2);
        }
        if (bytes > left(r)) {
            fail(r, r->off, "the data of tensor '%s' is truncated: needs %" PRIu64
                            " bytes, %" PRIu64 " left", name, bytes, left(r));
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
    const expected *first = NULL;
    for (int k = 0; k < ts->n; k++)
        if (!ts->e[k].seen) {
            if (!first)
                first = &ts->e[k];
            missing++;
        }
    if (missing) {
        expected_name(first, name, sizeof name);
        if (missing > 1)
            fail(r, r->off, "tensor '%s' is missing (and %d more of the %d expected)", name,
                 missing - 1, ts->n);
        else
            fail(r, r->off, "tensor '%s' is missing", name);
        return -1;
    }
    return 0;
}

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

/* Bytes of the file that hold element i of a tensor of this type. */
static uint64_t element_offset(int type, size_t i)
{
    if (type == WKV_TYPE_F32)
        return 4 * (uint64_t)i;
    if (type == WKV_TYPE_F16)
        return 2 * (uint64_t)i;
    return (uint64_t)(i / WKV_QK) * wkv_quant_block_bytes(type);
}

/* Copies, widens or dequantizes one tensor into dst, a chunk at a time so that each
 * chunk is checked while it is in cache: every weight must be finite, and those the
 * decoder keeps in f16 (non-f32 files) must not overflow it. */
static int load_tensor(reader *r, const expected *x, float *dst, const float *table,
                       int to_f16)
{
    const size_t chunk = 16384; /* a multiple of the quantization block */
    const float limit = to_f16 ? 65520.0f : INFINITY; /* 65520 rounds to f16 infinity */
    const uint8_t *src = r->p + x->data_off;
    for (size_t at = 0; at < x->count; at += chunk) {
        size_t n = x->count - at < chunk ? x->count - at : chunk;
        if (x->type == WKV_TYPE_F32)
            copy_f32(dst + at, src + 4 * at, n);
        else if (x->type == WKV_TYPE_F16)
            widen_f16(dst + at, src + 2 * at, n, table);
        else /* a 2-D matrix of whole blocks: checked by scan_tensors */
            wkv_dequantize(x->type, src + element_offset(x->type, at), dst + at, n / WKV_QK);
        size_t i = first_out_of_range(dst + at, n, limit);
        if (i < n) {
            char name[MAX_NAME_LEN + 32];
            float v = dst[at + i];
            expected_name(x, name, sizeof name);
            uint64_t off = x->data_off + element_offset(x->type, at + i);
            if (isnan(v) || isinf(v))
                fail(r, off, "tensor '%s' element %zu is %s: the weights are corrupt", name,
                     at + i, isnan(v) ? "NaN" : "infinite");
            else
                fail(r, off, "tensor '%s' element %zu is %g, which overflows f16 (the "
                             "decoder keeps this matrix in f16: |x| must be below 65520)",
                     name, at + i, (double)v);
            return -1;
        }
    }
    return 0;
}

/* Hands a converted tensor's file pages back: they count in the resident size until
 * the file is unmapped, and would otherwise add the whole file to the arena at the
 * load's peak.  The whole pages inside [p, p + len) only; read-only private file pages
 * are simply dropped (never the caller's memory: wkv_model_load_memory does not map). */
static void drop_pages(const uint8_t *p, uint64_t len)
{
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    if (page == 0 || (page & (page - 1)) != 0)
        return;
    uintptr_t a = ((uintptr_t)p + page - 1) & ~(page - 1), b = ((uintptr_t)p + len) & ~(page - 1);
    if (b > a)
        madvise((void *)a, b - a, MADV_DONTNEED);
}

/* Second pass: the arena, the pointers and the data. */
static int load_tensors(reader *r, wkv_model *m, tensor_set *ts)
{
    size_t total = 0;
    for (int k = 0; k < ts->n; k++) {
        if (ts->e[k].count > SIZE_MAX / sizeof(float) - total) {
            fail(r, ts->e[k].hdr_off, "the weights do not fit in memory");
            return -1;
        }
        total += ts->e[k].count;
    }
    /* refuse before allocating: a file can be mapped (or sparse) and much larger than
     * memory, and an arena past it would only be paged out or killed while filled */
    uint64_t bytes = (uint64_t)total * sizeof(float), lim = memory_limit();
    if (bytes > lim) {
        fail(r, ts->e[0].hdr_off, "the weights need %" PRIu64 " MiB as f32, more than the %"
                                  PRIu64 " MiB of memory this process may use",
             bytes >> 20, lim >> 20);
        return -1;
    }
    m->w.enc = calloc((size_t)m->hp.n_audio_layer, sizeof *m->w.enc);
    m->w.dec = calloc((size_t)m->hp.n_text_layer, sizeof *m->w.dec);
    m->arena = malloc(total * sizeof(float));
    if (!m->w.enc || !m->w.dec || !m->arena) {
        fail(r, ts->e[0].hdr_off, "out of memory allocating %zu MiB for the weights",
             total * sizeof(float) >> 20);
        return -1;
    }
    m->arena_floats = total;
    /* a conversion table pays off above a million f16 values */
    size_t n_f16 = 0;
    for (int k = 0; k < ts->n; k++)
        if (ts->e[k].type == 1)
            n_f16 += ts->e[k].count;
    float *table = n_f16 >= ((size_t)1 << 20) ? malloc(65536 * sizeof *table) : NULL;
    for (uint32_t h = 0; table && h < 65536; h++)
        table[h] = wkv_f16_to_f32((uint16_t)h);
    const int f16_file = m->hp.ftype % 1000 != 0;
    float *dst = m->arena;
    int rc = 0;
    for (int k = 0; k < ts->n && rc == 0; k++) {
        expected *x = &ts->e[k];
        char *base = x->layer < 0 ? (char *)&m->w
                     : x->is_dec  ? (char *)&m->w.dec[x->layer]
                                  : (char *)&m->w.enc[x->layer];
        float **slot = (float **)(void *)(base + x->def->slot);
        *slot = dst;
        int to_f16 = f16_file && x->def->f16 && (x->layer < 0 || x->is_dec);
        rc = load_tensor(r, x, dst, table, to_f16);
        if (rc == 0 && r->mapped)
            drop_pages(r->p + x->data_off, element_offset(x->type, x->count));
        dst += x->count;
    }
    free(table);
    return rc;
}

/* ---------------------------------------------------------------- load */

/* Parses a whole file image; `name` (the path, or "(memory)") heads every message. */
static wkv_model *parse(const uint8_t *data, uint64_t size, const char *name, int vocab_only,
                        int mapped, char **error)
{
    reader r = {data, size, 0, name, error, mapped};
    tensor_set ts = {NULL, 0, 0, 0, 0};
    wkv_model *m = calloc(1, sizeof *m);
    if (!m || !(m->path = strdup(name))) {
        wkv_set_error(error, "%s: offset 0: out of memory", name);
        goto fail;
    }
    uint32_t magic;
    if (rd_u32(&r, &magic, "the magic number"))
        goto fail;
    if (magic != GGML_MAGIC) {
        if (magic == GGUF_MAGIC)
            fail(&r, 0, "this is a GGUF file; only the whisper.cpp ggml format "
                        "(magic 0x67676d6c) is supported");
        else
            fail(&r, 0, "bad magic 0x%08" PRIx32 ", expected 0x67676d6c: not a whisper.cpp "
                        "ggml model file", magic);
        goto fail;
    }
    if (read_hparams(&r, &m->hp) || read_mel_filters(&r, m) || read_vocab(&r, m))
        goto fail;
    if (!vocab_only) {
        if (r.off == r.size) {
            fail(&r, r.off, "no tensors (vocabulary-only file?): the file ends after the "
                            "vocabulary");
            goto fail;
        }
        if (tensor_set_init(&ts, &m->hp)) {
            fail(&r, r.off, "out of memory");
            goto fail;
        }
        if (scan_tensors(&r, &ts) || load_tensors(&r, m, &ts) || wkv_weights_keep_f16(m, error))
            goto fail;
    }
    if (wkv_vocab_init(m, error))
        goto fail;
    free(ts.e);
    return m;
fail:
    free(ts.e);
    wkv_model_free(m);
    return NULL;
}

static wkv_model *load(const char *path, int vocab_only, char **error)
{
    if (!path) {
        wkv_set_error(error, "(null): offset 0: no model path given");
        return NULL;
    }
    file_view v;
    if (view_open(path, &v, error))
        return NULL;
    wkv_model *m = parse(v.data, v.size, path, vocab_only, v.map != NULL, error);
    view_close(&v);
    return m;
}

wkv_model *wkv_model_load(const char *path, char **error)
{
    return load(path, 0, error);
}

wkv_model *wkv_model_load_memory(const void *data, size_t size, char **error)
{
    if (!data && size) {
        wkv_set_error(error, "(memory): offset 0: no data given");
        return NULL;
    }
    return parse(data, size, "(memory)", 0, 0, error);
}

wkv_model *wkv_model_load_vocab_only(const char *path, char **error)
{
    return load(path, 1, error);
}

void wkv_model_free(wkv_model *m)
{
    if (!m)
        return;
    wkv_vocab_free(m);
    free(m->path);
    free(m->mel_filters);
    free(m->tok_off);
    free(m->tok_len);
    free(m->tok_bytes);
    free(m->arena);
    free(m->arena16);
    free(m->w.enc);
    free(m->w.dec);
    free(m);
}

const wkv_hparams *wkv_model_hparams(const wkv_model *m)
{
    return m ? &m->hp : NULL;
}

const wkv_specials *wkv_model_specials(const wkv_model *m)
{
    return m ? &m->sp : NULL;
}

int wkv_model_is_multilingual(const wkv_model *m)
{
    return m && m->hp.n_vocab >= 51865;
}

const float *wkv_model_mel_filters(const wkv_model *m)
{
    return m ? m->mel_filters : NULL;
}
