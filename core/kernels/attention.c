/* Multi-head attention (ops.h): many query rows as two products a head on
 * wkv__sgemm with a masked softmax between them (the prompt passes, word alignment);
 * up to 8 rows (a decoder step, or its beams) streaming K and V once, row by row, in
 * f32 or over a half cache (attn_f16.c's kernels), split by keys over the pool and
 * merged by their softmax maxima. */
#include "kernels/ops.h"
#include "kernels/attn_f16.h"
#include "base/cpu.h"
#include "base/sgemm.h"

#include <math.h>
#include <string.h>

typedef struct {
    float *scores;
    int n_q, n_kv, causal_offset;
} softmax_job;

/* Rows [part/n_parts] of the scores: masked softmax. */
static void softmax_rows(void *arg, int part, int n_parts)
{
    softmax_job *j = arg;
    int r0 = (int)((long)j->n_q * part / n_parts), r1 = (int)((long)j->n_q * (part + 1) / n_parts);
    for (int i = r0; i < r1; i++) {
        float *row = j->scores + (size_t)i * j->n_kv;
        int visible = j->n_kv;
        if (j->causal_offset >= 0 && j->causal_offset + i + 1 < j->n_kv)
            visible = j->causal_offset + i + 1;
        wkv__softmax(row, visible);
        for (int k = visible; k < j->n_kv; k++)
            row[k] = 0.0f;
    }
}

typedef struct {
    const float *q, *k, *v;
    int n_q, n_kv, d, n_head, causal_offset;
    float *scores, *out;
    const uint16_t *k16, *v16; /* K and V in half instead (attention_rows only) */
} attention_job;

static void attention_head(const attention_job *j, int h, float *scores, wkv__pool *pool)
{
    int hd = j->d / j->n_head;
    /* the reference scales q and k by hd^-1/4 each: the same as scores by hd^-1/2 */
    float scale = 1.0f / sqrtf((float)hd);
    wkv__sgemm(1, j->n_q, j->n_kv, hd, scale,
                j->q + h * hd, j->d, j->k + h * hd, j->d, 0.0f, scores, j->n_kv);
    softmax_job sj = {scores, j->n_q, j->n_kv, j->causal_offset};
    if (pool)
        wkv__pool_run(pool, softmax_rows, &sj);
    else
        softmax_rows(&sj, 0, 1);
    wkv__sgemm(0, j->n_q, hd, j->n_kv, 1.0f, scores,
                j->n_kv, j->v + h * hd, j->d, 0.0f, j->out + h * hd, j->d);
}

/* sum a[i] b[i], sixteen lanes then a tree, so that the clones vectorize it */
static inline float dot_lanes(const float *a, const float *b, int n)
{
    float s[16] = {0};
    int i = 0;
    for (; i + 16 <= n; i += 16)
        for (int k = 0; k < 16; k++)
            s[k] += a[i + k] * b[i + k];
    for (int w = 8; w >= 1; w /= 2)
        for (int k = 0; k < w; k++)
            s[k] += s[k + w];
    for (; i < n; i++)
        s[0] += a[i] * b[i];
    return s[0];
}

/* A decoder step's attention (n_q <= 8 query rows: one token, or one per beam sharing
 * the window's cross K/V) over keys [t0, t1) for heads [h0, h1), unnormalised:
 * o[r] (row stride d, these heads' columns) = sum_t e^(s_rt - m) V[t], with m and the
 * sum l of e^(s_rt - m) per (row, head) in m[r * n_head + h], l[...].  K and V are read
 * once, row by row, each row serving every query row and head.  scores holds row r,
 * head h at scores[(r * n_head + h) * n_kv + t].  OpenBLAS's sgemv per head (n = 64)
 * reached a third of the f16 weight kernels' bandwidth on a window's 1500 cross keys,
 * and sgemm packs K and V into copies first. */
