/* The vocabulary's distribution, in double: log-sum-exp over a row of logits (the
 * search's log-probabilities) and a draw at a temperature (the fallback's sampling).
 * Vectorized: they run over 51865 logits per step and candidate. */
#include "kernels/ops.h"
#include "base/cpu.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* e^x in double for x <= 0, to ~2 ulp (4.7e-16 relative measured against libm's exp
 * on [-680, 0]): x - n ln2 (ln2 in two parts), Taylor to degree 12 on |r| <= ln2 / 2,
 * 2^n from the bits of the rounding sum, so that a loop of it vectorizes. */
static inline double exp_nonpos_d(double x)
{
    x = x < -708.0 ? -708.0 : x; /* e^-708 ~ 3e-308: nothing to a sum of e^0 and more */
    const double magic = 6755399441055744.0; /* 1.5 * 2^52: adding it rounds to an integer */
    const double t = x * 1.4426950408889634 + magic, n = t - magic;
    double r = x - n * 0.6931471803691238164901733398437500;
    r = r - n * 1.9082149292705877000220631004e-10;
    double p = 1.0 / 479001600.0;
    p = p * r + 1.0 / 39916800.0;
    p = p * r + 1.0 / 3628800.0;
    p = p * r + 1.0 / 362880.0;
    p = p * r + 1.0 / 40320.0;
    p = p * r + 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    int64_t tb, mb;
    memcpy(&tb, &t, sizeof tb);
    memcpy(&mb, &magic, sizeof mb);
    const int64_t sb = (int64_t)((uint64_t)(tb - mb + 1023) << 52);
    double scale;
    memcpy(&scale, &sb, sizeof scale);
    return p * scale;
}

/* log(sum e^x) over a row of logits in double: the maximum over sixteen lanes, then
 * e^(x - max) by exp_nonpos_d in sixteen double lanes.  Both loops vectorize; libm's
 * exp over a 51865-token vocabulary took 0.3 - 0.5 ms a call, twice a greedy step, on
 * one thread while the other waited.  NaN stays NaN; all -inf gives -inf. */
WKV_CLONES
static double log_sum_exp_clones(const float *x, int n)
{
    const float m = wkv__max_lanes(x, n);
    if (m == -INFINITY)
        return -INFINITY;
    double s[16] = {0}, sum = 0.0;
    int i = 0;
    for (; i + 16 <= n; i += 16)
        for (int k = 0; k < 16; k++)
            s[k] += exp_nonpos_d((double)x[i + k] - m);
    for (; i < n; i++)
        sum += exp_nonpos_d((double)x[i] - m);
    for (int k = 0; k < 16; k++)
        sum += s[k];
    return (double)m + log(sum);
}

double wkv__log_sum_exp(const float *x, int n)
{
    return log_sum_exp_clones(x, n);
}

/* A sampling weight e^t (t <= 0): exactly 0 below -708, where exp_nonpos_d clamps to
 * e^-708 instead, so that a suppressed (-inf) token is never drawn, even at u = 0. */
static inline double weight(double t)
{
    return t < -708.0 ? 0.0 : exp_nonpos_d(t);
}

/* Sixteen weights e^((x[i] - m) inv_t) into w (vectorized); their sum. */
static inline double weights16(const float *x, double m, double inv_t, double *w)
{
    double s = 0.0;
    for (int k = 0; k < 16; k++)
        w[k] = weight(((double)x[k] - m) * inv_t);
    for (int k = 0; k < 16; k++)
        s += w[k];
    return s;
}

/* One vectorized pass sums the weights by spans (at most SAMPLE_SPANS, each a whole
 * number of blocks of sixteen); the walk to u * total then goes span by span and
 * computes weights again only inside the span it falls in (64 tokens for a 51865-
 * token vocabulary), where libm's exp took two scalar passes over the vocabulary for
 * every candidate and step. */
#define SAMPLE_SPANS 1024
WKV_CLONES
static int sample_clones(const float *x, int n, double inv_t, double u)
{
    const float m = wkv__max_lanes(x, n);
    if (m == -INFINITY)
        return 0;
    const int span = ((n + SAMPLE_SPANS - 1) / SAMPLE_SPANS + 15) / 16 * 16;
    double sums[SAMPLE_SPANS], w[16], total = 0.0;
    int n_spans = 0;
    for (int s0 = 0; s0 < n; s0 += span) {
        const int s1 = n - s0 < span ? n : s0 + span;
        double sum = 0.0;
        int i = s0;
        for (; i + 16 <= s1; i += 16)
            sum += weights16(x + i, m, inv_t, w);
        for (; i < s1; i++)
            sum += weight(((double)x[i] - m) * inv_t);
        sums[n_spans++] = sum;
        total += sum;
    }
    const double target = u * total;
    double acc = 0.0;
    int last = 0; /* the last token of weight > 0 scanned: rounding may leave acc short */
    for (int j = 0; j < n_spans; j++) {
        if (!(acc + sums[j] > target)) {
            acc += sums[j];
            continue;
        }
        const int s1 = n - j * span < span ? n : (j + 1) * span;
        for (int i = j * span; i < s1; i++) {
            const double p = weight(((double)x[i] - m) * inv_t);
            acc += p;
            if (p > 0.0) {
                last = i;
                if (target < acc)
                    return i;
            }
        }
    }
    return last;
}

int wkv__sample_softmax(const float *x, int n, double temperature, double u)
{
    return sample_clones(x, n, 1.0 / temperature, u);
}
