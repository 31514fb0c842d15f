/* whisperkv: OpenAI Whisper speech-to-text in C, on OpenBLAS, with KV caches.
 *
 * The data's path: a ggml model file (wkv_model_load) and 16 kHz mono float PCM
 * (wkv_mel_compute) give a log-mel; a decoding context (wkv_context_new) encodes one
 * 30-s window of it (wkv_encode, which also fills the cross-attention KV cache),
 * decodes tokens through the self-attention KV cache (wkv_decode_window) and the
 * long-form loop (wkv_transcribe) cuts the tokens into timed segments; for audio that
 * arrives as it is spoken, a live stream (wkv_stream_new) re-runs over the recent audio
 * and commits the text two runs agree on.
 *
 * Ownership and threads: a wkv_model is immutable once loaded and may be shared by
 * any number of contexts on any number of threads.  A wkv_context owns every mutable
 * buffer and belongs to one thread at a time.  Functions that can fail return NULL or
 * a negative value and, when `error` is not NULL, store a malloc'd message there that
 * the caller frees with free().
 *
 * The ABI: the shared library exports exactly the functions declared WKV_API here, in
 * whisperkv_stream.h (live streams, included at the end) and in whisperkv_debug.h
 * (the knobs kept for tests, benchmarks and diagnostics); its soname changes with
 * WKV_VERSION_MAJOR (docs/architecture.md, "The library's ABI").
 */
#ifndef WHISPERKV_H
#define WHISPERKV_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Marks the library's exported functions: it is built with hidden visibility, so
 * anything else stays inside it. */
#if defined(__GNUC__) || defined(__clang__)
#define WKV_API __attribute__((visibility("default")))
#else
#define WKV_API
#endif

/* The version of these headers; meson.build checks it against the project's version.
 * wkv_version() gives the library's own, which may be newer. */
#define WKV_VERSION_MAJOR 0
#define WKV_VERSION_MINOR 1
#define WKV_VERSION_PATCH 0
#define WKV_VERSION_STRING "0.1.0"

/* "MAJOR.MINOR.PATCH" of the library the program runs with. */
WKV_API const char *wkv_version(void);

#define WKV_SAMPLE_RATE 16000
#define WKV_N_FFT 400
#define WKV_HOP 160
#define WKV_N_SAMPLES 480000 /* one 30-s window */
#define WKV_N_FRAMES 3000    /* mel frames in one window */
#define WKV_N_TIMESTAMPS 1501 /* <|0.00|> ... <|30.00|> */

/* ---------------------------------------------------------------- model */

/* Hyper-parameters exactly as stored in the ggml file header. */
typedef struct {
    int32_t n_vocab, n_audio_ctx, n_audio_state, n_audio_head, n_audio_layer;
    int32_t n_text_ctx, n_text_state, n_text_head, n_text_layer, n_mels, ftype;
} wkv_hparams;

/* Special token ids; they depend only on n_vocab, in the order of openai/whisper's
 * tokenizer.py: eot (50256 English-only, 50257 multilingual), sot, the language tokens
 * (99; 100 with n_vocab 51866, large-v3), translate, transcribe, startoflm,
 * startofprev, nospeech, notimestamps, then the timestamps from 0.00 s. */
typedef struct {
    int eot, sot, lang_begin, n_langs, translate, transcribe, startoflm, startofprev,
        nospeech, notimestamps, timestamp_begin;
} wkv_specials;

typedef struct wkv_model wkv_model;

/* Reads and validates a whisper.cpp ggml file: f32, f16, or quantized by whisper.cpp
 * (q4_0, q4_1, q5_0, q5_1 or q8_0, quantization version 2).  Returns NULL on any
 * problem with a message naming the file, the byte offset and what was wrong. */
WKV_API wkv_model *wkv_model_load(const char *path, char **error);
/* The same from a whole file image in memory (messages name it "(memory)").  The model
 * keeps no pointer into `data`, which the caller may free once this returns. */
WKV_API wkv_model *wkv_model_load_memory(const void *data, size_t size, char **error);
WKV_API void wkv_model_free(wkv_model *model);

WKV_API const wkv_hparams *wkv_model_hparams(const wkv_model *model);
WKV_API const wkv_specials *wkv_model_specials(const wkv_model *model);
WKV_API int wkv_model_is_multilingual(const wkv_model *model);
/* The mel filter bank stored in the file: n_mels x 201, row-major. */
WKV_API const float *wkv_model_mel_filters(const wkv_model *model);

/* ---------------------------------------------------------------- vocabulary */

/* Raw bytes of a token (a UTF-8 fragment, maybe incomplete).  Special tokens give
 * their "<|name|>" spelling, timestamps "<|1.23|>".  NULL for an invalid id. */
WKV_API const char *wkv_token_bytes(const wkv_model *model, int id, size_t *len);
/* Language token id for a code such as "en", or -1. */
WKV_API int wkv_lang_token(const wkv_model *model, const char *code);
/* Language code of a language token id, or NULL. */
WKV_API const char *wkv_lang_code(const wkv_model *model, int token);
/* Text of the tokens the way the reference tokenizer decodes them: bytes of every
 * token below timestamp_begin concatenated (special tokens as "<|name|>" unless
 * `text_only`, which keeps only ids < eot), invalid UTF-8 replaced by U+FFFD as
 * Python's errors="replace" does.  Returns a malloc'd NUL-terminated string. */
