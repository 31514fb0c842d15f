/* Random-weight Whisper models in the ggml format: see genlib.h. */
#include "genlib.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MEL_BINS 201
#define SYNTH_TOKENS 50257
#define MAX_SYNTH_LEN 12

/* ---------------------------------------------------------------- errors */

static void gen_err(char **error, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void gen_err(char **error, const char *fmt, ...)
{
    if (!error)
        return;
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    free(*error);
    *error = malloc(strlen(buf) + 1);
    if (*error)
        strcpy(*error, buf);
}

/* ---------------------------------------------------------------- PRNG */

typedef struct {
    uint64_t s;
    int have_spare;
    double spare;
} rng;

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void rng_seed(rng *r, uint64_t seed, const char *name)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a of the name */
    for (const char *p = name; p && *p; p++)
        h = (h ^ (uint8_t)*p) * 1099511628211ull;
    r->s = seed ^ h;
    splitmix64(&r->s);
    r->have_spare = 0;
}

/* uniform in (0, 1] */
static double rng_uniform(rng *r)
{
    return ((splitmix64(&r->s) >> 11) + 1) * (1.0 / 9007199254740992.0);
}

static uint32_t rng_below(rng *r, uint32_t n)
{
    return (uint32_t)((splitmix64(&r->s) >> 32) * (uint64_t)n >> 32);
}

static double rng_normal(rng *r)
{
    if (r->have_spare) {
        r->have_spare = 0;
        return r->spare;
    }
    double u1 = rng_uniform(r), u2 = rng_uniform(r);
    double rad = sqrt(-2.0 * log(u1)), th = 2.0 * M_PI * u2;
    r->spare = rad * sin(th);
    r->have_spare = 1;
    return rad * cos(th);
}

/* ---------------------------------------------------------------- f16 */

uint16_t gen_f32_to_f16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    int32_t e = (int32_t)((x >> 23) & 0xff);
    uint32_t man = x & 0x7fffff;
    if (e == 0xff) /* inf / nan */
        return (uint16_t)(sign | 0x7c00 | (man ? 0x200 : 0));
    int32_t he = e - 127 + 15;
    if (he >= 0x1f)
        return (uint16_t)(sign | 0x7c00);
    if (he <= 0) { /* subnormal half or zero */
        if (he < -10)
            return sign;
        man |= 0x800000;
        int shift = 14 - he; /* 14..24 */
        uint32_t h = man >> shift, rem = man & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (h & 1)))
            h++;
        return (uint16_t)(sign | h);
    }
    uint32_t h = ((uint32_t)he << 10) | (man >> 13);
    uint32_t rem = man & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (h & 1)))
        h++; /* may carry into the exponent, up to infinity: correct */
    return (uint16_t)(sign | h);
}

float gen_f16_to_f32(uint16_t h)
{
    int e = (h >> 10) & 0x1f, man = h & 0x3ff;
    double v;
    if (e == 0)
        v = ldexp(man, -24);
    else if (e == 0x1f)
        v = man ? NAN : INFINITY;
    else
        v = ldexp(man | 0x400, e - 25);
    return (float)((h & 0x8000) ? -v : v);
}

/* ---------------------------------------------------------------- mel filters */

static double hz_to_mel(double f)
{
    const double f_sp = 200.0 / 3, min_log_hz = 1000.0, min_log_mel = min_log_hz / f_sp;
    const double logstep = log(6.4) / 27.0;
    return f >= min_log_hz ? min_log_mel + log(f / min_log_hz) / logstep : f / f_sp;
}

static double mel_to_hz(double m)
{
    const double f_sp = 200.0 / 3, min_log_hz = 1000.0, min_log_mel = min_log_hz / f_sp;
    const double logstep = log(6.4) / 27.0;
    return m >= min_log_mel ? min_log_hz * exp(logstep * (m - min_log_mel)) : f_sp * m;
}

void gen_mel_filters(int n_mels, float *out)
{
    const double sr = 16000.0, n_fft = 400.0;
    double *pts = malloc((size_t)(n_mels + 2) * sizeof *pts);
    if (!pts) {
        memset(out, 0, (size_t)n_mels * MEL_BINS * sizeof *out);
        return;
    }
    double lo = hz_to_mel(0.0), hi = hz_to_mel(sr / 2);
    for (int i = 0; i < n_mels + 2; i++)
        pts[i] = mel_to_hz(lo + (hi - lo) * i / (n_mels + 1));
    for (int m = 0; m < n_mels; m++) {
        double enorm = 2.0 / (pts[m + 2] - pts[m]);
        for (int k = 0; k < MEL_BINS; k++) {
            double f = k * sr / n_fft;
            double lower = (f - pts[m]) / (pts[m + 1] - pts[m]);
            double upper = (pts[m + 2] - f) / (pts[m + 2] - pts[m + 1]);
            double w = lower < upper ? lower : upper;
            out[(size_t)m * MEL_BINS + k] = (float)(w > 0 ? w * enorm : 0.0);
        }
    }
    free(pts);
}

