/* Random-weight Whisper models in the whisper.cpp ggml format (the layout of
 * whisper.cpp's models/convert-pt-to-ggml.py), for tests: the `gen_model` command and
 * any test that needs a model file.
 *
 * The weights come from a deterministic PRNG seeded by (seed, tensor name), so the
 * same parameters always give the same bytes, and an f32 and an f16 file of the same
 * seed hold the same values up to f16 rounding.  Matrices are ~N(0, 1/fan_in), layer
 * norm weights ~1, biases small, the encoder positional embedding is the reference
 * sinusoids and the decoder's small random values.
 *
 * Without a vocabulary file the model is self-contained: a synthetic vocabulary (the
 * 256 single bytes in GPT-2 byte order, then distinct printable multi-byte tokens,
 * each the concatenation of two earlier ones) and a computed Slaney mel filter bank
 * (librosa mel(sr=16000, n_fft=400, n_mels, htk=False, norm='slaney')).
 *
 * Independent of the core library on purpose: it does not use the loader it tests. */
#ifndef WKV_GENLIB_H
#define WKV_GENLIB_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    int n_vocab;            /* 51864 | 51865 | 51866; 0: from vocab_from, else 51864 */
    int n_audio_ctx;        /* 1500 */
    int n_text_ctx;         /* 448 */
    int n_state;
    int n_head;
    int n_audio_layer;
    int n_text_layer;
    int n_mels;             /* 80 | 128; 0: from vocab_from, else 80 */
    int ftype;              /* 0 f32, 1 f16 (matrices f16, the rest f32), or quantized
                               as whisper.cpp's quantizer does it to an f16 model: 2 q4_0,
                               3 q4_1, 7 q8_0, 8 q5_0, 9 q5_1 (2-D matrices quantized from
                               the f32 values, conv weights f16, the rest f32; the header
                               says 2000 + ftype; needs n_state % 32 == 0) */
    uint64_t seed;
    const char *vocab_from; /* copy mel filters + vocabulary from this ggml file */
    int n_tokens;           /* synthetic vocabulary size; 0: 50257 */
    int conv_bias_1d;       /* store conv biases as [n_state] instead of [n_state, 1] */
} gen_params;

/* Fills p for "micro" (64 state, 2 heads, 2+2 layers), "tiny" (384, 6, 4+4), "base"
 * (512, 8, 6+6), "small" (768, 12, 12+12) or "large-v3-turbo" (1280, 20, 32 encoder +
 * 4 decoder layers, 128 mels, 51866 tokens); all with n_audio_ctx 1500, n_text_ctx 448,
 * f16, seed 1.
 * Returns 0, or -1 for an unknown size. */
int gen_params_preset(gen_params *p, const char *size);

/* Where the parts of a generated file are, for tests that corrupt it. */
typedef struct {
    char name[64];
    uint64_t hdr_off;    /* i32 n_dims, i32 name_len, i32 type */
    uint64_t ne_off;     /* n_dims x i32 */
    uint64_t name_off;
    uint64_t data_off;
    uint64_t data_bytes;
    uint64_t end_off;    /* = next tensor's hdr_off */
    int n_dims, type;
    int64_t ne[4];
} gen_tensor_info;

typedef struct {
    uint64_t hparams_off;  /* 4: the 11 i32 */
    uint64_t mel_off;      /* i32 n_mel, i32 n_fft, then the filters */
    uint64_t vocab_off;    /* i32 n, then the tokens */
    uint64_t vocab_end;    /* first tensor header (= file size for a vocab-only file) */
    int n_vocab, n_mels, n_tokens;
    int n_tensors;
    gen_tensor_info *tensors;
    uint64_t size;
} gen_layout;

/* Builds the whole file in memory: *data (malloc'd) of *size bytes; layout may be
 * NULL.  Returns 0, or -1 with a malloc'd message in *error (if error is not NULL). */
int gen_model_build(const gen_params *p, uint8_t **data, size_t *size, gen_layout *layout,
                    char **error);
void gen_layout_free(gen_layout *layout);
/* The index of the tensor of that name in layout->tensors, or -1. */
int gen_layout_find(const gen_layout *layout, const char *name);

/* Writes the model to path (streamed: no copy of the whole file in memory). */
int gen_model_write(const char *path, const gen_params *p, char **error);

/* Writes bytes to a file; 0 or -1. */
int gen_write_file(const char *path, const void *data, size_t size);

/* The Slaney mel filter bank (n_mels x 201, row-major) into out. */
void gen_mel_filters(int n_mels, float *out);

/* "f32", "f16", "q4_0", "q4_1", "q8_0", "q5_0", "q5_1" <-> ftype (0, 1, 2, 3, 7, 8, 9);
 * -1 / NULL when unknown. */
int gen_ftype_parse(const char *name);
const char *gen_ftype_name(int ftype);
/* The generator's types for usage lines and messages, in ftype order, joined by sep,
 * into buf (returned): "f32|f16|q4_0|..."; quantized: only those; numbered:
 * "0 (f32), 1 (f16), ...". */
char *gen_ftype_list(char *buf, size_t cap, const char *sep, int quantized, int numbered);
/* The ggml tensor type of a quantized ftype (2 Q4_0, 3 Q4_1, 6 Q5_0, 7 Q5_1, 8 Q8_0),
 * or -1; and the bytes of one 32-value block of such a type (0 for others). */
int gen_quant_type(int ftype);
size_t gen_quant_block_bytes(int type);
/* Quantizes 32 values into one block of ggml type `type` (round to nearest; q8_0
 * d = amax / 127; q4_0 / q5_0 d = signed max / -8 / -16; q4_1 / q5_1 from min and max). */
void gen_quantize_block(int type, const float *x, uint8_t *out);
/* Whether a tensor stays f32 in every file type (the conv biases and both positional
 * embeddings, as whisper.cpp's converter and quantizer keep them). */
int gen_tensor_keeps_f32(const char *name);

/* f32 -> f16 bits, round to nearest even; and back. */
uint16_t gen_f32_to_f16(float f);
float gen_f16_to_f32(uint16_t h);

#endif
