/* IEEE half <-> float: one value (exact widening; rounding to nearest even) and whole
 * rows on the CPU's conversion instructions (F16C, AVX-512). */
#ifndef WKV_F16_H
#define WKV_F16_H

#include <stddef.h>
#include <stdint.h>

float wkv__f16_to_f32(uint16_t h);
uint16_t wkv__f32_to_f16(float f);
/* n halves to floats (exact). */
void wkv__f16_to_f32_row(const uint16_t *src, float *dst, size_t n);
/* n floats to halves, round to nearest even. */
void wkv__f32_to_f16_row(const float *src, uint16_t *dst, size_t n);

#endif