/* ---------------------------------------------------------------- growable bytes */

typedef struct {
    uint8_t *p;
    size_t len, cap;
    int oom;
} bytes;

static void b_put(bytes *b, const void *src, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n)
            cap *= 2;
        uint8_t *p = realloc(b->p, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, src, n);
    b->len += n;
}

static void b_u32(bytes *b, uint32_t v)
{
    uint8_t x[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    b_put(b, x, 4);
}

/* ---------------------------------------------------------------- vocabulary */

static uint32_t fnv32(const uint8_t *p, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 16777619u;
    return h;
}

/* The vocabulary section (i32 n, then u32 len + bytes per token) of a synthetic
 * vocabulary of n tokens; token `eot` (if < n) is "<|endoftext|>" as in the real
 * English-only files. */
static int synth_vocab(int n, int eot, bytes *out)
{
    /* all token bytes, back to back */
    uint32_t *off = malloc((size_t)n * sizeof *off), *len = malloc((size_t)n * sizeof *len);
    int *elig = malloc((size_t)n * sizeof *elig), *nosp = malloc((size_t)n * sizeof *nosp);
    uint32_t tsize = 1;
    while (tsize < 2u * (uint32_t)n + 2)
        tsize <<= 1;
    int32_t *table = malloc(tsize * sizeof *table);
    bytes tb = {0};
    int rc = -1;
    if (!off || !len || !elig || !nosp || !table)
        goto done;
    memset(table, 0xff, tsize * sizeof *table);

    /* GPT-2 byte order: printable ranges first, then the rest ascending */
    int order[256], k = 0;
    for (int c = 33; c <= 126; c++)
        order[k++] = c;
    for (int c = 161; c <= 172; c++)
        order[k++] = c;
    for (int c = 174; c <= 255; c++)
        order[k++] = c;
    for (int c = 0; c < 256; c++)
        if (!((c >= 33 && c <= 126) || (c >= 161 && c <= 172) || c >= 174))
            order[k++] = c;

    int n_elig = 0, n_nosp = 0;
    rng r;
    rng_seed(&r, 0x5eedf00dull, "vocabulary");
    for (int id = 0; id < n; id++) {
        uint8_t buf[MAX_SYNTH_LEN + 16];
        size_t blen = 0;
        if (id == eot) {
            blen = strlen("<|endoftext|>");
            memcpy(buf, "<|endoftext|>", blen);
        } else if (id < 256) {
            buf[0] = (uint8_t)order[id];
            blen = 1;
        } else {
            /* the concatenation of two earlier letter tokens, new and short */
            for (int tries = 0;; tries++) {
                if (tries > 1000000)
                    goto done;
                /* a leading space (30%) or an earlier token, then a letter token */
                int a = rng_below(&r, 10) < 3 ? -1 : elig[rng_below(&r, (uint32_t)n_elig)];
                int b2 = nosp[rng_below(&r, (uint32_t)n_nosp)];
                blen = 0;
                if (a < 0)
                    buf[blen++] = ' ';
                else {
                    memcpy(buf, tb.p + off[a], len[a]);
                    blen = len[a];
                }
                if (blen + len[b2] > MAX_SYNTH_LEN)
                    continue;
                memcpy(buf + blen, tb.p + off[b2], len[b2]);
                blen += len[b2];
                uint32_t h = fnv32(buf, blen) & (tsize - 1);
                int dup = 0;
                for (; table[h] >= 0; h = (h + 1) & (tsize - 1))
                    if (len[table[h]] == blen && memcmp(tb.p + off[table[h]], buf, blen) == 0) {
                        dup = 1;
                        break;
                    }
                if (!dup)
                    break;
            }
        }
        off[id] = (uint32_t)tb.len;
        len[id] = (uint32_t)blen;
        b_put(&tb, buf, blen);
        if (tb.oom)
            goto done;
        uint32_t h = fnv32(buf, blen) & (tsize - 1);
        while (table[h] >= 0)
            h = (h + 1) & (tsize - 1);
        table[h] = id;
        /* letters (optionally after one leading space) may be combined further */
        int letters = blen > 0;
        for (size_t i = 0; i < blen; i++) {
            int c = buf[i];
            int is_letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
            if (!is_letter && !(i == 0 && c == ' ' && blen > 1))
                letters = 0;
        }
        if (letters) {
            elig[n_elig++] = id;
            if (buf[0] != ' ')
                nosp[n_nosp++] = id;
        }
    }
    b_u32(out, (uint32_t)n);
    for (int id = 0; id < n; id++) {
        b_u32(out, len[id]);
        b_put(out, tb.p + off[id], len[id]);
    }
    rc = out->oom ? -1 : 0;
done:
    free(off);
    free(len);
    free(elig);
    free(nosp);
    free(table);
    free(tb.p);
    return rc;
}

/* Reads the header, the mel filters and the vocabulary section of a ggml file. */
static int read_vocab_file(const char *path, int *n_vocab, int *n_mels, float **filters,
                           bytes *vocab, int *n_tokens, char **error)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        gen_err(error, "%s: cannot open", path);
        return -1;
    }
    uint8_t h[4 + 44 + 8];
    int rc = -1;
    if (fread(h, 1, sizeof h, f) != sizeof h) {
        gen_err(error, "%s: too short for a ggml header", path);
        goto done;
    }
    int32_t v[14];
    for (int i = 0; i < 14; i++)
        v[i] = (int32_t)((uint32_t)h[4 * i] | (uint32_t)h[4 * i + 1] << 8 |
                         (uint32_t)h[4 * i + 2] << 16 | (uint32_t)h[4 * i + 3] << 24);
    if ((uint32_t)v[0] != 0x67676d6cu) {
        gen_err(error, "%s: not a ggml file", path);
        goto done;
    }
    *n_vocab = v[1];
    *n_mels = v[10];
    if ((v[10] != 80 && v[10] != 128) || v[12] != v[10] || v[13] != MEL_BINS) {
        gen_err(error, "%s: unexpected mel filter header", path);
        goto done;
    }
    size_t nf = (size_t)v[10] * MEL_BINS;
    *filters = malloc(nf * sizeof **filters);
    uint8_t *raw = malloc(nf * 4);
    if (!*filters || !raw || fread(raw, 4, nf, f) != nf) {
        free(raw);
        gen_err(error, "%s: cannot read the mel filters", path);
        goto done;
    }
    for (size_t i = 0; i < nf; i++) {
        uint32_t u = (uint32_t)raw[4 * i] | (uint32_t)raw[4 * i + 1] << 8 |
                     (uint32_t)raw[4 * i + 2] << 16 | (uint32_t)raw[4 * i + 3] << 24;
        memcpy(&(*filters)[i], &u, 4);
    }
    free(raw);
    uint8_t nb[4];
    if (fread(nb, 1, 4, f) != 4) {
        gen_err(error, "%s: no vocabulary", path);
        goto done;
    }
    int32_t n = (int32_t)((uint32_t)nb[0] | (uint32_t)nb[1] << 8 | (uint32_t)nb[2] << 16 |
                          (uint32_t)nb[3] << 24);
    if (n < 1 || n > *n_vocab) {
        gen_err(error, "%s: bad vocabulary size %d", path, (int)n);
        goto done;
    }
    b_put(vocab, nb, 4);
    for (int32_t i = 0; i < n; i++) {
        uint8_t lb[4], tok[1024];
        if (fread(lb, 1, 4, f) != 4)
            goto trunc;
        uint32_t l = (uint32_t)lb[0] | (uint32_t)lb[1] << 8 | (uint32_t)lb[2] << 16 |
                     (uint32_t)lb[3] << 24;
        if (l > sizeof tok || fread(tok, 1, l, f) != l)
            goto trunc;
        b_put(vocab, lb, 4);
        b_put(vocab, tok, l);
    }
    if (vocab->oom) {
        gen_err(error, "out of memory");
        goto done;
    }
    *n_tokens = n;
    rc = 0;
    goto done;
