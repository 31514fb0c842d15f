/* The Silero VAD network as whisper.cpp's ggml file holds it (vad_model.c reads it,
 * vad.c runs it).  The architecture is fixed: whisper.cpp's graph hard-codes it, so
 * the loader refuses any other shape rather than guess. */
#ifndef WKV_VAD_INTERNAL_H
#define WKV_VAD_INTERNAL_H

#include "whisperkv.h"

#define WKV_VAD_PAD 64      /* reflection padding on each side of a chunk */
#define WKV_VAD_NFFT 256    /* STFT kernel length */
#define WKV_VAD_HOP 128     /* STFT stride (= lstm_input_size in the file) */
#define WKV_VAD_FRAMES 4    /* (512 + 2 * 64 - 256) / 128 + 1 */
#define WKV_VAD_BINS 129    /* NFFT / 2 + 1 */
#define WKV_VAD_HIDDEN 128  /* LSTM state */
#define WKV_VAD_LAYERS 4    /* encoder convolutions */
#define WKV_VAD_KERNEL 3

/* in, out channels and stride of each encoder layer */
extern const int wkv__vad_enc_shape[WKV_VAD_LAYERS][3];

struct wkv_vad_model {
    int version[3];
    /* every f16 tensor widened to f32 (exact); PyTorch layouts, row-major */
    float *basis;                     /* [258][256] STFT kernel */
    float *enc_w[WKV_VAD_LAYERS];     /* [out][in][3] */
    float *enc_b[WKV_VAD_LAYERS];     /* [out] */
    float *w_ih, *w_hh, *b_ih, *b_hh; /* [512][128], [512] */
    float *out_w;                     /* [128] final 1x1 convolution */
    float out_b;
    float *arena;                     /* owns all of the above */
};

#endif
