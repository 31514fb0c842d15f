/* compute: the encoder on each compute type against f32, on plain random models
 * (gen_params_preset, no wide activations) of tiny and base size.
 *  - bf16's output within 1e-2 and int8's within 3e-2 relative (Frobenius) of f32's,
 *    and not equal to it (the other type really ran); int8 so with its P . V in f32
 *    and in bf16, the CPU's default first (f32 without AVX512_BF16), the two outputs
 *    different;
 *  - the window's cross-attention K/V, which the type computes too, within the same
 *    bounds of the f32 projection of that type's own encoder output (and not equal),
 *    kept in half: every value the type's f32 result rounded (f32 again on f32);
 *  - at base, the type's scratch is smaller than its copy of every encoder layer
 *    would be (layers are converted one at a time, compute.h);
 *  - back on f32 the output is bit-identical to a context that never left f32;
 *  - "auto" is f32 on an f16 file;
 *  - bf16 is refused on a CPU without AVX512_BF16 (oneDNN would emulate it, slower
 *    than f32) and int8 on one without VNNI;
 *  - without oneDNN, bf16 and int8 fail with an error naming oneDNN;
 *  - no product fell back to f32 on the way (wkv__compute_fallbacks), and with every
 *    product made to fail (wkv__compute_force_fallback) the fallbacks give the f32
 *    encoder's output bit for bit (under ASan: in the f32 path's widening slots);
 *  - the attention's probabilities in bf16 (wkv__softmax_exp_bf16, every ISA path):
 *    each the bf16 rounding of a value within 5e-6 of e^(x - max), the sum within 1e-5
 *    of the exact one (values below the normal floats: under 2^-125), rows of every
 *    length mod 16, -inf keys among them, a row of only -inf all 0;
 *  - the activations' rounding to bf16 (wkv__to_bf16, every ISA path) is wkv__bf16's,
 *    bit for bit, on normal values, NaN, infinities, midpoints and every tail length;
 *    subnormal results 0 or wkv__bf16's.
 * Bounded, not timed; the figures printed here are the ones in docs/performance.md. */
#include "net/context.h"
#include "cpu/cpu.h" /* the CPU backend's compute type (wkv__cpu_compute) */
#include "base/cpu.h"
#include "base/f16.h"
#include "kernels/ops.h"
#include "random_model.h"
#include "testutil.h"
#include "whisperkv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef WKV_TEST_DNNL /* only the oneDNN build compares types */
static double rel_error(const float *a, const float *ref, size_t n)
{
    double num = 0.0, den = 0.0;
    for (size_t i = 0; i < n; i++) {
        double e = (double)a[i] - ref[i];
        num += e * e;
        den += (double)ref[i] * ref[i];
    }
    return den > 0.0 ? sqrt(num / den) : sqrt(num);
}

/* The context's cross K (layer 0) against enc . W_k^T in double with the f32 (widened)
 * weights: how far the compute type's projection is from the exact one. */
static double cross_k_error(const wkv_context *ctx)
{
    const int T = ctx->cross.n_ctx, d = ctx->cross.n_state;
    float *w = malloc((size_t)d * d * sizeof *w);
    const float *wk = wkv__mat_f32(&ctx->model->w.dec[0].cross_k, (size_t)d * d, w);
    float *k = malloc(2 * (size_t)T * d * sizeof *k); /* K, and V when widened */
    const float *enc = wkv_encoder_output(ctx), *kc, *vc;
    wkv__cross_layer_f32(&ctx->cross, 0, k, NULL, &kc, &vc);
    if (kc != k)
        memcpy(k, kc, (size_t)T * d * sizeof *k);
    double num = 0.0, den = 0.0;
    for (int t = 0; t < T; t++)
        for (int o = 0; o < d; o++) {
            double r = 0.0;
            for (int i = 0; i < d; i++)
                r += (double)enc[(size_t)t * d + i] * wk[(size_t)o * d + i];
            double e = k[(size_t)t * d + o] - r;
            num += e * e;
            den += r * r;
        }
    free(w);
    free(k);
    return sqrt(num / (den > 0.0 ? den : 1.0));
}
#endif