trunc:
    gen_err(error, "%s: bad or truncated vocabulary", path);
done:
    fclose(f);
    if (rc) {
        free(*filters);
        *filters = NULL;
    }
    return rc;
}

/* ---------------------------------------------------------------- quantization */

/* ggml's block quantization as whisper.cpp's quantizer does it (quantization version
 * 2): blocks of 32 consecutive values, an f16 scale (and minimum) per block, round to
 * nearest.  Written from the block layouts, independent of core/model/quant.c. */

#define QK 32

/* The generator's own table of the types it writes, kept apart from the core's
 * (core/model/quant.h) so that a wrong row there is caught: test_quant checks that the
 * two agree.  type: the ggml tensor type of the quantized matrices (-1: none). */
static const struct {
    const char *name;
    int ftype, type;
    size_t block_bytes;
} FTYPES[] = {{"f32", 0, -1, 0},  {"f16", 1, -1, 0},  {"q4_0", 2, 2, 18}, {"q4_1", 3, 3, 20},
              {"q8_0", 7, 8, 34}, {"q5_0", 8, 6, 22}, {"q5_1", 9, 7, 24}};
#define N_FTYPES (sizeof FTYPES / sizeof *FTYPES)

int gen_quant_type(int ftype)
{
    for (size_t i = 0; i < N_FTYPES; i++)
        if (FTYPES[i].ftype == ftype)
            return FTYPES[i].type;
    return -1;
}

size_t gen_quant_block_bytes(int type)
{
    for (size_t i = 0; type >= 0 && i < N_FTYPES; i++)
        if (FTYPES[i].type == type)
            return FTYPES[i].block_bytes;
    return 0;
}

