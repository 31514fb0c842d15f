/* Row kernels of the decoder's step attention over half K/V (attn_f16.c). */
#ifndef WKV_ATTN_F16_H
#define WKV_ATTN_F16_H

#include <stddef.h>
#include <stdint.h>

/* Whether the kernels below run on this CPU for head size hd (else widen rows). */
int wkv_attn_f16_ok(int hd);
/* out[h * stride] = scale * dot(q + h hd, k + h hd, hd) for h < nh (k in half). */
void wkv_attn_f16_dot(const float *q, const uint16_t *k, int nh, int hd, float scale,
                      float *out, size_t stride);
/* o[h hd + i] += p[h * stride] * v[h hd + i] for h < nh, i < hd (v in half). */
void wkv_attn_f16_axpy(const float *p, size_t stride, const uint16_t *v, int nh, int hd,
                       float *o);

#endif