#ifdef WKV_TEST_DNNL
/* int8's P . V both ways (compute.h, wkv__compute_set_pv_f32): the CPU's default (f32
 * without AVX512_BF16), then the other; each within int8's bound of f32, with no
 * product fallen back, and the two different (each really ran). */
static void pv_both_ways(wkv_context *ctx, const float *mel, const float *ref, size_t n_out,
                         double bound, const char *size)
{
    wkv__compute *c = wkv__cpu_compute(ctx->encoder);
    /* fallbacks are counted since c was made: the force-fallback run's are in */
    const int dflt = wkv__compute_pv_f32(c), fell = wkv__compute_fallbacks(c);
    CHECK(dflt == (wkv__bf16_isa() < WKV_ISA_AVX512_BF16),
          "%s int8: P . V in %s by default, with bf16 isa %d", size, dflt ? "f32" : "bf16",
          wkv__bf16_isa());
    float *first = malloc(n_out * sizeof *first);
    for (int k = 0; k < 2; k++) {
        const int pv_f32 = k ? !dflt : dflt;
        wkv__compute_set_pv_f32(c, pv_f32);
        CHECK(wkv_encode(ctx, mel) == 0, "%s int8 encode, P . V in %s", size,
              pv_f32 ? "f32" : "bf16");
        const float *o = wkv_encoder_output(ctx);
        double e = rel_error(o, ref, n_out);
        printf("%s int8, P . V in %s: encoder output relative error %.3g\n", size,
               pv_f32 ? "f32" : "bf16", e);
        CHECK(e <= bound && e > 0.0 && wkv__compute_fallbacks(c) == fell,
              "%s int8, P . V in %s: relative error %g, %d new fallbacks", size,
              pv_f32 ? "f32" : "bf16", e, wkv__compute_fallbacks(c) - fell);
        if (k == 0)
            memcpy(first, o, n_out * sizeof *first);
        else
            CHECK(memcmp(first, o, n_out * sizeof *first) != 0,
                  "%s int8: P . V in f32 and in bf16 gave the same output", size);
    }
    wkv__compute_set_pv_f32(c, dflt);
    CHECK(wkv_encode(ctx, mel) == 0, "%s int8 encode, default P . V", size);
    free(first);
}
#endif

