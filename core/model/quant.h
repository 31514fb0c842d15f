/* ggml block quantization as whisper.cpp writes it (quantization version 2: f16 block
 * scales), for dequantizing a quantized model file into f32 at load.
 *
 * Every type packs 32 consecutive elements along ne[0] into one block:
 *   q4_0 (type 2): f16 d, 16 bytes of nibbles            x = (q - 8) * d      18 bytes
 *   q4_1 (type 3): f16 d, f16 m, 16 bytes of nibbles     x = q * d + m        20 bytes
 *   q5_0 (type 6): f16 d, u32 high bits, 16 bytes         x = (q - 16) * d     22 bytes
 *   q5_1 (type 7): f16 d, f16 m, u32 high bits, 16 bytes  x = q * d + m        24 bytes
 *   q8_0 (type 8): f16 d, 32 signed bytes                 x = q * d            34 bytes
 * The low nibble of byte j is element j, the high nibble element j + 16; for the 5-bit
 * types bit j of the (little-endian) u32 is the fifth bit of element j (j < 32). */
#ifndef WKV_QUANT_H
#define WKV_QUANT_H

#include <stddef.h>
#include <stdint.h>

#define WKV_QK 32 /* elements per block */

/* ggml tensor type numbers (the `type` field of a tensor header) */
enum {
    WKV_TYPE_F32 = 0,
    WKV_TYPE_F16 = 1,
    WKV_TYPE_Q4_0 = 2,
    WKV_TYPE_Q4_1 = 3,
    WKV_TYPE_Q5_0 = 6,
    WKV_TYPE_Q5_1 = 7,
    WKV_TYPE_Q8_0 = 8,
};

/* The quantization version (ftype / 1000) whose block layout this file decodes. */
#define WKV_QNT_VERSION 2

/* Bytes of one 32-element block of a quantized type; 0 if `type` is not one. */
size_t wkv_quant_block_bytes(int type);
/* "q4_0", ... for a quantized type, else NULL. */
const char *wkv_quant_type_name(int type);
/* The quantized tensor type a file ftype (ftype % 1000: 2, 3, 7, 8, 9) stands for,
 * or -1. */
int wkv_quant_type_of_ftype(int ftype);
/* Decodes n_blocks consecutive blocks of `type` at src (any alignment) into
 * 32 * n_blocks floats.  `type` must be a quantized type. */
void wkv_dequantize(int type, const uint8_t *src, float *dst, size_t n_blocks);

#endif
