/* quant: quantized whisper.cpp models (q8_0, q5_1, q5_0, q4_1, q4_0) load with the
 * decoder's per-token matrices kept in their blocks (byte for byte the file's) and
 * the rest dequantized into the f32 arena.  For each type a micro model is generated from the
 * same seed as an f32 original (tests/genlib.c quantizes the f32 values the way
 * whisper.cpp's quantizer does); both are loaded and compared:
 *   (a) every weight: quantized matrices within their block's bound (below), the conv
 *       weights equal to the f16 rounding of the original and kept in the file's f16
 *       (never widened), every f32 tensor exact;
 *   (b) the encoder output and the logits of a short token sequence after encoding the
 *       same mel, as max |x - x'| / max |x| against a per-type tolerance.
 * Then the same for a tiny-size q8_0 model (WKV_QUANT_TINY=0 skips it).
 *
 * The per-element bound.  With d (and m) the block's stored f16 scale (and minimum),
 * a value x inside the block's representable range [lo, hi] (q8_0: +-127 d; q4_0:
 * [-8 d, 7 d]; q5_0: [-16 d, 15 d]; q4_1: [m, m + 15 d]; q5_1: [m, m + 31 d]) is
 * within |d| / 2 of its dequantized value (round to nearest).  Only the symmetric
 * 4/5-bit types can hold a value outside the range: their scale maps the signed
 * maximum to the bottom code, so a value of the opposite sign and nearly the same
 * magnitude lands past the top code and is clamped to it; its error is |d| / 2 plus
 * its distance to the range.  On top comes the rounding of d and m to f16 (the
 * quantizer rounds with the f32 scale): |q| |d| 2^-11 + |m| 2^-11, allowed here with
 * a factor 2. */
#include "genlib.h"
#include "base/util.h"
#include "model/model.h"
#include "model/quant.h"
#include "testutil.h"
#include "weight_lookup.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char g_dir[256];

/* ---------------------------------------------------------------- weights by name */

/* ---------------------------------------------------------------- helpers */

static float f16_at(const uint8_t *p)
{
    return gen_f16_to_f32((uint16_t)(p[0] | p[1] << 8));
}

static wkv_model *load_built(const gen_params *p, const char *name, uint8_t **data,
                             gen_layout *lay)
{
    char path[512], *err = NULL;
    size_t size;
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    if (gen_model_build(p, data, &size, lay, &err)) {
        CHECK(0, "%s: generator: %s", name, err ? err : "?");
        free(err);
        return NULL;
    }
    if (gen_write_file(path, *data, size)) {
        CHECK(0, "%s: cannot write %s", name, path);
        return NULL;
    }
    double t0 = wkv__now_ms();
    wkv_model *m = wkv_model_load(path, &err);
    double t1 = wkv__now_ms();
    CHECK(m != NULL, "%s: load failed: %s", name, err ? err : "?");
    if (m)
        printf("  %-16s %8.1f MB file, loaded in %.0f ms\n", name, (double)size / 1e6,
               t1 - t0);
    free(err);
    remove(path);
    return m;
}

/* ---------------------------------------------------------------- (a) weights */

typedef struct {
    double max_err_d;     /* max |x - x'| / |d| over elements inside the range */
    double max_abs;       /* max |x - x'| over quantized elements */
    double sum_sq, sum_ref_sq;
    size_t n_quant, n_clamped, n_bad, n_other_bad;
    size_t n_kept, kept_bytes; /* elements and bytes of the matrices kept in blocks */
} weight_stats;

/* rel: the relative rounding the loaded copy may add on top of the dequantization
 * (2^-11 for decoder matrices kept in f16, else 0) */
