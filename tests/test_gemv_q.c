/* gemv_q: the quantized-block kernels (core/kernels/gemv_q.c) against dequantize-then-f32.
 *
 * For each block type of quant.h's table (q8_0, q5_0, q5_1, q4_0, q4_1: a row added
 * there is tested here, and aborts if the kernels lack it), every kernel this CPU can run
 * (portable, AVX2, AVX-512) and the decoder's shapes (tiny and base: d x d, 4d x d,
 * d x 4d, the vocabulary projection) plus odd ones (one block, 37 output rows, rows of
 * 3 blocks), with 1 ... 9 input rows (a greedy step, beams, more than one kernel pass),
 * with and without bias, overwriting and accumulating, on 1 and 2 threads: the output
 * is compared with a double-precision product of wkv__row_to_f32's weights, as
 * max |y - ref| / max |ref| <= 1e-5.  Weights are random blocks: random codes (every
 * bit pattern is a valid block), random f16 scales and minima of both signs. */
#include "kernels/gemv_q.h"
#include "base/cpu.h"
#include "base/f16.h"
#include "model/model.h"
#include "base/pool.h"
#include "model/quant.h"
#include "testutil.h"
#include "model/widen.h"

#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t next_u32(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

static float uniform(float lo, float hi)
{
    return lo + (hi - lo) * (float)(next_u32() & 0xffffff) / (float)0x1000000;
}

static void put_half(uint8_t *p, float v)
{
    uint16_t h = wkv__f32_to_f16(v);
    p[0] = (uint8_t)(h & 0xff);
    p[1] = (uint8_t)(h >> 8);
}

/* n_blocks random blocks of `type` */
static void random_blocks(int type, uint8_t *w, size_t n_blocks)
{
    const size_t bb = wkv__quant_block_bytes(type);
    const int m_at = wkv__qtype_of(type)->m; /* the minimum's offset, or -1 */
    for (size_t b = 0; b < n_blocks; b++, w += bb) {
        for (size_t i = 0; i < bb; i++)
            w[i] = (uint8_t)next_u32();
        float d = uniform(0.002f, 0.05f);
        put_half(w, next_u32() & 1 ? d : -d);
        if (m_at >= 0)
            put_half(w + m_at, uniform(-0.5f, 0.5f));
    }
}


typedef struct {
    int out, in;
    int max_rows; /* the rows tried: 1 ... max_rows */
} shape;

static const shape SHAPES[] = {
    {384, 384, 9},   {1536, 384, 5}, {384, 1536, 5}, {512, 512, 9},
    {2048, 512, 3},  {512, 2048, 3}, {51865, 384, 2}, /* tiny's logits */
    {1, 32, 9},      {37, 96, 9},    {5, 64, 8},     {37, 2048, 4},
};