static void check_size(const char *size)
{
    wkv_model *model = tu_random_model(size);
    if (!model)
        return;
    const wkv_hparams *hp = wkv_model_hparams(model);
    size_t n_out = (size_t)hp->n_audio_ctx * hp->n_audio_state;
    float *mel = tu_random_mel(hp, 7), *ref = malloc(n_out * sizeof *ref);
    char *err = NULL;
    wkv_context *ctx = wkv_context_new(model, 2, &err);
    CHECK(ctx != NULL, "%s", err ? err : "");
    CHECK(wkv_context_set_compute_type(ctx, WKV_COMPUTE_AUTO, &err) == 0 &&
              wkv_context_compute_type(ctx) == WKV_COMPUTE_F32,
          "auto on an f16 file is %s", wkv_compute_type_name(wkv_context_compute_type(ctx)));
    CHECK(wkv_encode(ctx, mel) == 0, "f32 encode");
    memcpy(ref, wkv_encoder_output(ctx), n_out * sizeof *ref);

    const struct {
        wkv_compute_type type;
        double bound;
    } types[] = {{WKV_COMPUTE_BF16, 1e-2}, {WKV_COMPUTE_INT8, 3e-2}};
    for (int t = 0; t < 2; t++) {
        const char *name = wkv_compute_type_name(types[t].type);
        free(err);
        err = NULL;
#ifdef WKV_TEST_DNNL
        const int here = tu_compute_here(ctx, types[t].type, size);
        CHECK(here == wkv_compute_type_available(types[t].type),
              "%s %s: set %d, but wkv_compute_type_available says %d", size, name, here,
              wkv_compute_type_available(types[t].type));
        /* refused where oneDNN would emulate bf16 or saturate int8's pair sums */
        const int native = types[t].type == WKV_COMPUTE_BF16
                               ? wkv__bf16_isa() >= WKV_ISA_AVX512_BF16
                               : wkv__cpu_vnni();
        CHECK(!here || native, "%s %s ran on a CPU without %s", size, name,
              types[t].type == WKV_COMPUTE_BF16 ? "AVX512_BF16" : "VNNI");
        if (!here)
            continue; /* this CPU lacks the type's instructions (printed) */
        CHECK(wkv_encode(ctx, mel) == 0, "%s encode", name);
        double e = rel_error(wkv_encoder_output(ctx), ref, n_out);
        printf("%s %s: encoder output relative error %.3g (bound %.0e)\n", size, name, e,
               types[t].bound);
        CHECK(e <= types[t].bound && e > 0.0, "%s %s: relative error %g", size, name, e);
        /* every product ran on the type: an f32 fallback would pass the bound above */
        CHECK(wkv__compute_fallbacks(wkv__cpu_compute(ctx->encoder)) == 0, "%s %s: %d products fell back to f32",
              size, name, wkv__compute_fallbacks(wkv__cpu_compute(ctx->encoder)));
        /* every product failing: the fallbacks (weights widened on demand into the
         * f32 path's slots, f32 softmax) give the f32 encoder bit for bit */
        wkv__compute_force_fallback(wkv__cpu_compute(ctx->encoder), 1);
        CHECK(wkv_encode(ctx, mel) == 0, "%s %s encode, all products failing", size, name);
        size_t diff = 0;
        for (size_t i = 0; i < n_out; i++)
            diff += memcmp(wkv_encoder_output(ctx) + i, ref + i, sizeof *ref) != 0;
        CHECK(diff == 0 && wkv__compute_fallbacks(wkv__cpu_compute(ctx->encoder)) > 0,
              "%s %s, every product failing: %zu of %zu outputs differ from f32 (%d fallbacks)",
              size, name, diff, n_out, wkv__compute_fallbacks(wkv__cpu_compute(ctx->encoder)));
        wkv__compute_force_fallback(wkv__cpu_compute(ctx->encoder), 0);
        CHECK(wkv_encode(ctx, mel) == 0, "%s %s encode again", size, name);
        /* the half cache holds the compute type's f32 results rounded: the last
         * layer's are still in the stage (kv_cache.h) */
        const wkv__cross_kv *c = &ctx->cross;
        const size_t nd = (size_t)c->n_ctx * c->n_state;
        size_t off = 0;
        for (int kv = 0; wkv__cross_half(c) && kv < 2; kv++) {
            const uint16_t *h = kv ? wkv__cross_v16(c, c->n_layer - 1) : wkv__cross_k16(c, c->n_layer - 1);
            for (size_t i = 0; i < nd; i++)
                off += h[i] != wkv__f32_to_f16(ctx->enc_mlp[kv * nd + i]);
        }
        CHECK(wkv__cross_half(c) && off == 0, "%s %s: half cross cache %d, %zu values not the "
              "rounded results", size, name, wkv__cross_half(c), off);
        /* no second copy of the encoder: the type's scratch (one layer's converted
         * weights, the convolutions', attention's K/V, the parts' buffers) stays below
         * all layers converted; at base only, where six layers outweigh the fixed
         * buffers (tiny's four do not) */
        size_t scratch = wkv__compute_scratch_bytes(wkv__cpu_compute(ctx->encoder));
        size_t dd = (size_t)hp->n_audio_state * hp->n_audio_state;
        size_t whole = (size_t)hp->n_audio_layer * 12 * dd *
                       (types[t].type == WKV_COMPUTE_BF16 ? 2 : 1);
        printf("%s %s: compute scratch %.1f MB, the encoder's layers converted %.1f MB\n",
               size, name, scratch / 1048576.0, whole / 1048576.0);
        CHECK(scratch > 0 && (strcmp(size, "base") || scratch < whole),
              "%s %s: compute scratch %zu bytes, not below a whole copy (%zu)", size, name,
              scratch, whole);
        if (types[t].type == WKV_COMPUTE_INT8)
            pv_both_ways(ctx, mel, ref, n_out, types[t].bound, size);
        double ek = cross_k_error(ctx);
        printf("%s %s: cross K relative error %.3g\n", size, name, ek);
        CHECK(ek <= types[t].bound && ek > 1e-5, "%s %s: cross K relative error %g", size,
              name, ek);
#else
        int rc = wkv_context_set_compute_type(ctx, types[t].type, &err);
        CHECK(rc == -1 && err && strstr(err, "oneDNN") &&
                  wkv_context_compute_type(ctx) == WKV_COMPUTE_F32,
              "%s without oneDNN: rc %d, %s", name, rc, err ? err : "(no error)");
#endif
    }
    CHECK(wkv_context_set_compute_type(ctx, WKV_COMPUTE_F32, &err) == 0 && !wkv__cross_half(&ctx->cross),
          "back to f32, with an f32 cross cache");
    CHECK(wkv_encode(ctx, mel) == 0 &&
              memcmp(wkv_encoder_output(ctx), ref, n_out * sizeof *ref) == 0,
          "%s: f32 after another type is not bit-identical", size);
    CHECK(wkv_compute_type_parse("bf16") == WKV_COMPUTE_BF16 &&
              wkv_compute_type_parse("int8") == WKV_COMPUTE_INT8 &&
              wkv_compute_type_parse("f16") == -1,
          "wkv_compute_type_parse");
    free(err);
    wkv_context_free(ctx);
    wkv_model_free(model);
    free(mel);
    free(ref);
}

