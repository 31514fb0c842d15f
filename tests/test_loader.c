/* loader: core/model/model.c, ggml_file.c and ggml_tensors.c on generated models (valid ones
 * load with the right hyper-parameters, specials and every weight; every kind of
 * malformed file gives a message with the path and the byte offset, and no crash),
 * then on the shared vocabulary-only files and the reference test-vector models.  The
 * limits (directories, FIFOs, huge headers, non-finite weights, loading from memory)
 * are in loader_limits.c. */
#include "genlib.h"
#include "model/model.h"
#include "loader_limits.h"
#include "model/quant.h"
#include "testutil.h"
#include "weight_lookup.h"

#include <fcntl.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char g_dir[256];
static int g_verbose = 1;

/* ---------------------------------------------------------------- helpers */

static void path_in(char *buf, size_t cap, const char *name)
{
    snprintf(buf, cap, "%s/%s", g_dir, name);
}

static void put_i32(uint8_t *b, uint64_t off, int32_t v)
{
    uint32_t u = (uint32_t)v;
    b[off] = (uint8_t)u;
    b[off + 1] = (uint8_t)(u >> 8);
    b[off + 2] = (uint8_t)(u >> 16);
    b[off + 3] = (uint8_t)(u >> 24);
}

static uint8_t *dup_bytes(const uint8_t *b, size_t n)
{
    uint8_t *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    memcpy(p, b, n);
    return p;
}

/* base[0, a) + ins[0, n_ins) + base[b, size) */
static uint8_t *splice_bytes(const uint8_t *base, size_t size, size_t a, size_t b, const uint8_t *ins,
                       size_t n_ins, size_t *out_size)
{
    *out_size = a + n_ins + (size - b);
    uint8_t *p = malloc(*out_size);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    memcpy(p, base, a);
    if (n_ins)
        memcpy(p + a, ins, n_ins);
    memcpy(p + a + n_ins, base + b, size - b);
    return p;
}

/* The byte offset named in a loader message, or -1. */
static long long reported_offset(const char *err)
{
    const char *p = err ? strstr(err, ": offset ") : NULL;
    return p ? strtoll(p + 9, NULL, 10) : -1;
}

/* Loading `path` must fail with a message naming the path and an offset (and
 * containing `want` when given). */
static void expect_fail_path(const char *path, const char *want, const char *label)
{
    char *err = NULL;
    wkv_model *m = wkv_model_load(path, &err);
    CHECK(m == NULL, "%s: loaded a malformed file", label);
    CHECK(err != NULL, "%s: no error message", label);
    if (err) {
        CHECK(strstr(err, path) != NULL, "%s: message lacks the path: %s", label, err);
        CHECK(strstr(err, "offset") != NULL, "%s: message lacks the offset: %s", label, err);
        if (want)
            CHECK(strstr(err, want) != NULL, "%s: message lacks '%s': %s", label, want, err);
        if (g_verbose)
            printf("  %-28s -> %s\n", label, err);
    }
    wkv_model_free(m);
    free(err);
    /* a NULL error pointer is allowed too */
    m = wkv_model_load(path, NULL);
    CHECK(m == NULL, "%s: loaded a malformed file (error == NULL)", label);
    wkv_model_free(m);
}

static void expect_fail(const uint8_t *data, size_t size, const char *want, const char *label)
{
    char path[512];
    path_in(path, sizeof path, "bad.bin");
    if (gen_write_file(path, data, size)) {
        CHECK(0, "%s: cannot write %s", label, path);
        return;
    }
    expect_fail_path(path, want, label);
    remove(path);
}

/* Patches one i32 of a copy of base and expects the load to fail. */
static void fail_i32(const uint8_t *base, size_t size, uint64_t off, int32_t v, const char *want,
                     const char *label)
{
    uint8_t *b = dup_bytes(base, size);
    put_i32(b, off, v);
    expect_fail(b, size, want, label);
    free(b);
}

static wkv_model *load_bytes(const uint8_t *data, size_t size, const char *name, char **err)
{
    char path[512];
    path_in(path, sizeof path, name);
    if (gen_write_file(path, data, size))
        return NULL;
    wkv_model *m = wkv_model_load(path, err);
    remove(path);
    return m;
}

/* ---------------------------------------------------------------- weights */

