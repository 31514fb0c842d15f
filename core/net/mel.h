/* The log-mel front end (the public wkv_mel_* are in whisperkv.h). */
#ifndef WKV_MEL_H
#define WKV_MEL_H

#include "whisperkv.h"

#include <stddef.h>

/* mel.c: wkv_mel_compute on a filter bank given directly (n_mels x 201). */
wkv_mel *wkv__mel_compute_filters(const float *filters, int n_mels, const float *pcm, size_t n, int threads, char **error);


#endif