static double bf16_value(uint16_t b)
{
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* Every probability must be a neighbour of e = e^(x - max) in bf16 that is within
 * half a step + 5e-6 e of it: the correct rounding, or the other neighbour only
 * when e lies within 5e-6 of the midpoint between them. */
static void check_softmax_bf16(void)
{
    static const int lens[] = {1, 7, 15, 16, 17, 31, 250, 1500, 1501};
    enum { N_MAX = 1501 };
    float x[N_MAX];
    uint16_t q[N_MAX];
    unsigned seed = 12345;
    for (int isa = WKV_ISA_SCALAR; isa <= wkv__bf16_isa(); isa++) {
        double worst = 0.0, worst_sum = 0.0;
        for (size_t li = 0; li < sizeof lens / sizeof *lens; li++)
            for (int spread = 0; spread < 3; spread++) {
                const int n = lens[li];
                for (int i = 0; i < n; i++) {
                    seed = seed * 1103515245u + 12345u;
                    double u = (seed >> 8) / 16777216.0; /* [0, 1) */
                    x[i] = (float)((u - 0.5) * (spread == 0 ? 4.0 : spread == 1 ? 40.0 : 240.0));
                }
                if (n > 3)
                    x[n / 3] = -INFINITY;
                float m = -INFINITY;
                for (int i = 0; i < n; i++)
                    m = x[i] > m ? x[i] : m;
                double exact_sum = 0.0;
                for (int i = 0; i < n; i++)
                    exact_sum += exp((double)x[i] - m);
                float sum = wkv__softmax_exp_bf16_isa(isa, x, n, q);
                double es = fabs(sum - exact_sum) / exact_sum;
                worst_sum = es > worst_sum ? es : worst_sum;
                CHECK(es <= 1e-5, "isa %d, n %d: sum %.9g, exact %.9g", isa, n, sum, exact_sum);
                for (int i = 0; i < n; i++) {
                    double e = exp((double)x[i] - m), v = bf16_value(q[i]);
                    int ex;
                    frexp(e, &ex); /* bf16 steps of 2^(ex - 8) around e */
                    double half_step = e > 0.0 ? ldexp(1.0, ex - 9) : 0.0;
                    double dev = fabs(v - e) - half_step;
                    /* below the normal floats (e^-87.3) both paths may flush or
                     * clamp: any value under 2^-125 stands for "nothing" */
                    double rel = e < 0x1p-125 ? (v <= 0x1p-125 ? 0.0 : 1.0) : dev / e;
                    worst = rel > worst ? rel : worst;
                    CHECK(rel <= 5e-6, "isa %d, n %d, x[%d] = %.9g: bf16 %.9g for e^(x - max) %.9g",
                          isa, n, i, x[i], v, e);
                }
            }
        printf("softmax to bf16, isa %d: worst excess over half a bf16 step %.3g of e, "
               "sum %.3g\n", isa, worst, worst_sum);
        for (int i = 0; i < 20; i++)
            x[i] = -INFINITY;
        q[5] = 1;
        float zero = wkv__softmax_exp_bf16_isa(isa, x, 20, q);
        int all0 = zero == 0.0f;
        for (int i = 0; i < 20; i++)
            all0 = all0 && q[i] == 0;
        CHECK(all0, "isa %d: a row of -inf gives sum %g, not all 0", isa, zero);
    }
}

static uint32_t bits_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float float_of(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static void check_to_bf16(void)
{
    enum { N = 1000 };
    static float x[N];
    static uint16_t q[N];
    unsigned seed = 777;
    for (int i = 0; i < N; i++) {
        seed = seed * 1103515245u + 12345u;
        uint32_t u = seed;
        /* every 8th a bf16 midpoint (low half exactly 0x8000), some specials */
        if (i % 8 == 1)
            u = (u & 0xffff0000u) | 0x8000u;
        x[i] = float_of(u);
    }
    x[3] = NAN;
    x[4] = INFINITY;
    x[5] = -INFINITY;
    x[6] = float_of(0x7f7fffffu); /* rounds up to inf */
    x[7] = float_of(0x00000123u); /* subnormal */
    const float scales[] = {1.0f, 0.125f, 3.0f};
    for (int isa = WKV_ISA_SCALAR; isa <= wkv__bf16_isa(); isa++)
        for (size_t si = 0; si < sizeof scales / sizeof *scales; si++)
            for (int n = N - 16; n <= N; n++) { /* every tail length */
                memset(q, 0xa5, sizeof q);
                wkv__to_bf16_isa(isa, x, (size_t)n, scales[si], q);
                int bad = 0, first = -1;
                for (int i = 0; i < n; i++) {
                    const float v = scales[si] * x[i];
                    const uint16_t want = wkv__bf16(v);
                    const int sub = (bits_of(v) & 0x7f800000u) == 0;
                    const int ok = q[i] == want || (sub && (q[i] & 0x7fff) == 0) ||
                                   (isnan(v) && (q[i] & 0x7fc0) == 0x7fc0);
                    if (!ok && first < 0)
                        first = i;
                    bad += !ok;
                }
                CHECK(bad == 0, "isa %d, scale %g, n %d: %d of %d differ from wkv__bf16 (first "
                      "x[%d] = %a: 0x%04x, want 0x%04x)", isa, scales[si], n, bad, n, first,
                      first >= 0 ? x[first] : 0.0f, first >= 0 ? q[first] : 0,
                      first >= 0 ? wkv__bf16(scales[si] * x[first]) : 0);
                CHECK(n == N || q[n] == 0xa5a5, "isa %d, n %d: wrote past n", isa, n);
            }
}

/* The one list of compute types (whisperkv.h): names and values round-trip, every type
 * has a description, AUTO and F32 run everywhere, and a type outside the list has
 * none of these. */
static void check_type_list(void)
{
    const int n = wkv_compute_type_count();
    CHECK(n == 4 && WKV_COMPUTE_AUTO == 0 && WKV_COMPUTE_INT8 == 3, "%d compute types", n);
    for (int i = 0; i < n; i++) {
        const char *name = wkv_compute_type_name((wkv_compute_type)i);
        const char *desc = wkv_compute_type_description((wkv_compute_type)i);
        CHECK(wkv_compute_type_parse(name) == i && desc && *desc, "type %d: %s, %s", i, name,
              desc ? desc : "(no description)");
    }
    CHECK(wkv_compute_type_available(WKV_COMPUTE_AUTO) && wkv_compute_type_available(WKV_COMPUTE_F32),
          "auto or f32 unavailable");
#ifndef WKV_TEST_DNNL
    CHECK(!wkv_compute_type_available(WKV_COMPUTE_BF16) && !wkv_compute_type_available(WKV_COMPUTE_INT8),
          "bf16 or int8 available without oneDNN");
#endif
    CHECK(!strcmp(wkv_compute_type_name((wkv_compute_type)n), "?") &&
              !wkv_compute_type_description((wkv_compute_type)n) &&
              !wkv_compute_type_available((wkv_compute_type)n) && wkv_compute_type_parse("f16") < 0,
          "type %d outside the list", n);
}

int main(void)
{
    check_type_list();
    check_softmax_bf16();
    check_to_bf16();
    check_size("tiny");
    check_size("base");
    return tu_finish("compute");
}