static float stored_value(const uint8_t *data, const gen_tensor_info *t, size_t i)
{
    const uint8_t *p = data + t->data_off;
    if (t->type == 1)
        return gen_f16_to_f32((uint16_t)(p[2 * i] | p[2 * i + 1] << 8));
    uint32_t u = (uint32_t)p[4 * i] | (uint32_t)p[4 * i + 1] << 8 |
                 (uint32_t)p[4 * i + 2] << 16 | (uint32_t)p[4 * i + 3] << 24;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* Every tensor of the file is in the model, element for element, each at its own
 * place in the arena. */
static void check_weights(const wkv_model *m, const uint8_t *data, const gen_layout *lay,
                          const char *label)
{
    size_t total = 0;
    int bad_tensors = 0;
    for (int k = 0; k < lay->n_tensors; k++) {
        const gen_tensor_info *t = &lay->tensors[k];
        size_t count = 1;
        for (int i = 0; i < t->n_dims; i++)
            count *= (size_t)t->ne[i];
        total += count;
        const float *w = weight_for(m, t->name);
        const uint16_t *h = half_for(m, t->name);
        if (!w == !h) {
            CHECK(0, "%s: %s for %s", label, w ? "both f32 and f16 pointers" : "no pointer",
                  t->name);
            continue;
        }
        if (h) { /* kept in f16: only in files that are not f32 */
            CHECK(m->hp.ftype % 1000 != 0, "%s: %s in f16 in an f32 file", label, t->name);
            /* copied as stored (arenaq) or narrowed from f32 (arena16) */
            const uint16_t *q = (const uint16_t *)(const void *)m->arenaq;
            int in16 = h >= m->arena16 && h + count <= m->arena16 + m->arena16_halves;
            int inq = q && h >= q && h + count <= q + m->arenaq_bytes / 2;
            if (!in16 && !inq) {
                CHECK(0, "%s: %s lies outside the f16 arenas", label, t->name);
                continue;
            }
        } else if (w < m->arena || w + count > m->arena + m->arena_floats) {
            CHECK(0, "%s: %s lies outside the arena", label, t->name);
            continue;
        }
        size_t bad = 0;
        for (size_t i = 0; i < count; i++) {
            float v = stored_value(data, t, i), got = h ? gen_f16_to_f32(h[i]) : w[i];
            if (memcmp(&v, &got, sizeof v) != 0)
                bad++;
        }
        if (bad) {
            bad_tensors++;
            CHECK(0, "%s: %s differs in %zu of %zu values", label, t->name, bad, count);
        }
    }
    CHECK(bad_tensors == 0, "%s: %d tensors differ", label, bad_tensors);
    CHECK(m->arena_floats + m->arena16_halves + m->arenaq_bytes / 2 == total,
          "%s: arenas have %zu floats + %zu + %zu halves, tensors %zu", label, m->arena_floats,
          m->arena16_halves, m->arenaq_bytes / 2, total);
    /* no two tensors share memory: the slots are distinct and ordered without overlap
     * (a sum check: the tensors cover the arenas exactly once) */
    char *cover = calloc(m->arena_floats ? m->arena_floats : 1, 1);
    char *cover16 = calloc(m->arena16_halves ? m->arena16_halves : 1, 1);
    size_t overlaps = 0;
    for (int k = 0; cover && cover16 && k < lay->n_tensors; k++) {
        const gen_tensor_info *t = &lay->tensors[k];
        size_t count = 1;
        for (int i = 0; i < t->n_dims; i++)
            count *= (size_t)t->ne[i];
        const float *w = weight_for(m, t->name);
        const uint16_t *h = half_for(m, t->name);
        if (h && h >= m->arena16 && h + count <= m->arena16 + m->arena16_halves)
            for (size_t i = 0; i < count; i++)
                overlaps += cover16[(size_t)(h - m->arena16) + i]++ != 0;
        if (!w || w < m->arena || w + count > m->arena + m->arena_floats)
            continue;
        for (size_t i = 0; i < count; i++)
            overlaps += cover[(size_t)(w - m->arena) + i]++ != 0;
    }
    CHECK(overlaps == 0, "%s: %zu arena values shared by two tensors", label, overlaps);
    free(cover);
    free(cover16);
    /* encoder blocks have no cross-attention */
    for (int l = 0; l < m->hp.n_audio_layer; l++)
        CHECK(m->w.enc[l].cross_q_w == NULL && m->w.enc[l].cross_ln_w == NULL,
              "%s: encoder block %d has cross-attention pointers", label, l);
}

/* ---------------------------------------------------------------- valid files */

static void check_valid(const char *label, int ftype, int n_vocab, int n_mels, int conv1d)
{
    gen_params p;
    gen_params_preset(&p, "micro");
    p.ftype = ftype;
    p.n_vocab = n_vocab;
    p.n_mels = n_mels;
    p.seed = 7;
    p.conv_bias_1d = conv1d;
    uint8_t *data;
    size_t size;
    gen_layout lay;
    char *err = NULL;
    if (gen_model_build(&p, &data, &size, &lay, &err)) {
        CHECK(0, "%s: generator failed: %s", label, err);
        free(err);
        return;
    }
    wkv_model *m = load_bytes(data, size, "valid.bin", &err);
    CHECK(m != NULL, "%s: load failed: %s", label, err ? err : "?");
    if (m) {
        const wkv_hparams *hp = wkv_model_hparams(m);
        CHECK(hp->n_vocab == n_vocab && hp->n_audio_ctx == 1500 && hp->n_audio_state == 64 &&
                  hp->n_audio_head == 2 && hp->n_audio_layer == 2 && hp->n_text_ctx == 448 &&
                  hp->n_text_state == 64 && hp->n_text_head == 2 && hp->n_text_layer == 2 &&
                  hp->n_mels == n_mels && hp->ftype == ftype,
              "%s: wrong hparams", label);
        const wkv_specials *sp = wkv_model_specials(m);
        int multi = n_vocab >= 51865;
        CHECK(wkv_model_is_multilingual(m) == multi, "%s: multilingual flag", label);
        CHECK(sp->eot == 50256 + multi && sp->sot == 50257 + multi &&
                  sp->lang_begin == 50258 + multi,
              "%s: eot/sot %d %d", label, sp->eot, sp->sot);
        int ts = n_vocab == 51864 ? 50363 : n_vocab == 51865 ? 50364 : 50365;
        CHECK(sp->timestamp_begin == ts && sp->timestamp_begin + 1501 == n_vocab,
              "%s: timestamp_begin %d", label, sp->timestamp_begin);
        CHECK(sp->n_langs == (n_vocab == 51866 ? 100 : 99), "%s: n_langs", label);
        CHECK(m->n_tokens == 50257, "%s: n_tokens %d", label, m->n_tokens);
        const float *mf = wkv_model_mel_filters(m);
        CHECK(mf && memcmp(mf, data + lay.mel_off + 8, (size_t)n_mels * 201 * 4) == 0,
              "%s: mel filters differ from the file", label);
        size_t len = 0;
        const char *t0 = wkv_token_bytes(m, 0, &len);
        CHECK(t0 && len == 1 && t0[0] == '!', "%s: token 0", label);
        t0 = wkv_token_bytes(m, 220, &len); /* GPT-2 byte order puts ' ' at 220 */
        CHECK(t0 && len == 1 && t0[0] == ' ', "%s: token 220", label);
        check_weights(m, data, &lay, label);
        wkv_model_free(m);
    }
    free(err);
    free(data);
    gen_layout_free(&lay);
}

/* ---------------------------------------------------------------- truncation */

/* Truncates the file at every offset from `hi` down to `lo` (in steps of `step`) and
 * expects a clean error each time; the reported offset must not lie past the end. */
static void truncations(const uint8_t *data, size_t size, const uint64_t *offs, size_t n_offs,
                        const char *label)
{
    char path[512];
    path_in(path, sizeof path, "trunc.bin");
    if (gen_write_file(path, data, size)) {
        CHECK(0, "%s: cannot write", label);
        return;
    }
    int fd = open(path, O_RDWR);
    CHECK(fd >= 0, "%s: cannot open", label);
    if (fd < 0)
        return;
    size_t loaded = 0, no_msg = 0, bad_off = 0, tried = 0;
    long long first_bad = -1;
    /* offsets must be descending: each ftruncate shrinks the file */
    for (size_t i = 0; i < n_offs; i++) {
        uint64_t off = offs[i];
        if (off >= size || (i && off >= offs[i - 1]))
            continue;
        if (ftruncate(fd, (off_t)off) != 0) {
            CHECK(0, "%s: ftruncate", label);
            break;
        }
        tried++;
        char *err = NULL;
        wkv_model *m = wkv_model_load(path, &err);
        if (m) {
            loaded++;
            if (first_bad < 0)
                first_bad = (long long)off;
            wkv_model_free(m);
        } else if (!err || !strstr(err, path) || !strstr(err, "offset")) {
            no_msg++;
            if (first_bad < 0)
                first_bad = (long long)off;
        } else {
            long long r = reported_offset(err);
            if (r < 0 || r > (long long)off) {
                bad_off++;
                if (first_bad < 0)
                    first_bad = (long long)off;
                fprintf(stderr, "  truncated at %llu: %s\n", (unsigned long long)off, err);
            }
        }
        free(err);
    }
    close(fd);
    remove(path);
    CHECK(loaded == 0 && no_msg == 0 && bad_off == 0,
          "%s: %zu truncated files loaded, %zu without a proper message, %zu with an offset "
          "past the end (first at %lld)",
          label, loaded, no_msg, bad_off, first_bad);
    printf("  %-28s -> %zu truncations, all rejected\n", label, tried);
}

static int cmp_desc(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x < y) - (x > y);
}