/* One (type, shape): reference per rows, then every kernel, pool and mode. */
static void check_shape(int type, const shape *s, wkv__pool *pool2)
{
    const size_t nb = (size_t)s->in / WKV_QK, bb = wkv__quant_block_bytes(type);
    const size_t n_w = (size_t)s->out * (size_t)s->in;
    const int R = s->max_rows;
    uint8_t *w = malloc((size_t)s->out * nb * bb);
    float *wf = malloc(n_w * sizeof *wf);
    float *x = malloc((size_t)R * s->in * sizeof *x);
    float *bias = malloc((size_t)s->out * sizeof *bias);
    float *y0 = malloc((size_t)R * s->out * sizeof *y0); /* accumulate's starting values */
    float *y = malloc((size_t)R * s->out * sizeof *y);
    float *ref = malloc((size_t)R * s->out * sizeof *ref);
    float *one = malloc((size_t)R * s->out * sizeof *one); /* each row alone */
    if (!w || !wf || !x || !bias || !y0 || !y || !ref || !one) {
        CHECK(0, "out of memory");
        goto done;
    }
    random_blocks(type, w, (size_t)s->out * nb);
    wkv__row_to_f32(type, w, wf, (size_t)s->out * (size_t)s->in);
    for (size_t i = 0; i < (size_t)R * s->in; i++)
        x[i] = uniform(-1, 1);
    for (int j = 0; j < s->out; j++)
        bias[j] = uniform(-1, 1);
    for (size_t i = 0; i < (size_t)R * s->out; i++)
        y0[i] = uniform(-1, 1);
    for (int r = 0; r < R; r++)
        for (int j = 0; j < s->out; j++) {
            double acc = 0;
            const float *xr = x + (size_t)r * s->in, *wr = wf + (size_t)j * s->in;
            for (int k = 0; k < s->in; k++)
                acc += (double)xr[k] * wr[k];
            ref[(size_t)r * s->out + j] = (float)acc;
        }
    double worst = 0;
    const char *worst_at = "";
    static char where[160];
    for (int isa = WKV_ISA_SCALAR; isa <= wkv__gemv_isa(); isa++) {
        for (int r = 0; r < R; r++)
            wkv__gemv_q_isa(isa, NULL, type, x + (size_t)r * s->in, 1, s->in, w, NULL, s->out,
                           one + (size_t)r * s->out, 0);
        for (int rows = 1; rows <= R; rows++)
            for (int mode = 0; mode < 3; mode++) { /* plain, + bias, accumulate + bias */
                wkv__pool *pool = (rows + mode) % 2 ? pool2 : NULL;
                const size_t ny = (size_t)rows * s->out;
                memcpy(y, y0, ny * sizeof *y);
                wkv__gemv_q_isa(isa, pool, type, x, rows, s->in, w, mode ? bias : NULL, s->out,
                               y, mode == 2);
                double num = 0, den = 0;
                for (int r = 0; r < rows; r++)
                    for (int j = 0; j < s->out; j++) {
                        size_t i = (size_t)r * s->out + j;
                        double want = ref[i] + (mode ? bias[j] : 0) + (mode == 2 ? y0[i] : 0);
                        num = fmax(num, fabs(y[i] - want));
                        den = fmax(den, fabs(want));
                    }
                double e = num / fmax(den, 1e-30);
                if (e > worst) {
                    worst = e;
                    snprintf(where, sizeof where, "isa %d, %d rows, mode %d", isa, rows, mode);
                    worst_at = where;
                }
                CHECK(e <= 1e-5, "%s %dx%d, isa %d, %d rows, mode %d: relative error %.3g",
                      wkv__quant_type_name(type), s->out, s->in, isa, rows, mode, e);
                /* below AVX-512 (whose one-row kernel rounds in another order) a row
                 * of a batch is the row alone bit for bit: a batched decode's logits
                 * are its sequences' own */
                if (mode == 0 && isa < WKV_ISA_AVX512)
                    CHECK(!memcmp(y, one, ny * sizeof *y),
                          "%s %dx%d, isa %d, %d rows: a row differs from the row alone",
                          wkv__quant_type_name(type), s->out, s->in, isa, rows);
            }
    }
    printf("  %-5s %6d x %-5d rows 1..%d: worst %.2e (%s)\n", wkv__quant_type_name(type),
           s->out, s->in, R, worst, worst_at);
done:
    free(w);
    free(wf);
    free(x);
    free(bias);
    free(y0);
    free(y);
    free(ref);
    free(one);
}

/* Rows in / 32 not a whole number of blocks: nothing written.  A type that is not a
 * block type (f16, which has its own kernels; 9, outside the table) never runs as
 * another: the call aborts (in a child process). */
static void check_refusals(void)
{
    uint8_t w[34 * 4] = {0};
    float x[64] = {0}, y[4] = {1, 2, 3, 4};
    wkv__gemv_q(NULL, WKV_TYPE_Q8_0, x, 1, 48, w, NULL, 2, y, 0);
    CHECK(y[0] == 1 && y[1] == 2, "a refused call wrote its output");
    const int bad[] = {WKV_TYPE_F16, WKV_TYPE_F32, WKV_TYPE_MAX + 1, 4, -1};
    printf("refusals: wkv__gemv_q on %zu wrong types, each must abort (messages follow)\n",
           sizeof bad / sizeof *bad);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0) {
            struct rlimit no_core = {0, 0};
            setrlimit(RLIMIT_CORE, &no_core);
            wkv__gemv_q(NULL, bad[i], x, 1, 32, w, NULL, 2, y, 0);
            _exit(0); /* ran: the test fails */
        }
        int st = 0;
        CHECK(pid > 0 && waitpid(pid, &st, 0) == pid && WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT,
              "wkv__gemv_q on type %d did not abort", bad[i]);
    }
}

typedef struct {
    wkv__widen *w;
    const float *got[4][WKV_WIDEN_MAX];
} widen_race;

/* every part asks for every matrix at once, as the encoder's failed products would */
static void widen_get_part(void *arg, int part, int n_parts)
{
    widen_race *r = arg;
    (void)n_parts;
    for (int i = 0; i < r->w->n; i++)
        r->got[part][i] = wkv__widen_get(r->w, (i + part) % r->w->n);
}

/* widen.c: matrices widened over 1, 2 and 3 pool parts (wkv__widen_all), or on first
 * need from every part at once (wkv__widen_get), are wkv__mat_f32's values bit for
 * bit; stored f32 ones stay in place.  f16 with counts that are not whole blocks of
 * 32, every block type. */
