/* Dequantization of ggml quantized blocks into f32: see quant.h. */
#include "model/quant.h"

#include "base/f16.h"

#include <string.h>

size_t wkv_quant_block_bytes(int type)
{
    switch (type) {
    case WKV_TYPE_Q4_0: return 2 + WKV_QK / 2;
    case WKV_TYPE_Q4_1: return 4 + WKV_QK / 2;
    case WKV_TYPE_Q5_0: return 2 + 4 + WKV_QK / 2;
    case WKV_TYPE_Q5_1: return 4 + 4 + WKV_QK / 2;
    case WKV_TYPE_Q8_0: return 2 + WKV_QK;
    default: return 0;
    }
}

const char *wkv_quant_type_name(int type)
{
    switch (type) {
    case WKV_TYPE_Q4_0: return "q4_0";
    case WKV_TYPE_Q4_1: return "q4_1";
    case WKV_TYPE_Q5_0: return "q5_0";
    case WKV_TYPE_Q5_1: return "q5_1";
    case WKV_TYPE_Q8_0: return "q8_0";
    default: return NULL;
    }
}

int wkv_quant_type_of_ftype(int ftype)
{
    switch (ftype) {
    case 2: return WKV_TYPE_Q4_0;
    case 3: return WKV_TYPE_Q4_1;
    case 7: return WKV_TYPE_Q8_0;
    case 8: return WKV_TYPE_Q5_0;
    case 9: return WKV_TYPE_Q5_1;
    default: return -1;
    }
}

static float half_at(const uint8_t *p)
{
    return wkv_f16_to_f32((uint16_t)(p[0] | p[1] << 8));
}

static uint32_t u32_at(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

/* 4-bit types: q = nibble, x = (q + off) * d + m */
static void dq4(const uint8_t *qs, float d, float m, int off, float *y)
{
    for (int j = 0; j < WKV_QK / 2; j++) {
        y[j] = (float)((qs[j] & 0x0f) + off) * d + m;
        y[j + WKV_QK / 2] = (float)((qs[j] >> 4) + off) * d + m;
    }
}

/* 5-bit types: the nibble plus bit j of qh as bit 4 */
static void dq5(const uint8_t *qs, uint32_t qh, float d, float m, int off, float *y)
{
    for (int j = 0; j < WKV_QK / 2; j++) {
        int lo = (qs[j] & 0x0f) | (int)((qh >> j) & 1u) << 4;
        int hi = (qs[j] >> 4) | (int)((qh >> (j + WKV_QK / 2)) & 1u) << 4;
        y[j] = (float)(lo + off) * d + m;
        y[j + WKV_QK / 2] = (float)(hi + off) * d + m;
    }
}

void wkv_dequantize(int type, const uint8_t *src, float *dst, size_t n_blocks)
{
    const size_t bb = wkv_quant_block_bytes(type);
    for (size_t b = 0; b < n_blocks; b++, src += bb, dst += WKV_QK) {
        switch (type) {
        case WKV_TYPE_Q4_0:
            dq4(src + 2, half_at(src), 0.0f, -8, dst);
            break;
        case WKV_TYPE_Q4_1:
            dq4(src + 4, half_at(src), half_at(src + 2), 0, dst);
            break;
        case WKV_TYPE_Q5_0:
            dq5(src + 6, u32_at(src + 2), half_at(src), 0.0f, -16, dst);
            break;
        case WKV_TYPE_Q5_1:
            dq5(src + 8, u32_at(src + 4), half_at(src), half_at(src + 2), 0, dst);
            break;
        case WKV_TYPE_Q8_0: {
            const float d = half_at(src);
            for (int j = 0; j < WKV_QK; j++)
                dst[j] = (float)((int)src[2 + j] - (src[2 + j] & 0x80 ? 256 : 0)) * d;
            break;
        }
        default:
            memset(dst, 0, WKV_QK * sizeof *dst);
            break;
        }
    }
}