static void check_truncations(void)
{
    /* every offset of the header region of a small-vocabulary model: magic,
     * hyper-parameters, mel filters, vocabulary and the first tensor's header */
    gen_params p;
    gen_params_preset(&p, "micro");
    p.n_tokens = 300;
    uint8_t *data;
    size_t size;
    gen_layout lay;
    char *err = NULL;
    if (gen_model_build(&p, &data, &size, &lay, &err)) {
        CHECK(0, "generator: %s", err);
        free(err);
        return;
    }
    wkv_model *m = load_bytes(data, size, "small.bin", &err);
    CHECK(m != NULL, "small-vocabulary model: %s", err ? err : "?");
    if (m)
        CHECK(m->n_tokens == 300, "n_tokens %d", m->n_tokens);
    wkv_model_free(m);
    free(err);
    uint64_t end = lay.tensors[0].data_off + 1;
    uint64_t *offs = malloc((end + 1) * sizeof *offs);
    for (uint64_t i = 0; i <= end; i++)
        offs[i] = end - i;
    truncations(data, size, offs, end + 1, "every header truncation");
    free(offs);
    free(data);
    gen_layout_free(&lay);

    /* a full-vocabulary model: samples in the mel filters and the vocabulary, and
     * several points inside every tensor */
    gen_params_preset(&p, "micro");
    if (gen_model_build(&p, &data, &size, &lay, &err)) {
        CHECK(0, "generator: %s", err);
        free(err);
        return;
    }
    size_t cap = 16 + lay.vocab_end / 97 + (size_t)lay.n_tensors * 10, n = 0;
    offs = malloc(cap * sizeof *offs);
    for (uint64_t o = 0; o < lay.vocab_end && n < cap; o += 97)
        offs[n++] = o;
    offs[n++] = lay.vocab_end - 1;
    offs[n++] = lay.vocab_end;
    for (int k = 0; k < lay.n_tensors; k++) {
        const gen_tensor_info *t = &lay.tensors[k];
        uint64_t pts[9] = {t->hdr_off + 1, t->hdr_off + 4, t->hdr_off + 11, t->ne_off + 3,
                           t->name_off, t->name_off + 5, t->data_off,
                           t->data_off + t->data_bytes / 2, t->end_off - 1};
        for (int i = 0; i < 9 && n < cap; i++)
            offs[n++] = pts[i];
    }
    qsort(offs, n, sizeof *offs, cmp_desc);
    truncations(data, size, offs, n, "sampled truncations");
    free(offs);

    /* the last tensor's data cut short */
    const gen_tensor_info *last = &lay.tensors[lay.n_tensors - 1];
    expect_fail(data, last->data_off + 10, "truncated", "truncated tensor data");
    free(data);
    gen_layout_free(&lay);
}

/* ---------------------------------------------------------------- malformed files */