WKV_API char *wkv_tokens_to_text(const wkv_model *model, const int *tokens, int n,
                                 int text_only);

/* Text -> tokens like the reference tokenizer's encode(): the GPT-2 pre-tokenizer
 * pattern, then byte-level BPE by rank.  Writes at most max_out ids (out may be NULL)
 * and returns how many the text needs, or -1.  Note: ggml vocabularies store
 * partial-UTF-8 tokens as U+FFFD, so text outside ASCII may split into more tokens
 * than the reference's would. */
WKV_API int wkv_text_to_tokens(const wkv_model *model, const char *text, int *out,
                               int max_out);

/* ---------------------------------------------------------------- log-mel */

typedef enum {
    WKV_MEL_GLOBAL = 0, /* one maximum over the whole input: the reference's loop */
    WKV_MEL_WINDOW = 1, /* each window clamped at its own maximum: what a stream does */
} wkv_mel_norm;

/* log10(max(mel power, 1e-10)) of a whole input, before normalization.
 * data is n_mels x n_frames, row-major.  max is the maximum over all frames. */
typedef struct {
    int n_mels;
    int64_t n_frames;
    int64_t content_frames; /* frames of real audio: n_frames - 3000 when padded */
    float max;
    float *data;
} wkv_mel;

/* STFT of `pcm` followed by 30 s of zeros (reflect padding of 200 samples at both
 * ends), so n_frames = (n + 480000) / 160 and content_frames = n_frames - 3000. */
WKV_API wkv_mel *wkv_mel_compute(const wkv_model *model, const float *pcm, size_t n,
                                 int threads, char **error);
WKV_API void wkv_mel_free(wkv_mel *mel);
/* The same frames for a stream read piecewise: frames [f0, f0 + n_frames) of the
 * log-mel of a stream of which pcm holds samples [s0, s0 + n).  stream_len is the
 * number of samples of the whole stream once it has ended (zeros follow it, as in
 * wkv_mel_compute), or -1 while it goes on.  Frame f reads samples
 * [160 f - 200, 160 f + 200), reflected at the stream's start; pcm must hold them
 * (an error says which are missing).  The result has n_frames columns,
 * content_frames = n_frames and max over them, so frames computed this way equal
 * wkv_mel_compute's of the whole stream. */
WKV_API wkv_mel *wkv_mel_compute_range(const wkv_model *model, const float *pcm, size_t n,
                                       int64_t s0, int64_t stream_len, int64_t f0,
                                       int64_t n_frames, int threads, char **error);
/* Fills out (n_mels x 3000) with the normalized frames [seek, seek + size) and 0.0
 * after them.  GLOBAL clamps at mel->max - 8, WINDOW at the maximum of those frames
 * minus 8.  size is clamped to [0, 3000] and to the frames available. */
WKV_API void wkv_mel_window(const wkv_mel *mel, int64_t seek, int size, wkv_mel_norm norm,
                            float *out);

/* ---------------------------------------------------------------- context */

typedef struct wkv_context wkv_context;

/* Counters a context keeps; tests and benchmarks read them. */
typedef struct {
    int64_t encoder_runs;      /* wkv_encode calls */
    int64_t cross_kv_computes; /* times the cross-attention K/V of all layers were projected */
    int64_t decoder_passes;    /* decoder forward passes */
    int64_t tokens_decoded;    /* positions run through the decoder */
    int64_t windows;           /* windows decoded by wkv_decode_window */
    double mel_ms, encode_ms, decode_ms;
    int64_t align_passes;      /* word-timestamp alignment passes (one per window) */
    double align_ms;           /* their time: decoder pass, DTW and word rules */
    int64_t draft_tokens;      /* greedy: draft tokens checked in one pass (live runs) */
    int64_t draft_accepted;    /* of those, the ones the steps chose too */
    /* encode_ms by stage, summed over runs and layers: the convolutions (with the
     * positional embedding); the layers' weights widened to f32 or converted to the
     * compute type; q, k, v (with their layer norm); the self-attention; its output
     * projection (with the MLP's layer norm); the MLP (with the last layer norm). */
    double enc_conv_ms, enc_weights_ms, enc_qkv_ms, enc_attention_ms, enc_out_ms, enc_mlp_ms;
} wkv_stats;

/* A decoding context for one thread: all buffers sized once from the model. */
WKV_API wkv_context *wkv_context_new(const wkv_model *model, int threads, char **error);
WKV_API void wkv_context_free(wkv_context *ctx);
WKV_API const wkv_model *wkv_context_model(const wkv_context *ctx);
/* Bytes the context holds now: its KV caches (cross-KV of one window and every
 * self-KV slot reserved so far) and its activation buffers, with a bf16/int8
 * compute type's scratch (one layer's converted weights and its buffers) counted
 * among them (may be NULL). */
WKV_API void wkv_context_memory(const wkv_context *ctx, size_t *cache_bytes,
                                size_t *activation_bytes);
WKV_API const wkv_stats *wkv_context_stats(const wkv_context *ctx);