WKV_CLONES
static void attention_rows(const attention_job *j, int h0, int h1, int t0, int t1,
                           float *scores, float *o, float *m, float *l)
{
    const int hd = j->d / j->n_head, n_kv = j->n_kv, d = j->d, nh = h1 - h0;
    const float scale = 1.0f / sqrtf((float)hd);
    int vis[8], vis_max = t0;
    for (int r = 0; r < j->n_q; r++) {
        vis[r] = t1;
        if (j->causal_offset >= 0 && j->causal_offset + r + 1 < t1)
            vis[r] = j->causal_offset + r + 1 > t0 ? j->causal_offset + r + 1 : t0;
        vis_max = vis[r] > vis_max ? vis[r] : vis_max;
    }
    /* half K/V (wkv__attention_f16, never masked: every row sees [t0, t1)): widened in
     * registers by attn_f16.c's kernels, all rows at each key */
    const wkv__attn_f16_span sp = {j->n_q, t1 - t0, nh, hd, (size_t)d, (size_t)d,
                                  (size_t)j->n_head * n_kv, (size_t)n_kv};
    const size_t off = (size_t)t0 * d + (size_t)h0 * hd;
    if (j->k16)
        wkv__attn_f16_scores(&sp, j->q + h0 * hd, j->k16 + off, scale,
                            scores + (size_t)h0 * n_kv + t0);
    for (int t = t0; !j->k16 && t < vis_max; t++) {
        const float *kr = j->k + (size_t)t * d + h0 * hd;
        for (int r = 0; r < j->n_q; r++) {
            if (t >= vis[r])
                continue;
            const float *qr = j->q + (size_t)r * d + h0 * hd;
            float *sr = scores + ((size_t)r * j->n_head + h0) * n_kv + t;
            for (int hh = 0; hh < nh; hh++)
                sr[(size_t)hh * n_kv] = scale * dot_lanes(qr + hh * hd, kr + hh * hd, hd);
        }
    }
    for (int r = 0; r < j->n_q; r++) {
        memset(o + (size_t)r * d + h0 * hd, 0, (size_t)(nh * hd) * sizeof(float));
        for (int h = h0; h < h1; h++) {
            float *row = scores + ((size_t)r * j->n_head + h) * n_kv + t0;
            size_t i = (size_t)r * j->n_head + h;
            l[i] = wkv__softmax_exp(row, vis[r] - t0, &m[i]);
            if (l[i] == 0.0f) /* nothing visible, or every score -inf: adds nothing below */
                memset(row, 0, (size_t)(vis[r] - t0) * sizeof(float));
        }
    }
    if (j->v16)
        wkv__attn_f16_values(&sp, scores + (size_t)h0 * n_kv + t0, j->v16 + off, o + h0 * hd);
    for (int t = t0; !j->v16 && t < vis_max; t++) {
        const float *vr = j->v + (size_t)t * d + h0 * hd;
        for (int r = 0; r < j->n_q; r++) {
            if (t >= vis[r])
                continue;
            float *orow = o + (size_t)r * d + h0 * hd;
            const float *pr = scores + ((size_t)r * j->n_head + h0) * n_kv + t;
            for (int hh = 0; hh < nh; hh++) {
                const float p = pr[(size_t)hh * n_kv];
                for (int i = 0; i < hd; i++)
                    orow[hh * hd + i] += p * vr[hh * hd + i];
            }
        }
    }
}

/* The heads of [part], each part with its own n_q x n_kv of scores. */
static void attention_heads(void *arg, int part, int n_parts)
{
    const attention_job *j = arg;
    int h0 = j->n_head * part / n_parts, h1 = j->n_head * (part + 1) / n_parts;
    float *scores = j->scores + (size_t)part * j->n_q * j->n_kv;
    for (int h = h0; h < h1; h++)
        attention_head(j, h, scores, NULL);
}

/* Step attention split by keys: part p streams rows [t0, t1) of K and V, a contiguous
 * stretch of memory (split by heads, each thread read every other kilobyte of a row
 * and the prefetchers fetched the rest too).  Its unnormalised output, maxima and sums
 * go after the scores; wkv__attention merges the parts. */
static void attention_keys_part(void *arg, int part, int n_parts)
{
    const attention_job *j = arg;
    int t0 = (int)((long)j->n_kv * part / n_parts), t1 = (int)((long)j->n_kv * (part + 1) / n_parts);
    size_t nml = (size_t)j->n_q * j->n_head;
    float *o = j->scores + nml * j->n_kv + (size_t)part * ((size_t)j->n_q * j->d + 2 * nml);
    attention_rows(j, 0, j->n_head, t0, t1, j->scores, o, o + (size_t)j->n_q * j->d,
                   o + (size_t)j->n_q * j->d + nml);
}