int gen_ftype_parse(const char *name)
{
    for (size_t i = 0; name && i < N_FTYPES; i++)
        if (strcmp(name, FTYPES[i].name) == 0)
            return FTYPES[i].ftype;
    return -1;
}

const char *gen_ftype_name(int ftype)
{
    for (size_t i = 0; i < N_FTYPES; i++)
        if (FTYPES[i].ftype == ftype)
            return FTYPES[i].name;
    return NULL;
}

char *gen_ftype_list(char *buf, size_t cap, const char *sep, int quantized, int numbered)
{
    size_t at = 0;
    if (cap)
        buf[0] = '\0';
    for (size_t i = 0; i < N_FTYPES && at < cap; i++) {
        if (quantized && FTYPES[i].type < 0)
            continue;
        int w = numbered ? snprintf(buf + at, cap - at, "%s%d (%s)", at ? sep : "",
                                    FTYPES[i].ftype, FTYPES[i].name)
                         : snprintf(buf + at, cap - at, "%s%s", at ? sep : "", FTYPES[i].name);
        if (w < 0)
            break;
        at += (size_t)w;
    }
    return buf;
}

static void put_f16(uint8_t *p, float v)
{
    uint16_t h = gen_f32_to_f16(v);
    p[0] = (uint8_t)h;
    p[1] = (uint8_t)(h >> 8);
}

static int clampi(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* The value of largest magnitude, with its sign (the first such one). */
static float signed_absmax(const float *x)
{
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < QK; j++)
        if (fabsf(x[j]) > amax) {
            amax = fabsf(x[j]);
            max = x[j];
        }
    return max;
}

static void min_max(const float *x, float *lo, float *hi)
{
    *lo = x[0];
    *hi = x[0];
    for (int j = 1; j < QK; j++) {
        if (x[j] < *lo)
            *lo = x[j];
        if (x[j] > *hi)
            *hi = x[j];
    }
}

void gen_quantize_block(int type, const float *x, uint8_t *out)
{
    memset(out, 0, gen_quant_block_bytes(type));
    switch (type) {
    case 8: { /* q8_0: d = amax / 127, q = round(x / d) */
        float amax = fabsf(signed_absmax(x));
        float d = amax / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
        put_f16(out, d);
        for (int j = 0; j < QK; j++)
            out[2 + j] = (uint8_t)(int8_t)clampi((int)roundf(x[j] * id), -127, 127);
        break;
    }
    case 2:   /* q4_0: d = max / -8 (the signed max maps to q = 0), q = x / d + 8 */
    case 6: { /* q5_0: d = max / -16, q = x / d + 16 */
        int half = type == 2 ? 8 : 16;
        float d = signed_absmax(x) / (float)-half, id = d != 0.0f ? 1.0f / d : 0.0f;
        put_f16(out, d);
        uint8_t *qs = out + (type == 2 ? 2 : 6);
        uint32_t qh = 0;
        for (int j = 0; j < QK / 2; j++) {
            /* x / d + half + 0.5 is >= 0.5 here, so truncation rounds to nearest */
            int q0 = clampi((int)(x[j] * id + (float)half + 0.5f), 0, 2 * half - 1);
            int q1 = clampi((int)(x[j + QK / 2] * id + (float)half + 0.5f), 0, 2 * half - 1);
            qs[j] = (uint8_t)((q0 & 0x0f) | (q1 & 0x0f) << 4);
            qh |= (uint32_t)(q0 >> 4 & 1) << j | (uint32_t)(q1 >> 4 & 1) << (j + QK / 2);
        }
        if (type == 6)
            for (int i = 0; i < 4; i++)
                out[2 + i] = (uint8_t)(qh >> (8 * i));
        break;
    }
    case 3:   /* q4_1: d = (max - min) / 15, m = min, q = (x - min) / d */
    case 7: { /* q5_1: d = (max - min) / 31 */
        int top = type == 3 ? 15 : 31;
        float lo, hi;
        min_max(x, &lo, &hi);
        float d = (hi - lo) / (float)top, id = d != 0.0f ? 1.0f / d : 0.0f;
        put_f16(out, d);
        put_f16(out + 2, lo);
        uint8_t *qs = out + (type == 3 ? 4 : 8);
        uint32_t qh = 0;
        for (int j = 0; j < QK / 2; j++) {
            int q0 = clampi((int)((x[j] - lo) * id + 0.5f), 0, top);
            int q1 = clampi((int)((x[j + QK / 2] - lo) * id + 0.5f), 0, top);
            qs[j] = (uint8_t)((q0 & 0x0f) | (q1 & 0x0f) << 4);
            qh |= (uint32_t)(q0 >> 4 & 1) << j | (uint32_t)(q1 >> 4 & 1) << (j + QK / 2);
        }
        if (type == 7)
            for (int i = 0; i < 4; i++)
                out[4 + i] = (uint8_t)(qh >> (8 * i));
        break;
    }
    default:
        break;
    }
}

