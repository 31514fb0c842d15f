/* The tests' own map from a tensor name to where the loaded model keeps it (white
 * box: test_loader and test_quant check the loader's pointers against it). */
#ifndef WKV_WEIGHT_LOOKUP_H
#define WKV_WEIGHT_LOOKUP_H

#include "model/model.h"

/* The f32 pointer of a tensor, or NULL (unknown name, or kept as f16). */
const float *weight_for(const wkv_model *m, const char *name);
/* The typed view of a decoder matrix (wkv__layer's attn_q ... mlp2, the token
 * embedding's tok), or NULL for any other name. */
const wkv__mat *mat_for(const wkv_model *m, const char *name);
/* The f16 copy of a decoder matrix (f16 files keep those in m->arena16 and set their
 * f32 pointer to NULL), or NULL. */
const uint16_t *half_for(const wkv_model *m, const char *name);
/* The blocks of a decoder matrix kept quantized (quantized files, in m->arenaq; f32
 * pointer NULL), or NULL. */
const uint8_t *blocks_for(const wkv_model *m, const char *name);

#endif