static void check_malformed(void)
{
    gen_params p;
    gen_params_preset(&p, "micro");
    uint8_t *base;
    size_t size;
    gen_layout lay;
    char *err = NULL;
    if (gen_model_build(&p, &base, &size, &lay, &err)) {
        CHECK(0, "generator: %s", err);
        free(err);
        return;
    }
    {
        wkv_model *m = load_bytes(base, size, "base.bin", &err);
        CHECK(m != NULL, "the unmodified model must load: %s", err ? err : "?");
        wkv_model_free(m);
        free(err);
        err = NULL;
    }
    const uint64_t H = lay.hparams_off;

    /* magic and header */
    fail_i32(base, size, 0, 0x12345678, "magic", "bad magic");
    fail_i32(base, size, 0, 0x46554747, "GGUF", "GGUF magic");
    fail_i32(base, size, H + 0, -1, "n_vocab", "n_vocab -1");
    fail_i32(base, size, H + 0, 50000, "n_vocab", "n_vocab 50000");
    fail_i32(base, size, H + 4, 0, "n_audio_ctx", "n_audio_ctx 0");
    fail_i32(base, size, H + 4, 1501, "n_audio_ctx", "n_audio_ctx 1501");
    fail_i32(base, size, H + 8, 0, "n_audio_state", "n_audio_state 0");
    fail_i32(base, size, H + 8, -64, "n_audio_state", "n_audio_state -64");
    fail_i32(base, size, H + 8, 8193, "n_audio_state", "n_audio_state 8193");
    fail_i32(base, size, H + 8, 0x7fffffff, "n_audio_state", "n_audio_state huge");
    fail_i32(base, size, H + 12, 3, "n_audio_head", "n_audio_head 3");
    fail_i32(base, size, H + 12, 0, "n_audio_head", "n_audio_head 0");
    fail_i32(base, size, H + 16, 0, "n_audio_layer", "n_audio_layer 0");
    fail_i32(base, size, H + 16, 65, "n_audio_layer", "n_audio_layer 65");
    fail_i32(base, size, H + 20, 449, "n_text_ctx", "n_text_ctx 449");
    fail_i32(base, size, H + 20, -1, "n_text_ctx", "n_text_ctx -1");
    fail_i32(base, size, H + 24, 128, "n_text_state", "n_text_state 128");
    fail_i32(base, size, H + 28, 0, "n_text_head", "n_text_head 0");
    fail_i32(base, size, H + 28, 5, "n_text_head", "n_text_head 5");
    fail_i32(base, size, H + 32, 100, "n_text_layer", "n_text_layer 100");
    fail_i32(base, size, H + 36, 7, "n_mels", "n_mels 7");
    fail_i32(base, size, H + 36, 128, "bands", "n_mels 128 / 80 filters");
    /* quantized ftypes load only in the current block layout (version 2) */
    fail_i32(base, size, H + 40, 2, "q4_0 model of quantization version 0", "ftype 2 (q4_0 v0)");
    fail_i32(base, size, H + 40, 3, "q4_1 model of quantization version 0", "ftype 3 (q4_1 v0)");
    fail_i32(base, size, H + 40, 7, "q8_0 model of quantization version 0", "ftype 7 (q8_0 v0)");
    fail_i32(base, size, H + 40, 1008, "q5_0 model of quantization version 1",
             "ftype 1008 (q5_0 v1)");
    fail_i32(base, size, H + 40, 3009, "version 3", "ftype 3009 (q5_1 v3)");
    fail_i32(base, size, H + 40, 5, "unknown ftype", "ftype 5");
    fail_i32(base, size, H + 40, 2005, "unknown ftype", "ftype 2005");
    fail_i32(base, size, H + 40, 100001, "unknown ftype", "ftype 100001 (version 100)");
    fail_i32(base, size, H + 40, -1, "unknown ftype", "ftype -1");
    {
        /* a quantisation version with f16 weights is fine */
        uint8_t *b = dup_bytes(base, size);
        put_i32(b, H + 40, 1001);
        wkv_model *m = load_bytes(b, size, "v.bin", &err);
        CHECK(m != NULL, "ftype 1001 must load: %s", err ? err : "?");
        wkv_model_free(m);
        free(err);
        err = NULL;
        free(b);
    }

    /* mel filters */
    fail_i32(base, size, lay.mel_off, 81, "bands", "mel n_mel 81");
    fail_i32(base, size, lay.mel_off, -80, "bands", "mel n_mel -80");
    fail_i32(base, size, lay.mel_off + 4, 200, "frequency bins", "mel n_fft 200");
    fail_i32(base, size, lay.mel_off + 4, 0x7fffffff, "frequency bins", "mel n_fft huge");

    /* vocabulary */
    const uint64_t V = lay.vocab_off;
    fail_i32(base, size, V, 0, "vocabulary has", "vocab size 0");
    fail_i32(base, size, V, -1, "vocabulary has", "vocab size -1");
    fail_i32(base, size, V, 51865, "vocabulary has", "vocab size > n_vocab");
    fail_i32(base, size, V, 0x7fffffff, "vocabulary has", "vocab size huge");
    fail_i32(base, size, V + 4, (int32_t)0xffffffff, "length", "token length 0xffffffff");
    fail_i32(base, size, V + 4, 1025, "length", "token length 1025");
    fail_i32(base, size, V, 51000, NULL, "vocab size 51000 (overrun)");

    /* tensor headers */
    const gen_tensor_info *t0 = &lay.tensors[0];
    fail_i32(base, size, t0->hdr_off, 99, "n_dims", "n_dims 99");
    fail_i32(base, size, t0->hdr_off, 5, "n_dims", "n_dims 5"); /* one past the limit */
    fail_i32(base, size, t0->hdr_off, 0, "n_dims", "n_dims 0");
    fail_i32(base, size, t0->hdr_off, -1, "n_dims", "n_dims -1");
    fail_i32(base, size, t0->hdr_off + 4, 0x7fffffff, "name length", "name_len huge");
    fail_i32(base, size, t0->hdr_off + 4, -3, "name length", "name_len -3");
    fail_i32(base, size, t0->hdr_off + 4, 0, "name length", "name_len 0");
    fail_i32(base, size, t0->hdr_off + 4, 256, "name length", "name_len 256");
    fail_i32(base, size, t0->ne_off, -3, "ne[0]", "ne[0] negative");
    fail_i32(base, size, t0->ne_off + 8, 0, "ne[2]", "ne[2] zero");
    fail_i32(base, size, t0->ne_off + 8, (int32_t)0x80000000, "ne[2]", "ne[2] INT_MIN");
    fail_i32(base, size, t0->ne_off + 8, 0x7fffffff, "shape", "ne[2] huge");

    int iq = gen_layout_find(&lay, "encoder.blocks.0.attn.query.weight");
    int ik = gen_layout_find(&lay, "decoder.blocks.0.attn.key.weight");
    int ib = gen_layout_find(&lay, "encoder.conv1.bias");
    int ip = gen_layout_find(&lay, "encoder.ln_post.bias");
    int il = gen_layout_find(&lay, "decoder.ln.bias");
    int im = gen_layout_find(&lay, "encoder.blocks.1.mlp.0.bias");
    int ie = gen_layout_find(&lay, "encoder.blocks.1.attn.key.weight");
    CHECK(iq >= 0 && ik >= 0 && ib >= 0 && ip >= 0 && il >= 0 && im >= 0 && ie >= 0,
          "layout lacks tensors");
    if (iq < 0 || ik < 0 || ib < 0 || ip < 0 || il < 0 || im < 0 || ie < 0)
        goto out;
    const gen_tensor_info *tq = &lay.tensors[iq], *tk = &lay.tensors[ik];

    /* tensor types */
    /* a quantized tensor in an f16 file (quantization version 0): layout unknown */
    fail_i32(base, size, tq->hdr_off + 8, 8, "quantized type q8_0 in a file of quantization "
             "version 0", "tensor type 8 (q8_0), v0 file");
    fail_i32(base, size, tq->hdr_off + 8, 2, "q4_0", "tensor type 2 (q4_0), v0 file");
    fail_i32(base, size, tq->hdr_off + 8, 3, "q4_1", "tensor type 3 (q4_1), v0 file");
    fail_i32(base, size, tq->hdr_off + 8, 6, "q5_0", "tensor type 6 (q5_0), v0 file");
    fail_i32(base, size, tq->hdr_off + 8, 7, "q5_1", "tensor type 7 (q5_1), v0 file");
    fail_i32(base, size, tq->hdr_off + 8, 4, "unknown tensor type", "tensor type 4");
    /* ggml's q8_1, past quant.h's table: refused here, at load, with the table's types,
     * so no kernel ever sees it */
    fail_i32(base, size, tq->hdr_off + 8, 9,
             "unknown tensor type 9 (expected 0 = f32, 1 = f16, 2 = q4_0",
             "tensor type 9 (past the table)");
    fail_i32(base, size, tq->hdr_off + 8, 99, "unknown tensor type", "tensor type 99");
    fail_i32(base, size, tq->hdr_off + 8, -1, "unknown tensor type", "tensor type -1");
    {
        /* an f16 matrix marked F32 reads twice the bytes: the shape is right, so the
         * file ends up misaligned and something later must fail */
        uint8_t *b = dup_bytes(base, size);
        put_i32(b, tq->hdr_off + 8, 0);
        expect_fail(b, size, NULL, "f16 data marked F32");
        free(b);
    }

    /* shapes */
    fail_i32(base, size, tk->ne_off + 4, 32, "has shape [32, 64], expected [64, 64]",
             "wrong shape (key [32, 64])");
    fail_i32(base, size, lay.tensors[ib].ne_off, 2, "shape", "conv bias ne [2, 64]");
    fail_i32(base, size, t0->ne_off + 4, 81, "shape", "conv1 with 81 mels");

    /* names */
    {
        uint8_t *b = dup_bytes(base, size);
        b[t0->name_off + 12] = 'X'; /* encoder.convX.weight */
        expect_fail(b, size, "unknown tensor name 'encoder.convX.weight'", "unknown name");
        b[t0->name_off + 12] = 0x01;
        expect_fail(b, size, "\\x01", "unprintable name");
        free(b);
        b = dup_bytes(base, size);
        b[lay.tensors[ie].name_off + 15] = '7'; /* encoder.blocks.7.attn.key.weight */
        expect_fail(b, size, "only 2 blocks", "block index 7 of 2");
        b[lay.tensors[ie].name_off + 15] = 'x';
        expect_fail(b, size, "unknown tensor name", "block index 'x'");
        b[lay.tensors[ie].name_off + 15] = '0'; /* now a second blocks.0.attn.key */
        expect_fail(b, size, "appears twice", "renamed into a duplicate");
        free(b);
    }

    /* missing and duplicate tensors */
    {
        size_t n;
        const gen_tensor_info *t = &lay.tensors[il];
        uint8_t *b = splice_bytes(base, size, t->hdr_off, t->end_off, NULL, 0, &n);
        expect_fail(b, n, "tensor 'decoder.ln.bias' is missing", "missing last tensor");
        free(b);
        t = &lay.tensors[im];
        b = splice_bytes(base, size, t->hdr_off, t->end_off, NULL, 0, &n);
        expect_fail(b, n, "'encoder.blocks.1.mlp.0.bias' is missing", "missing middle tensor");
        free(b);
        t = &lay.tensors[ip];
        b = splice_bytes(base, size, t->end_off, t->end_off, base + t->hdr_off,
                   t->end_off - t->hdr_off, &n);
        expect_fail(b, n, "'encoder.ln_post.bias' appears twice", "duplicate tensor");
        free(b);
        /* only the vocabulary */
        expect_fail(base, lay.vocab_end, "no tensors (vocabulary-only file?)",
                    "vocabulary-only file");
        /* only the first tensor */
        expect_fail(base, lay.tensors[0].end_off, "missing", "one tensor only");
        /* bytes after the last tensor */
        static const uint8_t junk[12] = {0};
        b = splice_bytes(base, size, size, size, junk, 5, &n);
        expect_fail(b, n, "end of file", "5 trailing bytes");
        free(b);
        b = splice_bytes(base, size, size, size, junk, 12, &n);
        expect_fail(b, n, "n_dims", "12 trailing zero bytes");
        free(b);
    }

    /* tensors in another order still load, with the right values */
    {
        size_t n, n2;
        const gen_tensor_info *t = &lay.tensors[il];
        uint8_t *b = splice_bytes(base, size, t->hdr_off, t->end_off, NULL, 0, &n);
        uint8_t *b2 = splice_bytes(b, n, lay.vocab_end, lay.vocab_end, base + t->hdr_off,
                             t->end_off - t->hdr_off, &n2);
        wkv_model *m = load_bytes(b2, n2, "order.bin", &err);
        CHECK(m != NULL, "reordered tensors must load: %s", err ? err : "?");
        if (m)
            check_weights(m, base, &lay, "reordered");
        wkv_model_free(m);
        free(err);
        err = NULL;
        free(b);
        free(b2);
    }

    /* the vocabulary-only entry point on a vocabulary-only file */
    {
        char path[512];
        path_in(path, sizeof path, "vocab.bin");
        gen_write_file(path, base, lay.vocab_end);
        wkv_model *m = wkv__model_load_vocab_only(path, &err);
        CHECK(m != NULL, "vocab-only load: %s", err ? err : "?");
        if (m) {
            CHECK(m->n_tokens == 50257 && m->arena == NULL && m->w.enc == NULL,
                  "vocab-only model: n_tokens %d", m->n_tokens);
            CHECK(wkv_model_specials(m)->eot == 50256, "vocab-only specials");
        }
        wkv_model_free(m);
        free(err);
        err = NULL;
        remove(path);
    }

    /* paths */
    {
        char path[512];
        path_in(path, sizeof path, "does-not-exist.bin");
        expect_fail_path(path, "cannot open", "missing file");
        expect_fail_path(g_dir, "directory", "directory");
        path_in(path, sizeof path, "empty.bin");
        gen_write_file(path, "", 0);
        expect_fail_path(path, "empty", "empty file");
        remove(path);
        wkv_model *m = wkv_model_load(NULL, &err);
        CHECK(m == NULL && err != NULL, "NULL path");
        free(err);
        err = NULL;
        CHECK(wkv_model_hparams(NULL) == NULL && wkv_model_specials(NULL) == NULL &&
                  wkv_model_mel_filters(NULL) == NULL && !wkv_model_is_multilingual(NULL),
              "accessors on NULL");
        wkv_model_free(NULL);
    }
out:
    free(base);
    gen_layout_free(&lay);
}