/* ---------------------------------------------------------------- tensors */

enum init { I_NORMAL, I_LN_W, I_SINUS };

typedef struct {
    char name[64];
    int nd;
    int64_t dims[3]; /* PyTorch order */
    int type;        /* 0 F32, 1 F16, else a quantized ggml type */
    enum init init;
    double std;
} spec;

typedef struct {
    spec *s;
    int n;
} spec_list;

int gen_tensor_keeps_f32(const char *name)
{
    static const char *const names[] = {"encoder.conv1.bias", "encoder.conv2.bias",
                                        "encoder.positional_embedding",
                                        "decoder.positional_embedding"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(name, names[i]) == 0)
            return 1;
    return 0;
}

static void add(spec_list *l, const char *name, int nd, int64_t d0, int64_t d1, int64_t d2,
                enum init init, double std, int ftype)
{
    spec *s = &l->s[l->n++];
    snprintf(s->name, sizeof s->name, "%s", name);
    s->nd = nd;
    s->dims[0] = d0;
    s->dims[1] = d1;
    s->dims[2] = d2;
    s->init = init;
    s->std = std;
    /* f16: every matrix f16.  Quantized (whisper.cpp's quantizer on an f16 model):
     * the 2-D matrices quantized, the 3-D conv weights f16; the 1-D tensors, the conv
     * biases and the positional embeddings f32 always */
    if (ftype == 0 || nd < 2 || gen_tensor_keeps_f32(name))
        s->type = 0;
    else if (ftype == 1 || nd != 2)
        s->type = 1;
    else
        s->type = gen_quant_type(ftype);
}

static void add_block(spec_list *l, const char *prefix, int dec, int64_t d, int ftype)
{
    char nm[64]; /* prefix (< 32) + ".cross_attn.query.weight" fits */
    const double sd = 1.0 / sqrt((double)d), s4 = 1.0 / sqrt(4.0 * (double)d), b = 0.02;
    static const char *const att[2] = {"attn", "cross_attn"};
    for (int a = 0; a < (dec ? 2 : 1); a++) {
#define A(suffix, nd, d0, d1, init, std)                                               \
    do {                                                                               \
        snprintf(nm, sizeof nm, "%s.%s%s", prefix, att[a], suffix);                    \
        add(l, nm, nd, d0, d1, 0, init, std, ftype);                                   \
    } while (0)
        A("_ln.weight", 1, d, 0, I_LN_W, 0.05);
        A("_ln.bias", 1, d, 0, I_NORMAL, b);
        A(".query.weight", 2, d, d, I_NORMAL, sd);
        A(".query.bias", 1, d, 0, I_NORMAL, b);
        A(".key.weight", 2, d, d, I_NORMAL, sd);
        A(".value.weight", 2, d, d, I_NORMAL, sd);
        A(".value.bias", 1, d, 0, I_NORMAL, b);
        A(".out.weight", 2, d, d, I_NORMAL, sd);
        A(".out.bias", 1, d, 0, I_NORMAL, b);
#undef A
    }
#define M(suffix, nd, d0, d1, init, std)                                                \
    do {                                                                               \
        snprintf(nm, sizeof nm, "%s.%s", prefix, suffix);                              \
        add(l, nm, nd, d0, d1, 0, init, std, ftype);                                   \
    } while (0)
    M("mlp_ln.weight", 1, d, 0, I_LN_W, 0.05);
    M("mlp_ln.bias", 1, d, 0, I_NORMAL, b);
    M("mlp.0.weight", 2, 4 * d, d, I_NORMAL, sd);
    M("mlp.0.bias", 1, 4 * d, 0, I_NORMAL, b);
    M("mlp.2.weight", 2, d, 4 * d, I_NORMAL, s4);
    M("mlp.2.bias", 1, d, 0, I_NORMAL, b);
#undef M
}

