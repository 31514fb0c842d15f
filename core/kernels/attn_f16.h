/* Kernels of the decoder's step attention over half K/V (attn_f16.c). */
#ifndef WKV_ATTN_F16_H
#define WKV_ATTN_F16_H

#include <stddef.h>
#include <stdint.h>

/* Where a stretch of the step attention lies: n_q query rows (q and o rows qs floats
 * apart), n keys (K and V rows ks halves apart, already offset to the first key and
 * head), nh heads of hd; the score of row r, head h, key t at s[r * s_row + h * s_head + t]. */
typedef struct {
    int n_q, n, nh, hd;
    size_t qs, ks, s_row, s_head;
} wkv__attn_f16_span;

/* Whether the kernels below run on this CPU for head size hd (else widen rows). */
int wkv__attn_f16_ok(int hd);
/* scores: s[r, h, t] = scale * dot(q + r qs + h hd, k + t ks + h hd, hd). */
void wkv__attn_f16_scores(const wkv__attn_f16_span *sp, const float *q, const uint16_t *k,
                         float scale, float *s);
/* values: o[r qs + h hd + i] += s[r, h, t] * v[t ks + h hd + i], key after key. */
void wkv__attn_f16_values(const wkv__attn_f16_span *sp, const float *s, const uint16_t *v,
                         float *o);

#endif