/* ---------------------------------------------------------------- quantized files */

/* Malformed quantized models (tests/test_quant.c checks the values of valid ones). */
static void check_quantized(void)
{
    gen_params p;
    gen_params_preset(&p, "micro");
    p.ftype = gen_ftype_parse("q8_0");
    uint8_t *base;
    size_t size;
    gen_layout lay;
    char *err = NULL;
    if (gen_model_build(&p, &base, &size, &lay, &err)) {
        CHECK(0, "generator: %s", err);
        free(err);
        return;
    }
    /* every quantized type loads, with its ftype */
    static const char *const names[5] = {"q8_0", "q5_0", "q5_1", "q4_0", "q4_1"};
    for (int i = 0; i < 5; i++) {
        gen_params pq = p;
        pq.ftype = gen_ftype_parse(names[i]);
        uint8_t *d;
        size_t n;
        if (gen_model_build(&pq, &d, &n, NULL, &err)) {
            CHECK(0, "generator %s: %s", names[i], err);
            free(err);
            err = NULL;
            continue;
        }
        wkv_model *m = load_bytes(d, n, "q.bin", &err);
        CHECK(m != NULL, "%s micro must load: %s", names[i], err ? err : "?");
        if (m)
            CHECK(m->hp.ftype == 2000 + pq.ftype, "%s: ftype %d", names[i], m->hp.ftype);
        if (g_verbose && m)
            printf("  %-28s -> loads (ftype %d, %zu bytes)\n", names[i], m->hp.ftype, n);
        wkv_model_free(m);
        free(err);
        err = NULL;
        free(d);
    }
    const uint64_t H = lay.hparams_off;
    int iq = gen_layout_find(&lay, "encoder.blocks.0.attn.query.weight");
    int it = gen_layout_find(&lay, "decoder.token_embedding.weight");
    int il = gen_layout_find(&lay, "encoder.ln_post.bias");
    int ib = gen_layout_find(&lay, "encoder.conv2.bias");
    int ip = gen_layout_find(&lay, "decoder.positional_embedding");
    int ic = gen_layout_find(&lay, "encoder.conv1.weight");
    CHECK(iq >= 0 && it >= 0 && il >= 0 && ib >= 0 && ip >= 0 && ic >= 0, "layout lacks tensors");
    if (iq < 0 || it < 0 || il < 0 || ib < 0 || ip < 0 || ic < 0)
        goto out;
    const gen_tensor_info *tq = &lay.tensors[iq];
    CHECK(tq->type == 8 && lay.tensors[it].type == 8 && lay.tensors[il].type == 0 &&
              lay.tensors[ic].type == 1,
          "generated q8_0 types %d %d %d %d", tq->type, lay.tensors[it].type,
          lay.tensors[il].type, lay.tensors[ic].type);

    /* the same file with an older quantization version */
    fail_i32(base, size, H + 40, 7, "quantization version 0", "q8_0 file, ftype 7 (v0)");
    fail_i32(base, size, H + 40, 1007, "quantization version 1", "q8_0 file, ftype 1007 (v1)");

    /* quantized types on tensors whisper.cpp never quantizes */
    fail_i32(base, size, lay.tensors[il].hdr_off + 8, 8, "only the 2-D weight matrices",
             "q8_0 1-D tensor (ln bias)");
    fail_i32(base, size, lay.tensors[ib].hdr_off + 8, 2, "only the 2-D weight matrices",
             "q4_0 conv bias [d, 1]");
    fail_i32(base, size, lay.tensors[ip].hdr_off + 8, 8, "only the 2-D weight matrices",
             "q8_0 positional embedding");
    fail_i32(base, size, lay.tensors[ic].hdr_off + 8, 8, "only the 2-D weight matrices",
             "q8_0 3-D conv weight");

    /* ne[0] not a multiple of 32 */
    fail_i32(base, size, tq->ne_off, 48, "ne[0] = 48 is not a multiple of the block size 32",
             "q8_0 matrix with ne[0] 48");
    {
        /* a genuine one: an f32 model of state 48 with one matrix marked q8_0 (its data
         * is f32, but the shape is refused before the data is looked at) */
        gen_params p48;
        gen_params_preset(&p48, "micro");
        p48.ftype = 0;
        p48.n_state = 48;
        uint8_t *d;
        size_t n;
        gen_layout l48;
        if (gen_model_build(&p48, &d, &n, &l48, &err) == 0) {
            int k = gen_layout_find(&l48, "encoder.blocks.1.mlp.0.weight");
            put_i32(d, l48.hparams_off + 40, 2007);
            if (k >= 0)
                fail_i32(d, n, l48.tensors[k].hdr_off + 8, 8, "ne[0] = 48 is not a multiple",
                         "state 48, q8_0 mlp.0 matrix");
            free(d);
            gen_layout_free(&l48);
        } else {
            CHECK(0, "generator (state 48): %s", err);
            free(err);
            err = NULL;
        }
    }

    /* the wrong block size: q8_0 data read as q4_0 (fewer bytes) misaligns the file */
    {
        uint8_t *b = dup_bytes(base, size);
        put_i32(b, tq->hdr_off + 8, 2);
        expect_fail(b, size, NULL, "q8_0 data marked q4_0");
        put_i32(b, tq->hdr_off + 8, 0);
        expect_fail(b, size, NULL, "q8_0 data marked F32");
        free(b);
    }

    /* truncated quantized data: the size is rows * blocks * block bytes */
    {
        const gen_tensor_info *t = &lay.tensors[it];
        CHECK(t->data_bytes == (uint64_t)t->ne[1] * (uint64_t)(t->ne[0] / 32) * 34,
              "token embedding: %llu bytes", (unsigned long long)t->data_bytes);
        char want[96];
        snprintf(want, sizeof want, "needs %llu bytes", (unsigned long long)t->data_bytes);
        expect_fail(base, t->end_off - 1, want, "quantized data short by 1");
        expect_fail(base, t->data_off + t->data_bytes / 2, "truncated",
                    "quantized data cut in half");
        /* truncations in and around every quantized tensor */
        size_t cap = (size_t)lay.n_tensors * 4, n = 0;
        uint64_t *offs = malloc(cap * sizeof *offs);
        for (int k = 0; k < lay.n_tensors; k++) {
            const gen_tensor_info *u = &lay.tensors[k];
            if (u->type < 2)
                continue;
            uint64_t pts[4] = {u->data_off, u->data_off + 17, u->data_off + u->data_bytes / 2,
                               u->end_off - 1};
            for (int i = 0; i < 4 && n < cap; i++)
                offs[n++] = pts[i];
        }
        qsort(offs, n, sizeof *offs, cmp_desc);
        truncations(base, size, offs, n, "quantized truncations");
        free(offs);
    }
    {
        /* rows * blocks * bytes that would overflow 64 bits cannot be reached (the shape
         * is checked first), but a huge ne[1] must fail cleanly */
        fail_i32(base, size, tq->ne_off + 4, 0x7fffffff, "shape", "q8_0 matrix, ne[1] huge");
    }
out:
    free(base);
    gen_layout_free(&lay);
}