static int build_specs(const gen_params *p, int n_vocab, int n_mels, spec_list *l)
{
    int n = 11 + 15 * p->n_audio_layer + 24 * p->n_text_layer;
    l->s = calloc((size_t)n, sizeof *l->s);
    l->n = 0;
    if (!l->s)
        return -1;
    int64_t d = p->n_state;
    int ft = p->ftype, cb = p->conv_bias_1d;
    add(l, "encoder.conv1.weight", 3, d, n_mels, 3, I_NORMAL, 1.0 / sqrt(3.0 * n_mels), ft);
    add(l, "encoder.conv1.bias", cb ? 1 : 2, d, 1, 0, I_NORMAL, 0.02, ft);
    add(l, "encoder.conv2.weight", 3, d, d, 3, I_NORMAL, 1.0 / sqrt(3.0 * (double)d), ft);
    add(l, "encoder.conv2.bias", cb ? 1 : 2, d, 1, 0, I_NORMAL, 0.02, ft);
    add(l, "encoder.positional_embedding", 2, p->n_audio_ctx, d, 0, I_SINUS, 0, ft);
    char prefix[32]; /* "decoder.blocks." + any int */
    for (int i = 0; i < p->n_audio_layer; i++) {
        snprintf(prefix, sizeof prefix, "encoder.blocks.%d", i);
        add_block(l, prefix, 0, d, ft);
    }
    add(l, "encoder.ln_post.weight", 1, d, 0, 0, I_LN_W, 0.05, ft);
    add(l, "encoder.ln_post.bias", 1, d, 0, 0, I_NORMAL, 0.02, ft);
    add(l, "decoder.token_embedding.weight", 2, n_vocab, d, 0, I_NORMAL,
        1.0 / sqrt((double)d), ft);
    add(l, "decoder.positional_embedding", 2, p->n_text_ctx, d, 0, I_NORMAL, 0.02, ft);
    for (int i = 0; i < p->n_text_layer; i++) {
        snprintf(prefix, sizeof prefix, "decoder.blocks.%d", i);
        add_block(l, prefix, 1, d, ft);
    }
    add(l, "decoder.ln.weight", 1, d, 0, 0, I_LN_W, 0.05, ft);
    add(l, "decoder.ln.bias", 1, d, 0, 0, I_NORMAL, 0.02, ft);
    return 0;
}

/* ---------------------------------------------------------------- output */

typedef struct {
    FILE *f;    /* file output, or */
    bytes mem;  /* memory output */
    uint64_t off;
    int failed;
} sink;

static void s_put(sink *s, const void *p, size_t n)
{
    if (s->failed)
        return;
    if (s->f) {
        if (fwrite(p, 1, n, s->f) != n)
            s->failed = 1;
    } else {
        b_put(&s->mem, p, n);
        if (s->mem.oom)
            s->failed = 1;
    }
    s->off += n;
}

static void s_i32(sink *s, int32_t v)
{
    uint32_t u = (uint32_t)v;
    uint8_t x[4] = {(uint8_t)u, (uint8_t)(u >> 8), (uint8_t)(u >> 16), (uint8_t)(u >> 24)};
    s_put(s, x, 4);
}

static void s_f32s(sink *s, const float *v, size_t n)
{
    uint8_t buf[4096];
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &v[i], 4);
        buf[k++] = (uint8_t)u;
        buf[k++] = (uint8_t)(u >> 8);
        buf[k++] = (uint8_t)(u >> 16);
        buf[k++] = (uint8_t)(u >> 24);
        if (k == sizeof buf) {
            s_put(s, buf, k);
            k = 0;
        }
    }
    s_put(s, buf, k);
}

static void s_f16s(sink *s, const float *v, size_t n)
{
    uint8_t buf[4096];
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        uint16_t h = gen_f32_to_f16(v[i]);
        buf[k++] = (uint8_t)h;
        buf[k++] = (uint8_t)(h >> 8);
        if (k == sizeof buf) {
            s_put(s, buf, k);
            k = 0;
        }
    }
    s_put(s, buf, k);
}

/* Values of one tensor, chunk by chunk, index `start` onwards. */
static void fill(const spec *t, rng *r, int64_t cols, size_t start, size_t n, float *out)
{
    for (size_t i = 0; i < n; i++) {
        size_t idx = start + i;
        switch (t->init) {
        case I_NORMAL:
            out[i] = (float)(t->std * rng_normal(r));
            break;
        case I_LN_W:
            out[i] = (float)(1.0 + t->std * rng_normal(r));
            break;
        case I_SINUS: { /* reference sinusoids(length, channels) */
            int64_t half = cols / 2, row = (int64_t)(idx / (size_t)cols);
            int64_t c = (int64_t)(idx % (size_t)cols);
            double inc = half > 1 ? log(10000.0) / (double)(half - 1) : 0.0;
            int64_t j = c < half ? c : c - half;
            double x = (double)row * exp(-inc * (double)j);
            out[i] = (float)(c < half ? sin(x) : cos(x));
            break;
        }
        }
    }
}

static int check_params(const gen_params *p, char **error)
{
    if (p->n_state < 4 || p->n_state > 8192 || p->n_state % 2) {
        gen_err(error, "n_state %d: expected an even number in 4..8192", p->n_state);
        return -1;
    }
    if (p->n_head < 1 || p->n_state % p->n_head) {
        gen_err(error, "n_head %d must divide n_state %d", p->n_head, p->n_state);
        return -1;
    }
    if (p->n_audio_layer < 1 || p->n_audio_layer > 64 || p->n_text_layer < 1 ||
        p->n_text_layer > 64) {
        gen_err(error, "layers must be 1..64");
        return -1;
    }
    if (p->n_audio_ctx < 1 || p->n_audio_ctx > 1500 || p->n_text_ctx < 1 ||
        p->n_text_ctx > 448) {
        gen_err(error, "n_audio_ctx must be 1..1500 and n_text_ctx 1..448");
        return -1;
    }
    if (p->n_vocab && p->n_vocab != 51864 && p->n_vocab != 51865 && p->n_vocab != 51866) {
        gen_err(error, "n_vocab %d: expected 51864, 51865 or 51866", p->n_vocab);
        return -1;
    }
    if (p->n_mels && p->n_mels != 80 && p->n_mels != 128) {
        gen_err(error, "n_mels %d: expected 80 or 128", p->n_mels);
        return -1;
    }
    if (!gen_ftype_name(p->ftype)) {
        char list[160];
        gen_err(error, "ftype %d: expected one of %s", p->ftype,
                gen_ftype_list(list, sizeof list, ", ", 0, 1));
        return -1;
    }
    if (gen_quant_type(p->ftype) >= 0 && p->n_state % QK) {
        gen_err(error, "n_state %d: a quantized model needs a multiple of %d", p->n_state, QK);
        return -1;
    }
    return 0;
}

