/* Layer norm, GELU, softmax, linear layers on sgemm, f16 conversion. */
#include "ops.h"
#include "internal.h"

#include <cblas.h>
#include <math.h>
#include <string.h>

float wkv_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f;
    uint32_t man = h & 0x3ff;
    uint32_t bits;
    if (exp == 0) {
        if (man == 0) {
            bits = sign;
        } else { /* subnormal: renormalize */
            int e = -1;
            do {
                e++;
                man <<= 1;
            } while (!(man & 0x400));
            bits = sign | (uint32_t)(127 - 15 - e) << 23 | (man & 0x3ff) << 13;
        }
    } else if (exp == 0x1f) {
        bits = sign | 0x7f800000u | man << 13;
    } else {
        bits = sign | (exp + 127 - 15) << 23 | man << 13;
    }
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

uint16_t wkv_f32_to_f16(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint32_t sign = (x >> 16) & 0x8000;
    uint32_t absx = x & 0x7fffffff;
    if (absx > 0x7f800000u) /* NaN */
        return (uint16_t)(sign | 0x7e00);
    if (absx >= 0x477ff000u) /* rounds to >= 65520: infinity */
        return (uint16_t)(sign | 0x7c00);
    if (absx < 0x38800000u) { /* below the smallest normal half: subnormal or 0 */
        if (absx < 0x33000000u)
            return (uint16_t)sign;
        uint32_t man = (absx & 0x7fffff) | 0x800000;
        int shift = 126 - (int)(absx >> 23); /* 14..24 */
        uint32_t half = man >> shift;
        uint32_t rem = man & ((1u << shift) - 1);
        uint32_t mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (half & 1)))
            half++;
        return (uint16_t)(sign | half);
    }
    /* normal: round to nearest even on the 13 dropped bits */
    uint32_t r = absx + 0xfff + ((absx >> 13) & 1);
    r -= (127 - 15) << 23;
    return (uint16_t)(sign | (r >> 13));
}

void wkv_layer_norm(const float *x, float *y, int rows, int n, const float *w,
                    const float *b)
{
    for (int r = 0; r < rows; r++) {
        const float *xr = x + (size_t)r * n;
        float *yr = y + (size_t)r * n;
        double mean = 0, var = 0;
        for (int i = 0; i < n; i++)
            mean += xr[i];
        mean /= n;
        for (int i = 0; i < n; i++) {
            double d = xr[i] - mean;
            var += d * d;
        }
        var /= n;
        float inv = (float)(1.0 / sqrt(var + 1e-5));
        float fm = (float)mean;
        for (int i = 0; i < n; i++)
            yr[i] = (xr[i] - fm) * inv * w[i] + b[i];
    }
}

void wkv_gelu(float *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        x[i] = 0.5f * x[i] * (1.0f + erff(x[i] * (float)M_SQRT1_2));
}

void wkv_softmax(float *x, int n)
{
    float m = -INFINITY;
    for (int i = 0; i < n; i++)
        if (x[i] > m)
            m = x[i];
    double sum = 0;
    for (int i = 0; i < n; i++) {
        x[i] = expf(x[i] - m);
        sum += x[i];
    }
    float inv = (float)(1.0 / sum);
    for (int i = 0; i < n; i++)
        x[i] *= inv;
}

static void linear(const float *x, int rows, int in, const float *w, const float *bias,
                   int out, float *y, float beta)
{
    if (rows == 1)
        cblas_sgemv(CblasRowMajor, CblasNoTrans, out, in, 1.0f, w, in, x, 1, beta, y, 1);
    else
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, out, in, 1.0f, x, in, w,
                    in, beta, y, out);
    if (bias)
        for (int r = 0; r < rows; r++) {
            float *yr = y + (size_t)r * out;
            for (int i = 0; i < out; i++)
                yr[i] += bias[i];
        }
}

void wkv_linear(const float *x, int rows, int in, const float *w, const float *bias,
                int out, float *y)
{
    linear(x, rows, in, w, bias, out, y, 0.0f);
}

void wkv_linear_add(const float *x, int rows, int in, const float *w, const float *bias,
                    int out, float *y)
{
    linear(x, rows, in, w, bias, out, y, 1.0f);
}

/* Multi-head attention of q (n_q x d) over k, v (n_kv x d); out (n_q x d).
 * `causal_offset` >= 0 masks key j > causal_offset + i for query row i. */
void wkv_attention(const float *q, const float *k, const float *v, int n_q, int n_kv,
                   int d, int n_head, int causal_offset, float *scores, float *out)
{
    int hd = d / n_head;
    /* the reference scales q and k by hd^-1/4 each: the same as scores by hd^-1/2 */
    float scale = 1.0f / sqrtf((float)hd);
    for (int h = 0; h < n_head; h++) {
        const float *qh = q + h * hd, *kh = k + h * hd, *vh = v + h * hd;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n_q, n_kv, hd, scale, qh, d, kh,
                    d, 0.0f, scores, n_kv);
        for (int i = 0; i < n_q; i++) {
            float *row = scores + (size_t)i * n_kv;
            int visible = n_kv;
            if (causal_offset >= 0 && causal_offset + i + 1 < n_kv)
                visible = causal_offset + i + 1;
            wkv_softmax(row, visible);
            for (int j = visible; j < n_kv; j++)
                row[j] = 0.0f;
        }
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n_q, hd, n_kv, 1.0f, scores,
                    n_kv, vh, d, 0.0f, out + h * hd, d);
    }
}