/* A decoder group: contexts on one model (live streams, elements on one loaded model,
 * one thread each) share their greedy decoder steps.  Steps of several contexts that
 * meet are run as one pass by one of their threads, every weight read once for all
 * of them; each context's tokens are those it gives alone.  Nothing waits for
 * company: a step batches only with the steps queued while another pass runs.
 * Beam search, sampling, prompts and alignment passes stay on each context.
 * max_rows: steps one pass takes (1..8; 0: 8); max_passes: passes that may run at
 * once (0: the online CPUs).  Thread-safe; free it after every context using it has
 * been freed or detached. */
typedef struct wkv_decoder_group wkv_decoder_group;
typedef struct {
    int64_t steps;         /* greedy steps that went through the group */
    int64_t passes;        /* decoder passes they took */
    int64_t shared_passes; /* passes of more than one step */
    int max_rows;          /* the most steps one pass took */
} wkv_decoder_group_stats;
WKV_API wkv_decoder_group *wkv_decoder_group_new(const wkv_model *model, int max_rows,
                                                 int max_passes, char **error);
WKV_API void wkv_decoder_group_free(wkv_decoder_group *group);
WKV_API void wkv_decoder_group_get_stats(wkv_decoder_group *group,
                                         wkv_decoder_group_stats *out);
/* Puts ctx's greedy steps through `group` (NULL: back on its own).  Not while ctx is
 * decoding.  -1 with a message when the group is on another model. */
WKV_API int wkv_context_set_decoder_group(wkv_context *ctx, wkv_decoder_group *group,
                                          char **error);

/* Compute types of the encoder's linear layers (and convolutions), a context setting.
 *  F32:  float32 (wkv_f32_gemm_library), the reference-exact path (the default);
 *  BF16: oneDNN matmul on bf16 inputs and weights, f32 accumulation;
 *  INT8: oneDNN matmul on int8 weights (one scale per output channel) and int8
 *        activations quantized per row at run time, s32 accumulation;
 *  AUTO: F32 for f32/f16 files, INT8 for quantized files when oneDNN is built in
 *        and the CPU runs INT8 (else F32).
 * BF16 and INT8 need the library built with oneDNN (meson -Ddnnl); attention and the
 * decoder stay f32.  BF16 needs a CPU oneDNN runs bf16 on (AVX512_BF16, AMX); INT8 one
 * with VNNI (AVX512_VNNI or AVX-VNNI): without it oneDNN's int8 products saturate
 * (measured: 7 % off f32 on an AMD EPYC with AVX2 only), so it is refused there.
 * Accuracy: docs/performance.md. */
/* The compute types, one X(SUFFIX, "name", "description") line each, in the order of
 * their values (AUTO = 0, F32, BF16, INT8: the ABI; a new type goes at the end).  The
 * enum, the functions below, the CLI's --compute-type, the element's compute-type
 * property and docs/architecture.md's table are made from this one list (the
 * `layers` test holds the doc's table to it). */
#define WKV_COMPUTE_TYPES(X)                                                              \
    X(AUTO, "auto", "f32 for f32/f16 files; int8 for quantized files with oneDNN on a CPU " \
                    "with VNNI, else f32")                                                \
    X(F32, "f32", "float32 on oneDNN or OpenBLAS, the reference-exact path")             \
    X(BF16, "bf16", "bf16 products, f32 accumulation; needs oneDNN and a CPU with "       \
                    "AVX512_BF16 or AMX")                                                 \
    X(INT8, "int8", "int8 linear layers, s32 accumulation; needs oneDNN and a CPU with "  \
                    "VNNI")

#define WKV_COMPUTE_ENUM_(suffix, name, description) WKV_COMPUTE_##suffix,
typedef enum { WKV_COMPUTE_TYPES(WKV_COMPUTE_ENUM_) } wkv_compute_type;
#undef WKV_COMPUTE_ENUM_

/* How many types the list has: their values are 0 .. count - 1. */
WKV_API int wkv_compute_type_count(void);
/* "auto", "f32", "bf16", "int8" -> the type, or -1. */
WKV_API int wkv_compute_type_parse(const char *name);
/* The type's name ("?" for a value outside the list). */
WKV_API const char *wkv_compute_type_name(wkv_compute_type type);
/* Its one-line description (NULL for a value outside the list). */
WKV_API const char *wkv_compute_type_description(wkv_compute_type type);
/* Whether this build on this CPU can run the type (AUTO and F32: always; BF16 and INT8
 * need oneDNN and the instructions wkv_context_set_compute_type asks for). */
WKV_API int wkv_compute_type_available(wkv_compute_type type);
/* Sets the type for the context's next encoder runs (converting the encoder weights
 * for it into the context).  Returns 0, or -1 with *error set (oneDNN missing, the
 * CPU lacks the instructions, out of memory); the context keeps its type then. */
WKV_API int wkv_context_set_compute_type(wkv_context *ctx, wkv_compute_type type,
                                         char **error);
/* The type in effect (never AUTO). */
WKV_API wkv_compute_type wkv_context_compute_type(const wkv_context *ctx);