static int generate(const gen_params *p, sink *s, gen_layout *lay, char **error)
{
    if (lay)
        memset(lay, 0, sizeof *lay);
    if (check_params(p, error))
        return -1;
    int n_vocab = p->n_vocab, n_mels = p->n_mels, n_tokens = 0;
    float *filters = NULL, *chunk = NULL;
    uint8_t *qbuf = NULL;
    bytes vocab = {0};
    spec_list specs = {0};
    int rc = -1;
    if (p->vocab_from) {
        int fv, fm;
        if (read_vocab_file(p->vocab_from, &fv, &fm, &filters, &vocab, &n_tokens, error))
            goto done;
        if (!n_vocab)
            n_vocab = fv;
        if (!n_mels)
            n_mels = fm;
        if (fm != n_mels) {
            gen_err(error, "%s has %d mel bands, %d asked for", p->vocab_from, fm, n_mels);
            goto done;
        }
        if (n_tokens > n_vocab) {
            gen_err(error, "%s has %d tokens, more than n_vocab %d", p->vocab_from, n_tokens,
                    n_vocab);
            goto done;
        }
    } else {
        if (!n_vocab)
            n_vocab = 51864;
        if (!n_mels)
            n_mels = 80;
        n_tokens = p->n_tokens ? p->n_tokens : SYNTH_TOKENS;
        if (n_tokens < 1 || n_tokens > n_vocab) {
            gen_err(error, "n_tokens %d: expected 1..n_vocab", n_tokens);
            goto done;
        }
        filters = malloc((size_t)n_mels * MEL_BINS * sizeof *filters);
        if (!filters || synth_vocab(n_tokens, n_vocab == 51864 ? 50256 : -1, &vocab)) {
            gen_err(error, "out of memory making the vocabulary");
            goto done;
        }
        gen_mel_filters(n_mels, filters);
    }
    if (build_specs(p, n_vocab, n_mels, &specs)) {
        gen_err(error, "out of memory");
        goto done;
    }
    if (lay) {
        lay->tensors = calloc((size_t)specs.n, sizeof *lay->tensors);
        if (!lay->tensors) {
            gen_err(error, "out of memory");
            goto done;
        }
        lay->n_vocab = n_vocab;
        lay->n_mels = n_mels;
        lay->n_tokens = n_tokens;
    }
    /* header */
    s_i32(s, 0x67676d6c);
    if (lay)
        lay->hparams_off = s->off;
    int32_t hp[11] = {n_vocab,        p->n_audio_ctx, p->n_state,      p->n_head,
                      p->n_audio_layer, p->n_text_ctx, p->n_state,     p->n_head,
                      p->n_text_layer, n_mels,
                      /* whisper.cpp writes quantization version 2 into quantized files */
                      gen_quant_type(p->ftype) >= 0 ? 2000 + p->ftype : p->ftype};
    for (int i = 0; i < 11; i++)
        s_i32(s, hp[i]);
    if (lay)
        lay->mel_off = s->off;
    s_i32(s, n_mels);
    s_i32(s, MEL_BINS);
    s_f32s(s, filters, (size_t)n_mels * MEL_BINS);
    if (lay)
        lay->vocab_off = s->off;
    s_put(s, vocab.p, vocab.len);
    if (lay)
        lay->vocab_end = s->off;
    /* tensors */
    const size_t CH = 1 << 16;
    chunk = malloc(CH * sizeof *chunk);
    qbuf = malloc(CH / QK * 34);
    if (!chunk || !qbuf) {
        gen_err(error, "out of memory");
        goto done;
    }
    for (int t = 0; t < specs.n; t++) {
        const spec *sp = &specs.s[t];
        int64_t ne[3];
        size_t count = 1;
        for (int i = 0; i < sp->nd; i++) {
            ne[i] = sp->dims[sp->nd - 1 - i];
            count *= (size_t)ne[i];
        }
        gen_tensor_info *ti = lay ? &lay->tensors[t] : NULL;
        if (ti) {
            snprintf(ti->name, sizeof ti->name, "%s", sp->name);
            ti->hdr_off = s->off;
            ti->n_dims = sp->nd;
            ti->type = sp->type;
            for (int i = 0; i < sp->nd; i++)
                ti->ne[i] = ne[i];
        }
        size_t name_len = strlen(sp->name);
        s_i32(s, sp->nd);
        s_i32(s, (int32_t)name_len);
        s_i32(s, sp->type);
        if (ti)
            ti->ne_off = s->off;
        for (int i = 0; i < sp->nd; i++)
            s_i32(s, (int32_t)ne[i]);
        if (ti)
            ti->name_off = s->off;
        s_put(s, sp->name, name_len);
        if (ti)
            ti->data_off = s->off;
        rng r;
        rng_seed(&r, p->seed, sp->name);
        int64_t cols = sp->dims[sp->nd - 1];
        for (size_t done_n = 0; done_n < count;) {
            size_t k = count - done_n < CH ? count - done_n : CH;
            fill(sp, &r, cols, done_n, k, chunk);
            if (sp->type == 1) {
                s_f16s(s, chunk, k);
            } else if (sp->type == 0) {
                s_f32s(s, chunk, k);
            } else { /* rows of whole blocks (n_state % 32 == 0), CH a multiple of 32 */
                size_t bb = gen_quant_block_bytes(sp->type);
                for (size_t b = 0; b < k / QK; b++)
                    gen_quantize_block(sp->type, chunk + b * QK, qbuf + b * bb);
                s_put(s, qbuf, k / QK * bb);
            }
            done_n += k;
        }
        if (ti) {
            ti->end_off = s->off;
            ti->data_bytes = ti->end_off - ti->data_off;
        }
        if (s->failed)
            break;
    }
    if (s->failed) {
        gen_err(error, s->f ? "write error" : "out of memory");
        goto done;
    }
    if (lay) {
        lay->n_tensors = specs.n;
        lay->size = s->off;
    }
    rc = 0;
done:
    if (rc && lay)
        gen_layout_free(lay);
    free(chunk);
    free(qbuf);
    free(filters);
    free(vocab.p);
    free(specs.s);
    return rc;
}

