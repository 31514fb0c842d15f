/* Silero VAD's network for one 512-sample chunk, as whisper.cpp 1.9.3's ggml graph
 * computes it, and the stream that feeds it chunks on one grid.
 *
 * Numerics that decide the last digits: ggml_conv_1d copies its input into an F16
 * im2col matrix before multiplying by the F16 kernel, so every convolution input (the
 * padded audio, the STFT magnitudes, each encoder layer's input, ReLU(h) before the
 * output convolution) is rounded to half here too; the products of two halves are
 * exact in f32 and the sums f32, so only the summation order differs from ggml's
 * (a few 1e-4 on a probability at most).  The LSTM is f32.  Each chunk is processed
 * alone (whisper.cpp never prepends the previous chunk's samples); only the LSTM
 * state is carried from chunk to chunk. */
#include "base/blas.h"
#include "base/util.h"
#include "base/f16.h"
#include "base/sgemm.h"
#include "vad/vad_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PADDED (WKV_VAD_CHUNK + 2 * WKV_VAD_PAD)       /* 640 */
#define BASIS_ROWS (2 * WKV_VAD_BINS)                   /* 258: cos then -sin */
#define GATES (4 * WKV_VAD_HIDDEN)                      /* i, f, g, o */
#define MAX_COL (WKV_VAD_FRAMES * 129 * WKV_VAD_KERNEL) /* layer 0's im2col */
#define MAX_ACT (WKV_VAD_FRAMES * 128)

struct wkv_vad_stream {
    const wkv_vad_model *m;
    float h[WKV_VAD_HIDDEN], c[WKV_VAD_HIDDEN];
    float pending[WKV_VAD_CHUNK];
    int n_pending;
    /* scratch of one chunk */
    float padded[PADDED];
    float frames[WKV_VAD_FRAMES * WKV_VAD_NFFT];
    float spec[WKV_VAD_FRAMES * BASIS_ROWS];
    float act[2][MAX_ACT];
    float col[MAX_COL];
    float gates[GATES], gates_hh[GATES];
};

static float round_f16(float x)
{
    return wkv__f16_to_f32(wkv__f32_to_f16(x));
}

static float sigmoid(float x)
{
    return 1.0f / (1.0f + expf(-x));
}

/* Reflection padding (numpy "reflect": the edge sample is not repeated), rounded to
 * f16, then the STFT as a stride-128 convolution with the file's basis and its
 * magnitude: out[t][c], 4 frames x 129 bins. */
static void stft_magnitude(wkv_vad_stream *s, const float *x, float *out)
{
    float *p = s->padded;
    for (int j = 0; j < WKV_VAD_CHUNK; j++)
        p[WKV_VAD_PAD + j] = round_f16(x[j]);
    for (int k = 1; k <= WKV_VAD_PAD; k++) {
        p[WKV_VAD_PAD - k] = p[WKV_VAD_PAD + k];
        p[WKV_VAD_PAD + WKV_VAD_CHUNK - 1 + k] = p[WKV_VAD_PAD + WKV_VAD_CHUNK - 1 - k];
    }
    /* frame t is p[128 t .. 128 t + 255] (BLAS wants them apart, not overlapping) */
    for (int t = 0; t < WKV_VAD_FRAMES; t++)
        memcpy(s->frames + t * WKV_VAD_NFFT, p + t * WKV_VAD_HOP, WKV_VAD_NFFT * sizeof *p);
    wkv__sgemm(1, WKV_VAD_FRAMES, BASIS_ROWS,
                WKV_VAD_NFFT, 1.0f, s->frames, WKV_VAD_NFFT, s->m->basis, WKV_VAD_NFFT, 0.0f,
                s->spec, BASIS_ROWS);
    for (int t = 0; t < WKV_VAD_FRAMES; t++) {
        const float *re = s->spec + t * BASIS_ROWS, *im = re + WKV_VAD_BINS;
        for (int c = 0; c < WKV_VAD_BINS; c++)
            out[t * WKV_VAD_BINS + c] = sqrtf(re[c] * re[c] + im[c] * im[c]);
    }
}

/* One encoder layer: in[len][ic] (time-major) -> out[*len_out][oc], kernel 3, zero
 * padding 1, the given stride, bias, ReLU.  Its input is rounded to f16 (in place)
 * as ggml's im2col copy rounds it. */
static void conv_layer(wkv_vad_stream *s, int l, float *in, int len, float *out,
                       int *len_out)
{
    const int ic = wkv__vad_enc_shape[l][0], oc = wkv__vad_enc_shape[l][1];
    const int stride = wkv__vad_enc_shape[l][2], K = WKV_VAD_KERNEL;
    const int lo = (len + 2 - K) / stride + 1;
    for (int j = 0; j < len * ic; j++) /* once per value, not per copy */
        in[j] = round_f16(in[j]);
    for (int t = 0; t < lo; t++)
        for (int i = 0; i < ic; i++)
            for (int k = 0; k < K; k++) {
                int at = stride * t + k - 1;
                s->col[(t * ic + i) * K + k] = at >= 0 && at < len ? in[at * ic + i] : 0.0f;
            }
    wkv__sgemm(1, lo, oc, ic * K, 1.0f, s->col, ic * K,
                s->m->enc_w[l], ic * K, 0.0f, out, oc);
    const float *b = s->m->enc_b[l];
    for (int t = 0; t < lo; t++)
        for (int o = 0; o < oc; o++) {
            float v = out[t * oc + o] + b[o];
            out[t * oc + o] = v > 0.0f ? v : 0.0f;
        }
    *len_out = lo;
}