static void check_quant_tensor(const gen_tensor_info *t, const uint8_t *data,
                               const float *orig, const float *got, double rel,
                               weight_stats *st)
{
    const int type = t->type;
    const size_t bb = gen_quant_block_bytes(type);
    const size_t n_blocks = (size_t)t->ne[0] * (size_t)t->ne[1] / 32;
    const uint8_t *blk = data + t->data_off;
    CHECK(t->data_bytes == n_blocks * bb, "%s: %llu data bytes for %zu blocks", t->name,
          (unsigned long long)t->data_bytes, n_blocks);
    for (size_t b = 0; b < n_blocks; b++, blk += bb) {
        double d = f16_at(blk), m = 0, lo, hi, top;
        switch (type) {
        case 8: lo = -127 * d; hi = 127 * d; top = 127; break;
        case 2: lo = -8 * d; hi = 7 * d; top = 8; break;
        case 6: lo = -16 * d; hi = 15 * d; top = 16; break;
        case 3: m = f16_at(blk + 2); lo = m; hi = m + 15 * d; top = 15; break;
        default: m = f16_at(blk + 2); lo = m; hi = m + 31 * d; top = 31; break; /* q5_1 */
        }
        if (lo > hi) {
            double s = lo;
            lo = hi;
            hi = s;
        }
        const double ad = fabs(d);
        const double slack = (top * ad + fabs(m)) * ldexp(1.0, -10) + 1e-7;
        for (int j = 0; j < 32; j++) {
            size_t i = b * 32 + (size_t)j;
            double x = orig[i], e = fabs((double)got[i] - x);
            double out = x < lo ? lo - x : x > hi ? x - hi : 0.0;
            if (out > slack) /* past the range by more than the f16 rounding of d */
                st->n_clamped++;
            else if (ad > 0 && e / ad > st->max_err_d)
                st->max_err_d = e / ad;
            if (e > st->max_abs)
                st->max_abs = e;
            st->sum_sq += e * e;
            st->sum_ref_sq += x * x;
            if (!(e <= 0.5 * ad + out + slack + rel * fabs((double)got[i]))) {
                if (st->n_bad < 5)
                    fprintf(stderr, "  %s[%zu]: %.8g -> %.8g, d %.6g m %.6g\n", t->name, i, x,
                            (double)got[i], d, m);
                st->n_bad++;
            }
        }
        st->n_quant += 32;
    }
}