/* ---------------------------------------------------------------- public */

int gen_params_preset(gen_params *p, const char *size)
{
    memset(p, 0, sizeof *p);
    p->n_audio_ctx = 1500;
    p->n_text_ctx = 448;
    p->ftype = 1;
    p->seed = 1;
    if (size && strcmp(size, "micro") == 0) {
        p->n_state = 64;
        p->n_head = 2;
        p->n_audio_layer = p->n_text_layer = 2;
    } else if (size && strcmp(size, "tiny") == 0) {
        p->n_state = 384;
        p->n_head = 6;
        p->n_audio_layer = p->n_text_layer = 4;
    } else if (size && strcmp(size, "base") == 0) {
        p->n_state = 512;
        p->n_head = 8;
        p->n_audio_layer = p->n_text_layer = 6;
    } else if (size && strcmp(size, "small") == 0) {
        p->n_state = 768;
        p->n_head = 12;
        p->n_audio_layer = p->n_text_layer = 12;
    } else if (size && strcmp(size, "large-v3-turbo") == 0) {
        /* the released checkpoint's shape: a 32-layer encoder, a 4-layer decoder */
        p->n_state = 1280;
        p->n_head = 20;
        p->n_audio_layer = 32;
        p->n_text_layer = 4;
        p->n_mels = 128;
        p->n_vocab = 51866;
    } else {
        return -1;
    }
    return 0;
}

int gen_model_build(const gen_params *p, uint8_t **data, size_t *size, gen_layout *layout,
                    char **error)
{
    sink s = {0};
    *data = NULL;
    *size = 0;
    if (generate(p, &s, layout, error)) {
        free(s.mem.p);
        return -1;
    }
    *data = s.mem.p;
    *size = s.mem.len;
    return 0;
}

int gen_model_write(const char *path, const gen_params *p, char **error)
{
    sink s = {0};
    s.f = fopen(path, "wb");
    if (!s.f) {
        gen_err(error, "%s: cannot create", path);
        return -1;
    }
    int rc = generate(p, &s, NULL, error);
    if (fclose(s.f) != 0 && rc == 0) {
        gen_err(error, "%s: write error", path);
        rc = -1;
    }
    if (rc)
        remove(path);
    return rc;
}

void gen_layout_free(gen_layout *layout)
{
    if (!layout)
        return;
    free(layout->tensors);
    layout->tensors = NULL;
    layout->n_tensors = 0;
}

int gen_layout_find(const gen_layout *layout, const char *name)
{
    for (int i = 0; i < layout->n_tensors; i++)
        if (strcmp(layout->tensors[i].name, name) == 0)
            return i;
    return -1;
}

int gen_write_file(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t w = fwrite(data, 1, size, f);
    int rc = fclose(f);
    return w == size && rc == 0 ? 0 : -1;
}
