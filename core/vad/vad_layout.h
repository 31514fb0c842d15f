/* The ggml Silero VAD file's fixed layout (whisper.cpp's
 * models/convert-silero-vad-to-ggml.py): the header values after the version and the
 * 15 tensor records in file order.  Shared by the loader (vad_model.c), which must
 * find exactly this, and the fuzzer's seed generator (fuzz/gen_vad_corpus.c), which
 * writes it. */
#ifndef WKV_VAD_LAYOUT_H
#define WKV_VAD_LAYOUT_H

#include <stdint.h>

#define WKV_VAD_MODEL_TYPE "silero-16k"
#define WKV_VAD_N_HEADER 19
#define WKV_VAD_N_TENSORS 15

/* after magic, model type and version: n_window, n_context (stored, never used),
 * n_encoder_layers, each layer's in, out, kernel, then lstm_input_size,
 * lstm_hidden_size, final_conv_in, final_conv_out */
static const int32_t wkv__vad_header[WKV_VAD_N_HEADER] = {
    512, 64, 4, 129, 128, 3, 128, 64, 3, 64, 64, 3, 64, 128, 3, 128, 128, 128, 1,
};

typedef struct {
    const char *name;
    int n_dims;
    int32_t ne[3]; /* innermost first, as in the file */
    int type;      /* 0 F32, 1 F16 */
} wkv__vad_tensor_def;

static const wkv__vad_tensor_def wkv__vad_tensors[WKV_VAD_N_TENSORS] = {
    {"_model.encoder.0.reparam_conv.weight", 3, {3, 129, 128}, 1},
    {"_model.encoder.0.reparam_conv.bias", 1, {128}, 0},
    {"_model.encoder.1.reparam_conv.weight", 3, {3, 128, 64}, 1},
    {"_model.encoder.1.reparam_conv.bias", 1, {64}, 0},
    {"_model.encoder.2.reparam_conv.weight", 3, {3, 64, 64}, 1},
    {"_model.encoder.2.reparam_conv.bias", 1, {64}, 0},
    {"_model.encoder.3.reparam_conv.weight", 3, {3, 64, 128}, 1},
    {"_model.encoder.3.reparam_conv.bias", 1, {128}, 0},
    {"_model.decoder.rnn.weight_ih", 2, {128, 512}, 0},
    {"_model.decoder.rnn.weight_hh", 2, {128, 512}, 0},
    {"_model.decoder.rnn.bias_ih", 1, {512}, 0},
    {"_model.decoder.rnn.bias_hh", 1, {512}, 0},
    {"_model.decoder.decoder.2.weight", 1, {128}, 1},
    {"_model.decoder.decoder.2.bias", 0, {0}, 0}, /* a scalar: one value */
    {"_model.stft.forward_basis_buffer", 3, {256, 1, 258}, 1},
};

#endif
