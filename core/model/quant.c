/* The tensor types' table (quant.h): lookups, messages, and stored data to f32. */
#include "model/quant.h"

#include "base/f16.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const wkv__qtype *wkv__qtype_must(int type, const char *who)
{
    const wkv__qtype *q = wkv__qtype_of(type);
    if (!q) {
        char list[160];
        fprintf(stderr, "whisperkv: %s: tensor type %d is not one of %s (the loader refuses "
                        "such files: this is a bug)\n",
                who, type, wkv__qtype_list(list, sizeof list, WKV_QLIST_TYPES));
        abort();
    }
    return q;
}

const wkv__qtype *wkv__qtype_of_ftype(int ftype)
{
    for (int t = 0; t <= WKV_TYPE_MAX; t++) {
        const wkv__qtype *q = wkv__qtype_of(t);
        if (q && q->ftype == ftype)
            return q;
    }
    return NULL;
}

size_t wkv__quant_block_bytes(int type)
{
    const wkv__qtype *q = wkv__qtype_of(type);
    return q && q->block_elems > 1 ? (size_t)q->block_bytes : 0;
}

const char *wkv__quant_type_name(int type)
{
    const wkv__qtype *q = wkv__qtype_of(type);
    return q ? q->name : NULL;
}

size_t wkv__type_bytes(int type, size_t n)
{
    const wkv__qtype *q = wkv__qtype_must(type, "wkv__type_bytes");
    return n / (size_t)q->block_elems * (size_t)q->block_bytes;
}

void wkv__row_to_f32(int type, const void *src, float *dst, size_t n)
{
    const wkv__qtype *q = wkv__qtype_must(type, "wkv__row_to_f32");
    if (n % (size_t)q->block_elems) {
        fprintf(stderr, "whisperkv: wkv__row_to_f32: %zu %s values are not whole blocks of %d "
                        "(a bug)\n", n, q->name, q->block_elems);
        abort();
    }
    q->to_f32(src, dst, n);
}

char *wkv__qtype_list(char *buf, size_t cap, int how)
{
    /* in the order the numbers go: type numbers, or ftypes (which are not in order) */
    const wkv__qtype *order[WKV_TYPE_MAX + 1];
    int n = 0;
    for (int t = 0; t <= WKV_TYPE_MAX; t++)
        if (wkv__qtype_of(t))
            order[n++] = wkv__qtype_of(t);
    for (int i = 1; how == WKV_QLIST_FTYPES && i < n; i++)
        for (int j = i; j > 0 && order[j - 1]->ftype > order[j]->ftype; j--) {
            const wkv__qtype *s = order[j];
            order[j] = order[j - 1];
            order[j - 1] = s;
        }
    size_t at = 0;
    if (cap)
        buf[0] = '\0';
    for (int i = 0; i < n && at < cap; i++) {
        const char *sep = i == 0 ? "" : i == n - 1 ? " or " : ", ";
        int w = how == WKV_QLIST_NAMES
                    ? snprintf(buf + at, cap - at, "%s%s", sep, order[i]->name)
                    : snprintf(buf + at, cap - at, "%s%d = %s", sep,
                               how == WKV_QLIST_TYPES ? order[i]->type : order[i]->ftype,
                               order[i]->name);
        if (w < 0)
            break;
        at += (size_t)w;
    }
    return buf;
}

/* ---------------------------------------------------------------- to f32 */

void wkv__to_f32_f32(const uint8_t *src, float *dst, size_t n)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(dst, src, n * sizeof *dst);
#else
    for (size_t i = 0; i < n; i++) {
        const uint8_t *p = src + 4 * i;
        uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                     (uint32_t)p[3] << 24;
        memcpy(&dst[i], &u, sizeof u);
    }
#endif
}

void wkv__to_f32_f16(const uint8_t *src, float *dst, size_t n)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (((uintptr_t)src & 1) == 0) {
        wkv__f16_to_f32_row((const uint16_t *)(const void *)src, dst, n);
        return;
    }
    /* the file's bytes at an odd offset (a tensor's data follows its name): through an
     * aligned copy, a chunk at a time, to keep the conversion instructions */
    uint16_t h[512];
    for (size_t i = 0; i < n; i += 512) {
        size_t c = n - i < 512 ? n - i : 512;
        memcpy(h, src + 2 * i, c * sizeof *h);
        wkv__f16_to_f32_row(h, dst + i, c);
    }
#else
    for (size_t i = 0; i < n; i++)
        dst[i] = wkv__f16_to_f32((uint16_t)(src[2 * i] | src[2 * i + 1] << 8));
#endif
}

static float half_at(const uint8_t *p)
{
    return wkv__f16_to_f32((uint16_t)(p[0] | p[1] << 8));
}

static uint32_t u32_at(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

/* The q4/q5/q8 kind of block, decoded from q's layout.  Inlined per type with a
 * constant row (the wrappers below), so the layout folds as in a hand-written decoder:
 * dequantizing is on the widening paths (the encoder's layers, the decoder's prompt),
 * not only at load. */
static inline __attribute__((always_inline)) void blocks_to_f32(const wkv__qtype *q,
                                                                const uint8_t *src, float *dst,
                                                                size_t n)
{
    const size_t bb = (size_t)q->block_bytes;
    for (size_t b = 0; b < n / WKV_QK; b++, src += bb, dst += WKV_QK) {
        const float d = half_at(src);
        const uint8_t *qs = src + q->qs;
        if (q->code_bits == 8) { /* no minimum: nothing added, so -0 stays -0 */
            for (int j = 0; j < WKV_QK; j++)
                dst[j] = (float)((int)qs[j] - (qs[j] & 0x80 ? 256 : 0)) * d;
            continue;
        }
        const float m = q->m >= 0 ? half_at(src + q->m) : 0.0f;
        const uint32_t qh = q->qh >= 0 ? u32_at(src + q->qh) : 0; /* fifth bits */
        for (int j = 0; j < WKV_QK / 2; j++) {
            int lo = (qs[j] & 0x0f) | (int)((qh >> j) & 1u) << 4;
            int hi = (qs[j] >> 4) | (int)((qh >> (j + WKV_QK / 2)) & 1u) << 4;
            dst[j] = (float)(lo + q->off) * d + m;
            dst[j + WKV_QK / 2] = (float)(hi + q->off) * d + m;
        }
    }
}

void wkv__to_f32_q4_0(const uint8_t *src, float *dst, size_t n)
{
    blocks_to_f32(wkv__qtype_of(WKV_TYPE_Q4_0), src, dst, n);
}

void wkv__to_f32_q4_1(const uint8_t *src, float *dst, size_t n)
{
    blocks_to_f32(wkv__qtype_of(WKV_TYPE_Q4_1), src, dst, n);
}

void wkv__to_f32_q5_0(const uint8_t *src, float *dst, size_t n)
{
    blocks_to_f32(wkv__qtype_of(WKV_TYPE_Q5_0), src, dst, n);
}

void wkv__to_f32_q5_1(const uint8_t *src, float *dst, size_t n)
{
    blocks_to_f32(wkv__qtype_of(WKV_TYPE_Q5_1), src, dst, n);
}

void wkv__to_f32_q8_0(const uint8_t *src, float *dst, size_t n)
{
    blocks_to_f32(wkv__qtype_of(WKV_TYPE_Q8_0), src, dst, n);
}