static void check_widen(void)
{
    int types[WKV_WIDEN_MAX], n_types = 0; /* every type of the table */
    for (int t = 0; t <= WKV_TYPE_MAX && n_types < WKV_WIDEN_MAX; t++)
        if (wkv__qtype_of(t))
            types[n_types++] = t;
    const size_t counts[] = {37 * 64, 32 * 3 + 5, 96 * 96};
    pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    int checked = 0;
    for (int threads = 1; threads <= 3; threads++) {
        wkv__pool *pool = wkv__pool_new(threads);
        for (size_t c = 0; c < sizeof counts / sizeof *counts; c++)
            for (int get = 0; get < 2; get++) {
                const int n = n_types;
                wkv__mat mats[WKV_WIDEN_MAX];
                uint8_t *store[WKV_WIDEN_MAX];
                float *want[WKV_WIDEN_MAX], *slots = malloc(n * counts[c] * sizeof(float));
                wkv__widen w;
                wkv__widen_init(&w, n, &lock);
                for (int i = 0; i < n; i++) {
                    const size_t be = (size_t)wkv__qtype_of(types[i])->block_elems;
                    size_t count = counts[c] / be * be;
                    size_t bytes = wkv__type_bytes(types[i], count);
                    store[i] = malloc(bytes + 1);
                    if (types[i] == WKV_TYPE_F16 || types[i] == WKV_TYPE_F32)
                        for (size_t k = 0; k < count; k++) {
                            float v = uniform(-2.0f, 2.0f);
                            if (types[i] == WKV_TYPE_F32)
                                memcpy(store[i] + 4 * k, &v, 4);
                            else
                                put_half(store[i] + 2 * k, v);
                        }
                    else
                        random_blocks(types[i], store[i], count / WKV_QK);
                    mats[i] = (wkv__mat){types[i], store[i]};
                    want[i] = malloc(count * sizeof(float));
                    const float *f = wkv__mat_f32(&mats[i], count, want[i]);
                    if (f != want[i])
                        memcpy(want[i], f, count * sizeof(float));
                    wkv__widen_set(&w, i, &mats[i], count, slots + (size_t)i * counts[c]);
                }
                widen_race race = {&w, {{NULL}}};
                if (get)
                    wkv__pool_run(pool, widen_get_part, &race);
                else
                    wkv__widen_all(&w, pool);
                for (int i = 0; i < n; i++) {
                    const float *got = get ? wkv__widen_get(&w, i) : w.f32[i];
                    CHECK(got != NULL && !memcmp(got, want[i], w.count[i] * sizeof(float)),
                          "widen %s, type %d, %zu values, %d threads: not wkv__mat_f32's values",
                          get ? "on first need" : "over the pool", types[i], w.count[i], threads);
                    CHECK((types[i] == WKV_TYPE_F32) == (got == (const float *)store[i]),
                          "widen type %d: stored f32 must stay in place, others in their slot",
                          types[i]);
                    for (int p = 0; get && p < wkv__pool_parts(pool); p++)
                        CHECK(race.got[p][(i - p % n + n) % n] == got,
                              "part %d saw another copy of matrix %d", p, i);
                    free(store[i]);
                    free(want[i]);
                    checked++;
                }
                free(slots);
            }
        wkv__pool_free(pool);
    }
    printf("widen: %d matrices equal wkv__mat_f32's values\n", checked);
}

/* wkv__row_to_f32 reads any alignment (a tensor's data in the file follows its name):
 * every type from an odd address gives the bits it gives from an aligned one; f16 over
 * more than one of its 512-value chunks. */
static void check_unaligned(void)
{
    const size_t count = 32 * 40; /* 1280 values */
    for (int t = 0; t <= WKV_TYPE_MAX; t++) {
        const wkv__qtype *q = wkv__qtype_of(t);
        if (!q)
            continue;
        const size_t bytes = wkv__type_bytes(t, count);
        uint8_t *a = malloc(bytes + 16);
        float *f0 = malloc(count * sizeof *f0), *f1 = malloc(count * sizeof *f1);
        if (!a || !f0 || !f1) {
            CHECK(0, "out of memory");
        } else {
            if (q->block_elems > 1)
                random_blocks(t, a, count / WKV_QK);
            else
                for (size_t k = 0; k < count; k++) {
                    float v = uniform(-2.0f, 2.0f);
                    if (t == WKV_TYPE_F32)
                        memcpy(a + 4 * k, &v, 4);
                    else
                        put_half(a + 2 * k, v);
                }
            wkv__row_to_f32(t, a, f0, count);
            memmove(a + 1, a, bytes);
            wkv__row_to_f32(t, a + 1, f1, count);
            CHECK(!memcmp(f0, f1, count * sizeof *f0), "%s from an odd address differs", q->name);
        }
        free(a);
        free(f0);
        free(f1);
    }
}

int main(void)
{
    printf("kernels up to isa %d (0 portable, 1 AVX2, 2 AVX-512)\n", wkv__gemv_isa());
    check_refusals(); /* forks: before any pool thread exists */
    wkv__pool *pool2 = wkv__pool_new(2);
    for (int t = 0; t <= WKV_TYPE_MAX; t++)
        for (size_t s = 0; wkv__qtype_of(t) && wkv__qtype_of(t)->code_bits &&
                           s < sizeof SHAPES / sizeof *SHAPES; s++)
            check_shape(t, &SHAPES[s], pool2);
    check_widen();
    check_unaligned();
    wkv__pool_free(pool2);
    return tu_finish("gemv_q");
}