static void check_weights(const wkv_model *fm, const wkv_model *qm, const uint8_t *data,
                          const gen_layout *lay, int qtype, weight_stats *st)
{
    memset(st, 0, sizeof *st);
    int n_q = 0;
    for (int k = 0; k < lay->n_tensors; k++) {
        const gen_tensor_info *t = &lay->tensors[k];
        size_t count = 1;
        for (int i = 0; i < t->n_dims; i++)
            count *= (size_t)t->ne[i];
        const float *orig = weight_for(fm, t->name), *got = weight_for(qm, t->name);
        const uint16_t *half = half_for(qm, t->name);
        const uint8_t *blocks = blocks_for(qm, t->name);
        float *wide = NULL;
        if (!got && half && (wide = malloc(count * sizeof *wide)) != NULL) {
            for (size_t i = 0; i < count; i++)
                wide[i] = gen_f16_to_f32(half[i]);
            got = wide;
            /* the convolutions are kept as the file stores them (f16), with the blocks */
            const uint8_t *h8 = (const uint8_t *)half;
            if (qm->arenaq && h8 >= qm->arenaq && h8 + count * 2 <= qm->arenaq + qm->arenaq_bytes) {
                CHECK(t->data_bytes == count * 2 && memcmp(h8, data + t->data_off, count * 2) == 0,
                      "%s: kept f16 differs from the file's", t->name);
                st->n_kept += count;
                st->kept_bytes += count * 2;
            }
        }
        if (!got && blocks && (wide = malloc(count * sizeof *wide)) != NULL) {
            /* kept as the file stores them: the same bytes, in the blocks' arena */
            CHECK(blocks >= qm->arenaq && blocks + t->data_bytes <= qm->arenaq + qm->arenaq_bytes &&
                      memcmp(blocks, data + t->data_off, t->data_bytes) == 0,
                  "%s: blocks differ from the file's or lie outside the arena", t->name);
            wkv__row_to_f32(t->type, blocks, wide, count);
            st->n_kept += count;
            st->kept_bytes += t->data_bytes;
            got = wide;
        }
        if (!orig || !got) {
            CHECK(0, "no pointer for %s", t->name);
            free(wide);
            continue;
        }
        if (t->type == qtype) {
            CHECK(t->n_dims == 2, "%s: quantized with %d dims", t->name, t->n_dims);
            check_quant_tensor(t, data, orig, got, half ? ldexp(1.0, -11) : 0.0, st);
            n_q++;
        } else if (t->type == 1) {
            CHECK(t->n_dims == 3, "%s: f16 in a quantized file but not a conv weight",
                  t->name);
            for (size_t i = 0; i < count; i++)
                st->n_other_bad += gen_f16_to_f32(gen_f32_to_f16(orig[i])) != got[i];
        } else {
            CHECK(t->type == 0, "%s: type %d", t->name, t->type);
            st->n_other_bad += memcmp(orig, got, count * sizeof *got) != 0;
        }
        free(wide);
    }
    /* whisper.cpp quantizes 4 attention matrices per attention, 2 MLP matrices per
     * block and the token embedding */
    int want = 1 + 6 * qm->hp.n_audio_layer + 10 * qm->hp.n_text_layer;
    CHECK(n_q == want, "%d quantized tensors, expected %d", n_q, want);
    CHECK(st->n_bad == 0, "%zu of %zu dequantized values outside their bound", st->n_bad,
          st->n_quant);
    CHECK(st->n_other_bad == 0, "%zu unquantized values or tensors differ", st->n_other_bad);
}

/* ---------------------------------------------------------------- (b) outputs */

static uint32_t rng_state = 2024;
static uint32_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 17;
    rng_state ^= rng_state << 5;
    return rng_state;
}

static float *make_window(const wkv_model *m)
{
    size_t n = 16000 * 5;
    float *pcm = malloc(n * sizeof *pcm);
    rng_state = 2024;
    for (size_t i = 0; i < n; i++)
        pcm[i] = 0.3f * sinf(2 * (float)M_PI * 300.0f * (float)i / 16000) +
                 0.1f * sinf(2 * (float)M_PI * 1700.0f * (float)i / 16000) +
                 0.05f * ((float)(rnd() % 2001) / 1000.0f - 1.0f);
    wkv_mel *mel = wkv_mel_compute(m, pcm, n, 1, NULL);
    float *w = malloc((size_t)m->hp.n_mels * WKV_N_FRAMES * sizeof *w);
    wkv_mel_window(mel, 0, (int)mel->content_frames, WKV_MEL_GLOBAL, w);
    wkv_mel_free(mel);
    free(pcm);
    return w;
}

#define N_SEQ 6

/* Encoder output and the logits after each of N_SEQ tokens. */
static int run(const wkv_model *m, const float *window, float **enc, float **logits)
{
    const wkv_hparams *hp = wkv_model_hparams(m);
    const wkv_specials *sp = wkv_model_specials(m);
    wkv_context *ctx = wkv_context_new(m, 2, NULL);
    if (!ctx)
        return -1;
    size_t ne = (size_t)hp->n_audio_ctx * hp->n_audio_state;
    *enc = malloc(ne * sizeof **enc);
    *logits = malloc((size_t)N_SEQ * hp->n_vocab * sizeof **logits);
    int rc = wkv_encode(ctx, window);
    if (rc == 0)
        memcpy(*enc, wkv_encoder_output(ctx), ne * sizeof **enc);
    int seq[N_SEQ] = {sp->sot, sp->transcribe, sp->notimestamps, 1000, 22000, 7};
    if (sp->transcribe <= 0)
        seq[1] = sp->timestamp_begin;
    for (int i = 0; rc == 0 && i < N_SEQ; i++)
        rc = wkv_decode(ctx, &seq[i], 1, *logits + (size_t)i * hp->n_vocab);
    wkv_context_free(ctx);
    return rc;
}