/* The element type of the decoder's attention caches (the cross-attention K/V of each
 * window and the self-attention K/V of the tokens so far).  A decoder step reads every
 * layer's cached K and V, so half the bytes makes steps faster where they wait on
 * memory (a step of several windows side by side above all: each reads its own
 * window's cache) and a context smaller; whisper.cpp keeps both in half.
 * AUTO: half where the user chose approximation, i.e. on bf16/int8 compute or with a
 *       quantized file; f32 for f32/f16 files on the f32 compute type, whose results
 *       are the reference's.
 * F32:  f32 on every compute type.
 * F16:  IEEE half on every compute type (values beyond +-65504 become +-inf).
 * Accuracy and speed: docs/performance.md. */
typedef enum {
    WKV_CACHE_AUTO = 0,
    WKV_CACHE_F32,
    WKV_CACHE_F16,
} wkv_cache_type;

/* "auto", "f32", "f16" -> the type, or -1. */
WKV_API int wkv_cache_type_parse(const char *name);
WKV_API const char *wkv_cache_type_name(wkv_cache_type type);
/* Sets the caches' type (AUTO follows the compute type set later, too).  A change of
 * type empties the caches (a window must be encoded again): call it before decoding,
 * like wkv_context_set_compute_type.  Returns 0, or -1 with *error set (an unknown
 * type, out of memory); the context keeps its caches then. */
WKV_API int wkv_context_set_cache_type(wkv_context *ctx, wkv_cache_type type, char **error);
/* The cross cache's type in effect (F32 or F16; the self cache is the same, except
 * that it stays f32 on a model whose text context is longer than its audio context). */
WKV_API wkv_cache_type wkv_context_cache_type(const wkv_context *ctx);

/* What runs the f32 matrix products (the f32 encoder, the prompt passes of every
 * compute type, word alignment, VAD): chosen once per process, at the first product
 * or the first of these calls, with no environment variable: oneDNN when the library
 * was built with it (it detects the CPU by its feature bits), unless OpenBLAS's
 * kernels are of a newer ISA; else OpenBLAS (which picks its kernels by the CPU's
 * model number, and runs SSE3 kernels on models it does not know).
 * WHISPERKV_GEMM=openblas|onednn in the environment overrides the choice.
 * _library: "oneDNN", "OpenBLAS" (or "CBLAS"); _kernels: oneDNN's ISA
 * ("avx512_core_bf16", "avx2", ...) or OpenBLAS's kernel set ("SkylakeX", "Prescott",
 * ...). */
WKV_API const char *wkv_f32_gemm_library(void);
WKV_API const char *wkv_f32_gemm_kernels(void);
/* 1 when those kernels are of an older ISA than the CPU has (OpenBLAS without oneDNN
 * on a CPU model it does not know): f32 encoding then runs several times slower, and
 * only OPENBLAS_CORETYPE set before the program starts, or a build with oneDNN,
 * changes it. */
WKV_API int wkv_f32_gemm_slow(void);

/* Runs the encoder on one window's mel (n_mels x 3000) and fills the cross-KV cache
 * from its output; resets the self-KV cache.  Returns 0 or -1. */
WKV_API int wkv_encode(wkv_context *ctx, const float *mel);
/* wkv_encode on the window's first n_frames encoder frames only (whisper.cpp's
 * audio_ctx; wkv_options.audio_ctx): conv1 reads mel frames [0, 2 n_frames), zero after
 * them, the positional embedding's first n_frames rows, self-attention over n_frames,
 * and the decoder then attends over n_frames: the numbers a model whose n_audio_ctx
 * were n_frames would give.  0 (or more than n_audio_ctx): all n_audio_ctx, as
 * wkv_encode.  Returns 0, or -1 (n_frames < 0). */
WKV_API int wkv_encode_frames(wkv_context *ctx, const float *mel, int n_frames);
/* Encoder frames for `frames` encoder frames (0.02 s each) of audio under
 * WKV_AUDIO_CTX_AUTO: frames plus a margin, rounded up to a multiple of 64, at least
 * WKV_AUDIO_CTX_MIN, at most the model's n_audio_ctx. */
WKV_API int wkv_audio_ctx_auto(const wkv_model *model, int frames);
/* The last encoder output: n_audio_ctx x n_audio_state (only its first n_frames rows
 * are this window's after wkv_encode_frames). */
WKV_API const float *wkv_encoder_output(const wkv_context *ctx);

/* Appends tokens to the sequence held in the self-KV cache (one batched pass) and
 * writes the n_vocab logits of the last position to `logits` (may be NULL).
 * Returns 0, or -1 when the sequence would exceed n_text_ctx. */
WKV_API int wkv_decode(wkv_context *ctx, const int *tokens, int n, float *logits);
/* Forgets the decoded sequence (the cross-KV cache stays). */
WKV_API void wkv_decode_reset(wkv_context *ctx);
/* Number of positions held in the self-KV cache. */
WKV_API int wkv_decode_length(const wkv_context *ctx);

/* ---------------------------------------------------------------- decoding */