/* PyTorch LSTMCell on u: (W_ih u + b_ih) + (W_hh h + b_hh), gates i, f, g, o. */
static void lstm_step(wkv_vad_stream *s, const float *u)
{
    const wkv_vad_model *m = s->m;
    const int H = WKV_VAD_HIDDEN;
    wkv__sgemv(GATES, H, 1.0f, m->w_ih, H, u, 0.0f, s->gates);
    wkv__sgemv(GATES, H, 1.0f, m->w_hh, H, s->h, 0.0f, s->gates_hh);
    for (int j = 0; j < GATES; j++)
        s->gates[j] = (s->gates[j] + m->b_ih[j]) + (s->gates_hh[j] + m->b_hh[j]);
    for (int j = 0; j < H; j++) {
        float i = sigmoid(s->gates[j]), f = sigmoid(s->gates[H + j]);
        float g = tanhf(s->gates[2 * H + j]), o = sigmoid(s->gates[3 * H + j]);
        s->c[j] = f * s->c[j] + i * g;
        s->h[j] = o * tanhf(s->c[j]);
    }
}

/* The speech probability of one chunk; advances the LSTM state. */
static float chunk_prob(wkv_vad_stream *s, const float *x)
{
    float *a = s->act[0], *b = s->act[1];
    int len = WKV_VAD_FRAMES;
    stft_magnitude(s, x, a);
    for (int l = 0; l < WKV_VAD_LAYERS; l++) {
        conv_layer(s, l, a, len, b, &len);
        float *t = a;
        a = b;
        b = t;
    }
    lstm_step(s, a); /* len is 1: a holds the 128-vector */
    /* the 1x1 output convolution: its input ReLU(h) is rounded to f16 too */
    float z = 0.0f;
    for (int k = 0; k < WKV_VAD_HIDDEN; k++)
        z += s->m->out_w[k] * round_f16(s->h[k] > 0.0f ? s->h[k] : 0.0f);
    return sigmoid(z + s->m->out_b);
}

/* ---------------------------------------------------------------- stream */

wkv_vad_stream *wkv_vad_stream_new(const wkv_vad_model *model, char **error)
{
    if (!model) {
        wkv__set_error(error, "no VAD model given");
        return NULL;
    }
    wkv_vad_stream *s = wkv__calloc(1, sizeof *s);
    if (!s) {
        wkv__set_error(error, "out of memory");
        return NULL;
    }
    s->m = model;
    wkv__blas_single_threaded(); /* small products: OpenBLAS's threads would only cost */
    return s;
}

void wkv_vad_stream_free(wkv_vad_stream *s)
{
    wkv__free(s);
}

void wkv_vad_stream_reset(wkv_vad_stream *s)
{
    memset(s->h, 0, sizeof s->h);
    memset(s->c, 0, sizeof s->c);
    s->n_pending = 0;
}

int wkv_vad_pending(const wkv_vad_stream *s)
{
    return s->n_pending;
}

size_t wkv_vad_push(wkv_vad_stream *s, const float *pcm, size_t n, float *probs)
{
    size_t out = 0;
    if (n == 0) /* pcm may be NULL then */
        return 0;
    if (s->n_pending > 0) {
        size_t take = (size_t)(WKV_VAD_CHUNK - s->n_pending);
        if (take > n)
            take = n;
        memcpy(s->pending + s->n_pending, pcm, take * sizeof *pcm);
        s->n_pending += (int)take;
        pcm += take;
        n -= take;
        if (s->n_pending < WKV_VAD_CHUNK)
            return 0;
        probs[out++] = chunk_prob(s, s->pending);
        s->n_pending = 0;
    }
    for (; n >= WKV_VAD_CHUNK; pcm += WKV_VAD_CHUNK, n -= WKV_VAD_CHUNK)
        probs[out++] = chunk_prob(s, pcm);
    if (n > 0) {
        memcpy(s->pending, pcm, n * sizeof *pcm);
        s->n_pending = (int)n;
    }
    return out;
}

int wkv_vad_finish(wkv_vad_stream *s, float *prob)
{
    if (s->n_pending == 0)
        return 0;
    memset(s->pending + s->n_pending, 0, (size_t)(WKV_VAD_CHUNK - s->n_pending) * sizeof(float));
    *prob = chunk_prob(s, s->pending);
    s->n_pending = 0;
    return 1;
}

int64_t wkv_vad_probs(const wkv_vad_model *model, const float *pcm, size_t n, float **probs,
                      char **error)
{
    *probs = NULL;
    if (n == 0)
        return 0;
    if (!pcm) {
        wkv__set_error(error, "no samples given");
        return -1;
    }
    size_t cap = WKV_VAD_MAX_PROBS(n);
    float *p = wkv__malloc(cap * sizeof *p);
    wkv_vad_stream *s = wkv_vad_stream_new(model, error);
    if (!p || !s) {
        if (!p)
            wkv__set_error(error, "out of memory for %zu probabilities", cap);
        wkv__free(p);
        wkv_vad_stream_free(s);
        return -1;
    }
    size_t got = wkv_vad_push(s, pcm, n, p);
    got += (size_t)wkv_vad_finish(s, p + got);
    wkv_vad_stream_free(s);
    *probs = p;
    return (int64_t)got;
}