/* ---------------------------------------------------------------- one type */

typedef struct {
    const char *name;
    double logit_tol; /* max |logit - logit'| / max |logit| */
} qcase;

static void check_type(const char *size, const qcase *qc, double *enc_err, double *log_err)
{
    gen_params p;
    gen_params_preset(&p, size);
    p.seed = 7;
    p.ftype = 0;
    uint8_t *fdata = NULL, *qdata = NULL;
    gen_layout flay, qlay;
    memset(&flay, 0, sizeof flay);
    memset(&qlay, 0, sizeof qlay);
    char fname[64], qname[64];
    snprintf(fname, sizeof fname, "%s-f32", size);
    snprintf(qname, sizeof qname, "%s-%s", size, qc->name);
    printf("%s %s\n", size, qc->name);
    wkv_model *fm = load_built(&p, fname, &fdata, &flay);
    free(fdata);
    gen_layout_free(&flay);
    p.ftype = gen_ftype_parse(qc->name);
    wkv_model *qm = load_built(&p, qname, &qdata, &qlay);
    if (fm && qm) {
        CHECK(qm->hp.ftype == 2000 + p.ftype, "ftype %d", qm->hp.ftype);
        weight_stats st;
        check_weights(fm, qm, qdata, &qlay, gen_quant_type(p.ftype), &st);
        /* the matrices are kept in their blocks and the convolutions in their f16
         * (model.c), the rest is f32: nothing of the model twice, nothing narrowed */
        CHECK(st.n_kept > 0 && qm->arena16_halves == 0 && qm->arenaq_bytes == st.kept_bytes &&
                  qm->arena_floats + st.n_kept == fm->arena_floats,
              "arenas %zu floats + %zu halves + %zu bytes of blocks (%zu elements), f32 model "
              "%zu floats", qm->arena_floats, qm->arena16_halves, qm->arenaq_bytes, st.n_kept,
              fm->arena_floats);
        CHECK(qm->w.conv1.type == WKV_TYPE_F16 && qm->w.conv2.type == WKV_TYPE_F16 &&
                  !qm->w.conv1_w && !qm->w.conv2_w,
              "the convolutions are not kept in the file's f16 (types %d, %d)",
              (int)qm->w.conv1.type, (int)qm->w.conv2.type);
        printf("  weights: %zu quantized values, max error %.3f d inside the range, "
               "%zu clamped past it, max |x - x'| %.3g, rms relative %.3g\n",
               st.n_quant, st.max_err_d, st.n_clamped, st.max_abs,
               sqrt(st.sum_sq / (st.sum_ref_sq > 0 ? st.sum_ref_sq : 1)));
        float *window = make_window(fm);
        float *fe = NULL, *fl = NULL, *qe = NULL, *ql = NULL;
        CHECK(run(fm, window, &fe, &fl) == 0, "f32 run");
        CHECK(run(qm, window, &qe, &ql) == 0, "%s run", qc->name);
        size_t ne = (size_t)fm->hp.n_audio_ctx * fm->hp.n_audio_state;
        size_t nl = (size_t)N_SEQ * fm->hp.n_vocab;
        *enc_err = tu_rel_err(qe, fe, ne);
        *log_err = tu_rel_err(ql, fl, nl);
        /* the f32 argmax of the last step against the quantized one, for the record */
        size_t nv = (size_t)fm->hp.n_vocab, af = 0, aq = 0;
        const float *lf = fl + (N_SEQ - 1) * nv, *lq = ql + (N_SEQ - 1) * nv;
        for (size_t i = 1; i < nv; i++) {
            if (lf[i] > lf[af])
                af = i;
            if (lq[i] > lq[aq])
                aq = i;
        }
        printf("  encoder output relative error %.3g; logits relative error %.3g "
               "(tolerance %.3g); last-step argmax f32 %zu, %s %zu\n",
               *enc_err, *log_err, qc->logit_tol, af, qc->name, aq);
        CHECK(*log_err <= qc->logit_tol, "%s %s: logits relative error %.4g > %.4g", size,
              qc->name, *log_err, qc->logit_tol);
        CHECK(*enc_err <= qc->logit_tol, "%s %s: encoder relative error %.4g > %.4g", size,
              qc->name, *enc_err, qc->logit_tol);
        free(window);
        free(fe);
        free(fl);
        free(qe);
        free(ql);
    }
    wkv_model_free(fm);
    wkv_model_free(qm);
    free(qdata);
    gen_layout_free(&qlay);
}