typedef struct {
    const char *language;        /* code, default "en"; "auto" (or NULL) detects it on
                                    multilingual models (wkv_transcribe_mel: from the first
                                    3000 frames); ignored by English-only models */
    int translate;               /* task translate instead of transcribe (multilingual) */
    int timestamps;              /* 1 (default): timestamp tokens; 0: <|notimestamps|> */
    int condition_on_previous_text; /* default 1 */
    float no_speech_threshold;   /* default 0.6; >= 1 never skips */
    float logprob_threshold;     /* default -1.0: fallback below it, and with
                                    no_speech_threshold the silence test; -INFINITY: off */
    wkv_mel_norm mel_norm;       /* wkv_transcribe: default GLOBAL */
    float max_initial_timestamp; /* seconds, default 1.0 */
    /* search (reference DecodingOptions) */
    float temperature;           /* the first temperature tried, default 0 */
    float temperature_increment; /* fallback step, default 0.2 (up to 1.0); 0: no fallback */
    int beam_size;               /* at temperature 0: 0 = greedy (default), N = beam search */
    float patience;              /* beam search, default 1.0 */
    float length_penalty;        /* < 0 (default): rank by sum_logprob / length;
                                    >= 0: the reference's ((5 + length) / 6)^alpha */
    int best_of;                 /* candidates sampled at temperature > 0, default 5 */
    float compression_ratio_threshold; /* fallback above it, default 2.4; <= 0: off */
    uint64_t seed;               /* sampling at temperature > 0 is reproducible per seed */
    const char *initial_prompt;  /* text before the first window (reference
                                    initial_prompt), or NULL */
    int sample_len;              /* tokens per window at most, default n_text_ctx / 2 */
    /* word timestamps (reference word_timestamps=True; docs/architecture.md) */
    int word_timestamps;         /* 1: segments carry words; the long-form loop then seeks
                                    after the last word (default 0) */
    const char *alignment_heads; /* "auto" (default, also NULL), "default", a checkpoint
                                    name ("tiny.en" ... "large-v3-turbo") or "L.H,L.H,..." */
    const char *prepend_punctuations; /* merged into the next word; NULL: "'“¿([{- */
    const char *append_punctuations;  /* merged into the previous word; NULL: the
                                         reference's "'.。,，!！?？:：”)]}、 */
    float hallucination_silence_threshold; /* seconds; <= 0 (default): off */
    const char *clip_timestamps; /* "start,end,start,..." seconds to decode (wkv_transcribe*),
                                    NULL or "0": everything */
    /* The encoder's frames (0.02 s each) per window (whisper.cpp's audio_ctx,
     * wkv_encode_frames): 0 (default): the model's n_audio_ctx (1500: 30 s); N > 0:
     * the first N only (at most n_audio_ctx), which costs about N / n_audio_ctx of the
     * encoder and loses some accuracy (docs/performance.md; too few frames and the
     * decoder may loop), and the timestamps stop at the frames' end;
     * WKV_AUDIO_CTX_AUTO: each window's encoder sized to the audio it holds
     * (wkv_audio_ctx_auto; offline: a window of less than 30 s, i.e. the last; a
     * stream: every run), while the decoder attends over the whole window as ever,
     * the frames past those encoded holding the cross K/V of a window of padding,
     * computed once per context (docs/architecture.md, "Audio context").  The log-mel's
     * normalization is the whole window's as ever (under AUTO the same as the
     * frames': the padding's log-mel of zeros never raises the maximum).  Language
     * detection always sees all n_audio_ctx. */
    int audio_ctx;
} wkv_options;

