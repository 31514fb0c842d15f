/* A plain random model of a preset size, loaded, and a random mel window for it:
 * what the encoder tests (threads, compute) run on. */
#ifndef WKV_RANDOM_MODEL_H
#define WKV_RANDOM_MODEL_H

#include "whisperkv.h"

#include <stdint.h>

/* gen_params_preset(size) written to a temporary file, loaded, the file removed;
 * NULL (after a failed CHECK) on error. */
wkv_model *tu_random_model(const char *size);
/* n_mels x WKV_N_FRAMES values uniform in [-1, 1) from an LCG seeded by seed (malloc'd). */
float *tu_random_mel(const wkv_hparams *hp, uint32_t seed);

#endif