/* ---------------------------------------------------------------- shared files */

static void check_shared_vocab(const char *rel, int n_vocab, int n_state, int n_layer)
{
    char path[4096];
    snprintf(path, sizeof path, "%s", tu_shared_path(rel));
    char *err = NULL;
    wkv_model *m = wkv__model_load_vocab_only(path, &err);
    CHECK(m != NULL, "%s: vocab-only load: %s", rel, err ? err : "?");
    free(err);
    err = NULL;
    if (m) {
        const wkv_hparams *hp = wkv_model_hparams(m);
        CHECK(hp->n_vocab == n_vocab && hp->n_audio_state == n_state &&
                  hp->n_text_state == n_state && hp->n_audio_layer == n_layer &&
                  hp->n_text_layer == n_layer && hp->n_mels == 80 && hp->ftype == 1,
              "%s: hparams", rel);
        CHECK(m->n_tokens == 50257, "%s: n_tokens %d", rel, m->n_tokens);
        int multi = n_vocab >= 51865;
        CHECK(wkv_model_is_multilingual(m) == multi, "%s: multilingual", rel);
        CHECK(wkv_model_specials(m)->eot == 50256 + multi &&
                  wkv_model_specials(m)->timestamp_begin == 50363 + multi,
              "%s: specials", rel);
        size_t len;
        const char *s = wkv_token_bytes(m, 256, &len); /* " t": the first merge */
        CHECK(s && len == 2 && memcmp(s, " t", 2) == 0, "%s: token 256", rel);
        /* the stored filters are librosa's: the generator computes the same */
        float mine[80 * 201];
        gen_mel_filters(80, mine);
        const float *mf = wkv_model_mel_filters(m);
        double d = 0;
        for (int i = 0; i < 80 * 201; i++)
            if (fabsf(mine[i] - mf[i]) > d)
                d = fabsf(mine[i] - mf[i]);
        CHECK(d < 1e-6, "%s: mel filters differ from the computed ones by %g", rel, d);
        wkv_model_free(m);
    }
    expect_fail_path(path, "no tensors (vocabulary-only file?)", rel);
}