#define WKV_AUDIO_CTX_AUTO (-1) /* wkv_options.audio_ctx: sized to the audio held */
#define WKV_AUDIO_CTX_MIN 256   /* AUTO's fewest frames (5.12 s): with the padding's K/V
                                  * the trained model held its WER down to 128 (36.8 % on
                                  * trained-audioctx's sentences against 53.9 % without);
                                  * docs/trained-model.md, "The padding's K/V" */

WKV_API void wkv_options_default(wkv_options *opts);

/* What one window decoded to. */
typedef struct {
    int *tokens;        /* sampled tokens, eot excluded (malloc'd) */
    int n_tokens;
    char *text;         /* reference DecodingResult.text (stripped) */
    double sum_logprob, avg_logprob, no_speech_prob, compression_ratio, temperature;
    int language;       /* language token used */
} wkv_window_result;

WKV_API void wkv_window_result_clear(wkv_window_result *res);

/* Decodes the window last given to wkv_encode at opts->temperature (no fallback):
 * greedy or beam search at 0, best_of samples above; the best candidate by the
 * reference's ranking.  `prompt` is previous text (its last n_text_ctx/2 - 1 tokens are
 * used).  Returns 0 or -1 with a message. */
WKV_API int wkv_decode_window(wkv_context *ctx, const int *prompt, int n_prompt,
                              const wkv_options *opts, wkv_window_result *res, char **error);

/* Language identification (multilingual models): runs the encoder on `mel`
 * (n_mels x 3000: the reference uses the first 3000 frames of the whole-input
 * log-mel, zero-sample frames included) and the decoder on [sot]; writes the softmax
 * over the language tokens to probs (wkv_model_specials()->n_langs entries, may be
 * NULL) and returns the most probable language token, or -1. */
WKV_API int wkv_detect_language(wkv_context *ctx, const float *mel, float *probs, char **error);

/* One word of a segment (options.word_timestamps): its text keeps its leading space;
 * times in seconds from the start of the input, rounded to 0.01 s as the reference's. */
typedef struct {
    const char *word;
    double start, end;
    float probability; /* mean probability of its tokens in the alignment pass */
} wkv_word;

/* The alignment heads `spec` (as wkv_options.alignment_heads) means for this model:
 * returns a malloc'd name, "default" or the table's name ("auto" says which table it
 * picked: one whose dimensions and vocabulary match unambiguously, else "default"),
 * or for an explicit list the list itself; NULL with a message for a bad spec. */
WKV_API char *wkv_alignment_heads_name(const wkv_model *model, const char *spec, char **error);

/* One timed segment of the long-form loop. */
typedef struct {
    int64_t seek;       /* mel frame where its window started */
    double start, end;  /* seconds from the start of the input */
    const int *tokens;  /* the segment's tokens, timestamps included */
    int n_tokens;
    const char *text;
    double avg_logprob, no_speech_prob, compression_ratio, temperature; /* its window's */
    const char *language; /* language code of its window ("en" for English-only models) */
    const wkv_word *words; /* options.word_timestamps: its words (valid during the
                              callback), else NULL */
    int n_words;
} wkv_segment;

/* Called for every segment in order; return non-zero to stop. */
typedef int (*wkv_segment_cb)(const wkv_segment *seg, void *user);
/* Called after each window with the seek reached and the total frames; may be NULL. */
typedef void (*wkv_progress_cb)(int64_t seek, int64_t total, void *user);

/* The long-form loop one window at a time, for callers that get audio piecewise
 * (the element): the state between windows is the prompt history.  Feed each window
 * at the seek the previous call returned; windows of one session must come from one
 * continuous stream, and give identical segments to wkv_transcribe_mel. */
typedef struct wkv_longform wkv_longform;
WKV_API wkv_longform *wkv_longform_new(wkv_context *ctx, const wkv_options *opts, char **error);
WKV_API void wkv_longform_free(wkv_longform *lf);
/* Decodes the window that starts at mel frame `seek` with `size` (1..3000) frames of
 * audio; `mel` is its normalized log-mel (n_mels x 3000, 0.0 after size).  Reports its
 * segments (times in seconds from frame 0) and returns the seek of the next window
 * (> seek), or -1 with a message. */
WKV_API int64_t wkv_longform_window(wkv_longform *lf, int64_t seek, int size, const float *mel,
                                    wkv_segment_cb on_segment, void *user, char **error);
/* Sets the language code for the following windows (after detection); 0 or -1. */
WKV_API int wkv_longform_set_language(wkv_longform *lf, const char *code);
/* Forget the previous text (after a discontinuity or a seek). */
WKV_API void wkv_longform_reset_prompt(wkv_longform *lf);
/* Segments reported so far. */
WKV_API int wkv_longform_segments(const wkv_longform *lf);

/* The offline transcriber: the long-form loop fed with 16 kHz mono PCM as it arrives,
 * the counterpart of wkv_stream for files and other non-live input (the element's
 * offline path, the CLI and wkv_transcribe use it).  Push samples, run each window
 * once wkv_transcriber_next says one is ready, close at the end of the input, and run
 * the rest.  With window normalization (opts->mel_norm WKV_MEL_WINDOW) a window runs
 * as soon as its 30 s (and 200 samples after them) are in, and the samples before the
 * next window are dropped; the reference's global normalization and clip_timestamps
 * need the whole input, so their windows wait for the close.  Language "auto" on a
 * multilingual model is detected once, on the first window's 3000 frames.  Segments
 * go to on_segment as each window is decoded; a nonzero return stops the loop.
 * The transcriber belongs to the thread of its context. */
typedef struct wkv_transcriber wkv_transcriber;
WKV_API wkv_transcriber *wkv_transcriber_new(wkv_context *ctx, const wkv_options *opts,
                                             wkv_segment_cb on_segment, void *user,
                                             char **error);
WKV_API void wkv_transcriber_free(wkv_transcriber *t);
/* Appends n samples (copied; nothing is computed).  0, or -1 with a message. */
WKV_API int wkv_transcriber_push(wkv_transcriber *t, const float *pcm, size_t n, char **error);
/* The input has ended: the last windows may be shorter. */
WKV_API void wkv_transcriber_close(wkv_transcriber *t);
/* The frames of the next window when it can run now, 0 while it needs more input (or
 * the close), -1 when the input is done (or a callback stopped the loop). */
WKV_API int wkv_transcriber_next(const wkv_transcriber *t);
/* Runs the next window: its log-mel, the language (once), the decoding, its segments
 * to the callback.  Returns the frame the next window starts at, or -1 with a
 * message (also when no window was ready). */
WKV_API int64_t wkv_transcriber_run(wkv_transcriber *t, char **error);
/* Samples held now (a caller's bound on memory). */
WKV_API int64_t wkv_transcriber_held(const wkv_transcriber *t);
/* The language decoded in ("auto" until detected) and, once it was detected and probs
 * is not NULL, every language's probability on the first window
 * (wkv_model_specials()->n_langs entries, as wkv_detect_language gives them). */
WKV_API const char *wkv_transcriber_language(const wkv_transcriber *t, float *probs);
/* Segments reported so far; the input's frames so far (all of them once closed). */
WKV_API int wkv_transcriber_segments(const wkv_transcriber *t);
WKV_API int64_t wkv_transcriber_content(const wkv_transcriber *t);

/* The reference long-form loop over a log-mel (openai/whisper's transcribe.py: 30-s
 * windows from `seek`, the tokens cut into segments at timestamp pairs, seek moved to
 * the last pair or past the window).  Segments that the reference clears (start == end
 * or blank text) are not reported.  Returns the number of segments reported, or -1. */
WKV_API int wkv_transcribe_mel(wkv_context *ctx, const wkv_mel *mel, const wkv_options *opts,
                               wkv_segment_cb on_segment, wkv_progress_cb on_progress, void *user,
                               char **error);
/* Same, from 16 kHz mono PCM: computes the mel first. */
WKV_API int wkv_transcribe(wkv_context *ctx, const float *pcm, size_t n, const wkv_options *opts,
                           wkv_segment_cb on_segment, wkv_progress_cb on_progress, void *user,
                           char **error);


/* ---------------------------------------------------------------- voice activity */

/* Silero VAD as whisper.cpp 1.9.3 runs it (docs/architecture.md, "Voice activity"):
 * a speech probability for every 512-sample chunk (32 ms) of 16 kHz mono audio, the
 * speech segments whisper.cpp derives from them, and the audio whisper.cpp
 * transcribes with VAD on plus the mapping of its times back to the input.  A
 * wkv_vad_model is immutable once loaded and may be shared by any number of streams
 * on any number of threads; a wkv_vad_stream (the LSTM state and the partial chunk)
 * belongs to one thread at a time. */

#define WKV_VAD_CHUNK 512 /* samples per probability */

typedef struct wkv_vad_model wkv_vad_model;

/* Reads and validates a whisper.cpp ggml Silero VAD file (ggml-silero-v*.bin).
 * Returns NULL on any problem with a message naming the file, the byte offset and
 * what was wrong (a Whisper model given here is refused as such). */
WKV_API wkv_vad_model *wkv_vad_model_load(const char *path, char **error);
/* The same from a whole file image in memory (messages name it "(memory)"); the
 * model keeps no pointer into `data`. */
WKV_API wkv_vad_model *wkv_vad_model_load_memory(const void *data, size_t size, char **error);
WKV_API void wkv_vad_model_free(wkv_vad_model *model);
/* The version stored in the file (6.2.0 for ggml-silero-v6.2.0.bin). */
WKV_API void wkv_vad_model_version(const wkv_vad_model *model, int version[3]);

typedef struct wkv_vad_stream wkv_vad_stream;

/* A stream's state: LSTM state zeroed, no samples pending.  NULL when out of memory. */
WKV_API wkv_vad_stream *wkv_vad_stream_new(const wkv_vad_model *model, char **error);
WKV_API void wkv_vad_stream_free(wkv_vad_stream *s);
/* Back to the state of a new stream (a new, unrelated input). */
WKV_API void wkv_vad_stream_reset(wkv_vad_stream *s);
/* Appends n samples and writes the probability of every chunk they complete to
 * probs, which must hold WKV_VAD_MAX_PROBS(n) values; returns how many were written.
 * Chunks are cut on one 512-sample grid from the stream's first sample, so pushing
 * input in any pieces gives the probabilities of the whole input at once. */
#define WKV_VAD_MAX_PROBS(n) (((size_t)(n) + WKV_VAD_CHUNK - 1) / WKV_VAD_CHUNK)
WKV_API size_t wkv_vad_push(wkv_vad_stream *s, const float *pcm, size_t n, float *probs);
/* The end of the input: the partial chunk left, if any, zero-padded to 512 samples
 * as whisper.cpp pads the last one.  Returns 1 with its probability in *prob, or 0
 * when no samples were pending.  The stream then starts a new chunk grid (its LSTM
 * state goes on; wkv_vad_stream_reset for an unrelated input). */
WKV_API int wkv_vad_finish(wkv_vad_stream *s, float *prob);
/* Samples pushed since the last complete chunk (0..511). */
WKV_API int wkv_vad_pending(const wkv_vad_stream *s);

/* Probabilities of a whole input from a zeroed state (whisper_vad_detect_speech):
 * ceil(n / 512) values into a malloc'd *probs (NULL when n is 0).  Returns their
 * number, or -1 with a message. */
WKV_API int64_t wkv_vad_probs(const wkv_vad_model *model, const float *pcm, size_t n,
                              float **probs, char **error);

/* whisper.cpp's whisper_vad_params, with its defaults (wkv_vad_params_default). */
typedef struct {
    float threshold;             /* speech probability, default 0.5 */
    int min_speech_duration_ms;  /* default 250 */
    int min_silence_duration_ms; /* default 100 */
    float max_speech_duration_s; /* default FLT_MAX (no limit) */
    int speech_pad_ms;           /* default 30 */
    float samples_overlap;       /* seconds of audio kept after each segment when
                                    transcribing (wkv_vad_filter), default 0.1 */
} wkv_vad_params;

WKV_API void wkv_vad_params_default(wkv_vad_params *p);
/* NULL when the parameters are usable, else why not (a static string): a threshold
 * outside [0, 1] or NaN, a negative duration or overlap. */
WKV_API const char *wkv_vad_params_check(const wkv_vad_params *p);

/* A speech segment in centiseconds of the input, as whisper.cpp keeps them (the last
 * may end at the end of the zero-padded last chunk, past the input's end). */
typedef struct {
    int64_t start, end;
} wkv_vad_segment;

/* whisper_vad_segments_from_probs: the speech segments of n_probs probabilities into
 * a malloc'd *segs (NULL when none).  Returns their number, or -1 with a message. */
WKV_API int wkv_vad_segments(const float *probs, int64_t n_probs, const wkv_vad_params *p,
                             wkv_vad_segment **segs, char **error);

/* Transcribing with VAD as whisper_full does: only the speech is decoded, and times
 * on that audio ("processed" centiseconds) map back onto the input's. */
typedef struct wkv_vad_map wkv_vad_map;

/* The audio whisper.cpp transcribes: each segment's samples plus samples_overlap
 * seconds after it, then 0.1 s of zeros before the next.  Returns it malloc'd with
 * its length in *n_out (NULL and 0 when there is nothing to transcribe) and the
 * mapping in *map (free with wkv_vad_map_free).  Returns 0 or -1 with a message. */
WKV_API int wkv_vad_filter(const float *pcm, size_t n, const wkv_vad_segment *segs, int n_segs,
                           const wkv_vad_params *p, float **out, size_t *n_out,
                           wkv_vad_map **map, char **error);
WKV_API void wkv_vad_map_free(wkv_vad_map *map);
/* A segment's start and end (processed cs) on the input (whisper_full_get_segment_t0/t1
 * with VAD): interpolated on the copied pieces, t1 raised to t0 + 10 if shorter. */
WKV_API void wkv_vad_map_segment(const wkv_vad_map *map, int64_t t0, int64_t t1,
                                 int64_t *orig_t0, int64_t *orig_t1);
/* A token's times the same way (whisper_full_get_token_t0/t1): per segment, a time
 * in the overlap and silence between two goes to the nearer segment's edge; t1 is
 * raised to t0 + 1 if shorter. */
WKV_API void wkv_vad_map_token(const wkv_vad_map *map, int64_t t0, int64_t t1,
                               int64_t *orig_t0, int64_t *orig_t1);
/* A segment decoded from wkv_vad_filter's audio as reported on the input: *out is
 * *seg with start and end mapped by wkv_vad_map_segment, seek (a mel frame: also a
 * centisecond) by the same table, and its words, if any, written to `words` (room for
 * seg->n_words; out->words points there) with times mapped by wkv_vad_map_token.  The
 * CLI and the element report VAD transcriptions through this one function. */
WKV_API void wkv_vad_map_result(const wkv_vad_map *map, const wkv_segment *seg,
                                wkv_segment *out, wkv_word *words);

/* ---------------------------------------------------------------- batched offline */

/* Offline batching (faster-whisper's BatchedInferencePipeline): the input is cut into
 * chunks of at most 30 s, each decoded as one window without the previous text
 * (greedy at temperature 0, the fallback temperatures for the chunks that need them;
 * a chunk's unfinished last segment ends at the chunk's end instead of being decoded
 * again), and the decoder runs batch_size chunks side by side: one pass per token
 * reads every weight once for all of them.  Each chunk's segments are what decoding
 * that chunk alone gives (wkv_transcribe_chunks with batch_size 1), up to the
 * summation order of the products.  Beam search decodes chunk by chunk.  Costs the
 * cross-KV cache of batch_size windows (docs/performance.md). */
typedef struct {
    int64_t start, end; /* samples of the input, end - start in 1 .. WKV_N_SAMPLES */
} wkv_chunk;

/* Plain 30-s chunks over n samples (the last shorter): their number into a malloc'd
 * *chunks (NULL when n is 0), or -1 with a message. */
WKV_API int wkv_chunks_plain(size_t n, wkv_chunk **chunks, char **error);
/* faster-whisper's merge_segments: consecutive speech segments (wkv_vad_segments,
 * centiseconds; give the VAD max_speech_duration_s of at most 30) merged while a
 * chunk stays within 30 s; a chunk is the input from its first segment's start to its
 * last one's end, clamped to the n samples; a segment longer than 30 s is cut into
 * 30-s chunks.  Their number into a malloc'd *chunks, or -1 with a message. */
WKV_API int wkv_chunks_from_speech(const wkv_vad_segment *segs, int n_segs, size_t n,
                                   wkv_chunk **chunks, char **error);
/* Transcribes the chunks of pcm (n samples; chunks in order, not overlapping), batch_size
 * (1 .. 64) at a time; segments reach on_segment in order with times on the input,
 * their seek the chunk's first frame.  opts: as wkv_transcribe's, but
 * condition_on_previous_text, initial_prompt, clip_timestamps and
 * hallucination_silence_threshold do not apply; the log-mel of each chunk is its own
 * (opts->mel_norm: GLOBAL over the chunk, or WINDOW, the same there); "auto" detects
 * the language once, on the first chunk.  on_progress gets the frame after each batch.
 * Returns the number of segments, or -1 with a message (the segments reported before
 * stay reported). */
WKV_API int wkv_transcribe_chunks(wkv_context *ctx, const float *pcm, size_t n,
                                  const wkv_chunk *chunks, int n_chunks, int batch_size,
                                  const wkv_options *opts, wkv_segment_cb on_segment,
                                  wkv_progress_cb on_progress, void *user, char **error);

#ifdef __cplusplus
}
#endif

/* Live streams (wkv_stream_new ...): their own header, part of this API. */
#include "whisperkv_stream.h"

#endif