/* quant.h's table against the generator's own (tests/genlib.c, written apart from it):
 * the same names, ftypes, tensor types and block sizes, and both tables list the same
 * types; every block type has a case below (its tolerance is measured, so it is
 * written there).  The list of names is spelled out once more here, for the places
 * that cannot read the table (quant.h lists them: the element's "model" blurb,
 * tools/outputs.sh, the docs), which must change with it. */
static void check_tables(const qcase *cases, size_t n_cases)
{
    int n_core = 0, n_gen = 0;
    for (int t = 0; t <= WKV_TYPE_MAX; t++) {
        const wkv__qtype *q = wkv__qtype_of(t);
        if (!q)
            continue;
        n_core++;
        const wkv__qtype *byf = wkv__qtype_of_ftype(q->ftype);
        CHECK(q->type == t && byf && byf->type == t, "%s: row %d says type %d, ftype %d",
              q->name, t, q->type, q->ftype);
        CHECK(gen_ftype_parse(q->name) == q->ftype, "%s: ftype %d in the core, %d in genlib",
              q->name, q->ftype, gen_ftype_parse(q->name));
        if (q->block_elems == 1) {
            CHECK(gen_quant_type(q->ftype) < 0 && !wkv__quant_block_bytes(t) &&
                      q->block_bytes == (t == WKV_TYPE_F32 ? 4 : 2) && !q->code_bits,
                  "%s: not an f32/f16 row", q->name);
            continue;
        }
        CHECK(q->block_elems == WKV_QK && gen_quant_type(q->ftype) == t &&
                  gen_quant_block_bytes(t) == (size_t)q->block_bytes &&
                  wkv__quant_block_bytes(t) == (size_t)q->block_bytes,
              "%s: type %d, %d bytes a block in the core; genlib: type %d, %zu bytes", q->name,
              t, q->block_bytes, gen_quant_type(q->ftype), gen_quant_block_bytes(t));
        size_t c = 0;
        while (c < n_cases && strcmp(cases[c].name, q->name) != 0)
            c++;
        CHECK(c < n_cases, "%s has no case (and tolerance) in test_quant", q->name);
    }
    for (int f = 0; f < 1000; f++)
        if (gen_ftype_name(f)) {
            n_gen++;
            const wkv__qtype *q = wkv__qtype_of_ftype(f);
            CHECK(q && strcmp(q->name, gen_ftype_name(f)) == 0,
                  "genlib's ftype %d (%s) is not in the core's table", f, gen_ftype_name(f));
        }
    CHECK(n_core == n_gen, "%d types in the core's table, %d in genlib's", n_core, n_gen);
    char list[160];
    wkv__qtype_list(list, sizeof list, WKV_QLIST_NAMES);
    CHECK(strcmp(list, "f32, f16, q4_0, q4_1, q5_0, q5_1 or q8_0") == 0,
          "the table's types are now %s: update the places quant.h says spell them out "
          "(the element's model blurb, tools/outputs.sh, the docs) and this check", list);
    printf("tables: %d types, the core's and genlib's agree (%s)\n", n_core, list);
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(g_dir, sizeof g_dir, "%s/wkv-quant-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(g_dir)) {
        perror("mkdtemp");
        return 1;
    }
    /* Tolerances: 1.7 to 2 times the errors measured on these deterministic models
     * (micro, seed 7: logits q8_0 0.015, q5_1 0.149, q5_0 0.123, q4_1 0.226, q4_0
     * 0.238; encoder output 0.011, 0.077, 0.073, 0.161, 0.198).  Random weights have
     * no structure to absorb the error, so it grows through the layers: the rms
     * relative weight error is 0.005 (q8_0), 0.04 (q5), 0.08 (q4).  The exact check
     * of the dequantization is (a); (b) catches a wrong block layout, which looks like
     * an unrelated model (relative errors ~1): the baseline below (another seed) must
     * stay above twice every tolerance. */
    static const qcase cases[] = {
        {"q8_0", 3e-2}, {"q5_1", 2.5e-1}, {"q5_0", 2.5e-1}, {"q4_1", 4e-1}, {"q4_0", 4e-1},
    };
    enum { N_CASES = sizeof cases / sizeof *cases };
    check_tables(cases, N_CASES);
    {
        /* baseline: the f32 model of seed 7 against that of seed 8 */
        gen_params p;
        gen_params_preset(&p, "micro");
        p.ftype = 0;
        p.seed = 7;
        uint8_t *d1 = NULL, *d2 = NULL;
        gen_layout l1, l2;
        memset(&l1, 0, sizeof l1);
        memset(&l2, 0, sizeof l2);
        printf("baseline: unrelated weights\n");
        wkv_model *a = load_built(&p, "micro-seed7", &d1, &l1);
        p.seed = 8;
        wkv_model *b = load_built(&p, "micro-seed8", &d2, &l2);
        if (a && b) {
            float *window = make_window(a);
            float *ae = NULL, *al = NULL, *be = NULL, *bl = NULL;
            CHECK(run(a, window, &ae, &al) == 0 && run(b, window, &be, &bl) == 0,
                  "baseline runs");
            double ee = tu_rel_err(be, ae, (size_t)a->hp.n_audio_ctx * a->hp.n_audio_state);
            double le = tu_rel_err(bl, al, (size_t)N_SEQ * a->hp.n_vocab);
            printf("  seed 8 vs seed 7: encoder output relative error %.3g, logits %.3g\n",
                   ee, le);
            for (int i = 0; i < N_CASES; i++)
                CHECK(cases[i].logit_tol * 2 < le && cases[i].logit_tol * 2 < ee,
                      "the %s tolerance %.3g does not separate from unrelated weights "
                      "(%.3g, %.3g)", cases[i].name, cases[i].logit_tol, ee, le);
            free(window);
            free(ae);
            free(al);
            free(be);
            free(bl);
        }
        wkv_model_free(a);
        wkv_model_free(b);
        free(d1);
        free(d2);
        gen_layout_free(&l1);
        gen_layout_free(&l2);
    }
    double enc[N_CASES], lg[N_CASES];
    for (int i = 0; i < N_CASES; i++)
        check_type("micro", &cases[i], &enc[i], &lg[i]);
    printf("\nmeasured relative errors (micro, seed 7):\n");
    for (int i = 0; i < N_CASES; i++)
        printf("  %-5s encoder %.4g  logits %.4g  (tolerance %.3g)\n", cases[i].name, enc[i],
               lg[i], cases[i].logit_tol);
    const char *t = getenv("WKV_QUANT_TINY");
    if (!(t && strcmp(t, "0") == 0)) {
        static const qcase tiny = {"q8_0", 3e-2}; /* measured 0.014 */
        double e, l;
        check_type("tiny", &tiny, &e, &l);
    }
    rmdir(g_dir);
    return tu_finish("quant");
}