static void attention_keys(wkv__pool *pool, const attention_job *j)
{
    const int n_parts = wkv__pool_parts(pool), hd = j->d / j->n_head;
    size_t nml = (size_t)j->n_q * j->n_head, stride = (size_t)j->n_q * j->d + 2 * nml;
    const float *base = j->scores + nml * j->n_kv;
    wkv__pool_run(pool, attention_keys_part, (void *)j);
    for (int r = 0; r < j->n_q; r++)
        for (int h = 0; h < j->n_head; h++) {
            size_t i = (size_t)r * j->n_head + h;
            float mx = -INFINITY, sum = 0.0f, w[64];
            for (int p = 0; p < n_parts; p++) {
                const float *ml = base + p * stride + (size_t)j->n_q * j->d;
                if (ml[nml + i] > 0.0f && ml[i] > mx)
                    mx = ml[i];
            }
            for (int p = 0; p < n_parts; p++) {
                const float *ml = base + p * stride + (size_t)j->n_q * j->d;
                w[p] = ml[nml + i] > 0.0f ? expf(ml[i] - mx) : 0.0f;
                sum += w[p] * ml[nml + i];
            }
            float *out = j->out + (size_t)r * j->d + h * hd;
            for (int c = 0; c < hd; c++) {
                float acc = 0.0f;
                for (int p = 0; p < n_parts; p++)
                    acc += w[p] * base[p * stride + (size_t)r * j->d + h * hd + c];
                out[c] = sum > 0.0f ? acc / sum : 0.0f;
            }
        }
}

/* Up to 8 rows with n_q x n_head <= 64: K and V streamed once, split by keys over the
 * pool when there are enough of them. */
static void attention_step(wkv__pool *pool, const attention_job *j)
{
    const int n_q = j->n_q, n_kv = j->n_kv, d = j->d, n_head = j->n_head;
    const int parts = wkv__pool_parts(pool);
    const size_t nml = (size_t)n_q * n_head;
    const size_t room = (size_t)64 * n_kv; /* scores: max(n_q, 64) x n_kv, n_q <= 8 */
    if (parts > 1 && parts <= 64 && n_kv >= 64 * parts &&
        nml * n_kv + parts * ((size_t)n_q * d + 2 * nml) <= room) {
        attention_keys(pool, j);
        return;
    }
    /* short histories: on this thread, normalised here */
    float ml[2 * 64];
    attention_rows(j, 0, n_head, 0, n_kv, j->scores, j->out, ml, ml + nml);
    const int hd = d / n_head;
    for (int r = 0; r < n_q; r++)
        for (int c = 0; c < d; c++) {
            float l = ml[nml + (size_t)r * n_head + c / hd];
            float *o = j->out + (size_t)r * d + c;
            *o = l > 0.0f ? *o / l : 0.0f;
        }
}

void wkv__attention(wkv__pool *pool, const float *q, const float *k, const float *v, int n_q,
                   int n_kv, int d, int n_head, int causal_offset, float *scores, float *out)
{
    attention_job job = {q, k, v, n_q, n_kv, d, n_head, causal_offset, scores, out, NULL, NULL};
    if (n_q <= 8 && n_q * n_head <= 64) { /* steps: K and V streamed once */
        attention_step(pool, &job);
    } else if (n_q >= 64) { /* many rows (prompt passes): heads in turn, softmax rows split */
        for (int h = 0; h < n_head; h++)
            attention_head(&job, h, scores, pool);
    } else if (n_q * wkv__pool_parts(pool) <= 64) { /* a few rows (steps): heads split */
        wkv__pool_run(pool, attention_heads, &job);
    } else {
        attention_heads(&job, 0, 1);
    }
}

int wkv__attention_f16_ok(int n_q, int n_head, int d)
{
    return n_q >= 1 && n_q <= 8 && n_head >= 1 && n_head <= 64 && d % n_head == 0 &&
           wkv__attn_f16_ok(d / n_head);
}

void wkv__attention_f16(wkv__pool *pool, const float *q, const uint16_t *k, const uint16_t *v,
                       int n_q, int n_kv, int d, int n_head, float *scores, float *out)
{
    /* groups of rows small enough for the step path; each streams K and V once */
    const int g = 64 / n_head;
    for (int r0 = 0; r0 < n_q; r0 += g) {
        const int n = n_q - r0 < g ? n_q - r0 : g;
        attention_job job = {q + (size_t)r0 * d, NULL, NULL, n, n_kv, d, n_head, -1, scores,
                             out + (size_t)r0 * d, k, v};
        attention_step(pool, &job);
    }
}