static void check_shared(void)
{
    check_shared_vocab("models/for-tests-ggml-tiny.en.bin", 51864, 384, 4);
    check_shared_vocab("models/for-tests-ggml-tiny.bin", 51865, 384, 4);
    check_shared_vocab("models/for-tests-ggml-base.en.bin", 51864, 512, 6);

    /* the reference test-vector models load whole */
    static const char *const tv[2] = {"testvectors/micro-en/model.bin",
                                      "testvectors/micro-multi/model.bin"};
    for (int i = 0; i < 2; i++) {
        char *err = NULL;
        wkv_model *m = wkv_model_load(tu_shared_path(tv[i]), &err);
        CHECK(m != NULL, "%s: %s", tv[i], err ? err : "?");
        if (m) {
            const wkv_hparams *hp = wkv_model_hparams(m);
            CHECK(hp->n_vocab == 51864 + i && hp->n_audio_state == 64 && hp->n_audio_layer == 2 &&
                      hp->ftype == 1,
                  "%s: hparams", tv[i]);
            CHECK(m->w.tok.type == WKV_TYPE_F16 && m->w.tok.data &&
                      m->w.dec[1].mlp2.type == WKV_TYPE_F16 && m->w.dec[1].cross_o_b &&
                      m->w.enc[1].mlp2_b && m->w.enc[1].mlp2.type == WKV_TYPE_F16 &&
                      !m->w.enc[1].mlp2_w,
                  "%s: pointers", tv[i]);
        }
        wkv_model_free(m);
        free(err);
    }

    /* a generated model with a real vocabulary */
    gen_params p;
    gen_params_preset(&p, "micro");
    char src[4096];
    snprintf(src, sizeof src, "%s", tu_shared_path("models/for-tests-ggml-tiny.bin"));
    p.vocab_from = src;
    char out[512];
    path_in(out, sizeof out, "vocab-from.bin");
    char *err = NULL;
    CHECK(gen_model_write(out, &p, &err) == 0, "gen --vocab-from: %s", err ? err : "?");
    free(err);
    err = NULL;
    wkv_model *m = wkv_model_load(out, &err);
    wkv_model *v = wkv__model_load_vocab_only(src, NULL);
    CHECK(m != NULL && v != NULL, "vocab-from model: %s", err ? err : "?");
    if (m && v) {
        CHECK(m->hp.n_vocab == 51865 && m->n_tokens == v->n_tokens, "vocab-from: n_vocab");
        int same = 1;
        for (int id = 0; id < v->n_tokens && same; id++)
            same = m->tok_len[id] == v->tok_len[id] &&
                   memcmp(m->tok_bytes + m->tok_off[id], v->tok_bytes + v->tok_off[id],
                          v->tok_len[id]) == 0;
        CHECK(same, "vocab-from: tokens differ from the source file");
        CHECK(memcmp(m->mel_filters, v->mel_filters, 80 * 201 * sizeof(float)) == 0,
              "vocab-from: mel filters differ");
    }
    wkv_model_free(m);
    wkv_model_free(v);
    free(err);
    remove(out);
}

/* ---------------------------------------------------------------- main */

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(g_dir, sizeof g_dir, "%s/wkv-loader-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(g_dir)) {
        perror("mkdtemp");
        return 1;
    }
    const char *q = getenv("WKV_LOADER_QUIET");
    g_verbose = !(q && *q && strcmp(q, "0") != 0);

    printf("valid models\n");
    check_valid("f32 micro", 0, 51864, 80, 0);
    check_valid("f16 micro", 1, 51864, 80, 0);
    check_valid("f16 multilingual", 1, 51865, 80, 0);
    check_valid("f32 large-v3 layout", 0, 51866, 128, 1);
    printf("malformed models\n");
    check_malformed();
    printf("truncated models\n");
    check_truncations();
    printf("quantized models\n");
    check_quantized();
    printf("limits\n");
    check_limits(g_dir);

    int shared = tu_shared_dir() != NULL;
    if (shared) {
        printf("shared files\n");
        check_shared();
    }
    rmdir(g_dir);
    if (!shared) {
        tu_finish("loader");
        if (tu_failures)
            return 1;
        tu_require_shared("loader: vocabulary-only files and test-vector models");
    }
    return tu_finish("loader");
}
