/* The CLI's voice activity detection: options with whisper.cpp's names' meaning and
 * defaults, --vad-only (speech segments in txt, srt, vtt or json), --dump-vad-probs,
 * and the speech-only audio and time mapping for transcription (core/vad/vad_map.c). */
#include "cli_vad.h"

#include <errno.h>
#include <stdarg.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib/gstdio.h>
#include <gst/gst.h>
#include <json-glib/json-glib.h>

#include "audio_load.h"
#include "cli_common.h"

#define PROG "whisperkv-transcribe"

static char *opt_vad_model, *opt_dump_probs;
/* -DBL_MAX: not given (NaN is a value given, and refused) */
static double opt_threshold = -DBL_MAX, opt_max_speech = -DBL_MAX, opt_overlap = -DBL_MAX;
static int opt_min_speech = G_MININT, opt_min_silence = G_MININT, opt_pad = G_MININT;
static gboolean opt_vad_only;

GOptionEntry cli_vad_entries[] = {
    {"vad-model", 0, 0, G_OPTION_ARG_FILENAME, &opt_vad_model,
     "Voice activity detection with this Silero VAD model (whisper.cpp's "
     "ggml-silero-v6.2.0.bin; default $WHISPERKV_VAD_MODEL): only speech is transcribed, "
     "times stay those of the input", "PATH"},
    {"vad-threshold", 0, 0, G_OPTION_ARG_DOUBLE, &opt_threshold,
     "VAD: speech probability threshold, 0..1 (default 0.5)", "X"},
    {"vad-min-speech-ms", 0, 0, G_OPTION_ARG_INT, &opt_min_speech,
     "VAD: shortest speech segment kept (default 250)", "N"},
    {"vad-min-silence-ms", 0, 0, G_OPTION_ARG_INT, &opt_min_silence,
     "VAD: silence that ends a segment (default 100)", "N"},
    {"vad-speech-pad-ms", 0, 0, G_OPTION_ARG_INT, &opt_pad,
     "VAD: padding added around each segment (default 30)", "N"},
    {"vad-max-speech-s", 0, 0, G_OPTION_ARG_DOUBLE, &opt_max_speech,
     "VAD: split segments longer than this, in whole seconds (default: no limit)", "X"},
    {"vad-samples-overlap", 0, 0, G_OPTION_ARG_DOUBLE, &opt_overlap,
     "VAD: seconds of audio kept after each segment when transcribing (default 0.1)", "X"},
    {"vad-only", 0, 0, G_OPTION_ARG_NONE, &opt_vad_only,
     "Print the speech segments (VAD) instead of transcribing; no Whisper model needed",
     NULL},
    {"dump-vad-probs", 0, 0, G_OPTION_ARG_FILENAME, &opt_dump_probs,
     "Debug: write the speech probability of every 512-sample chunk (f32 LE)", "PATH"},
    {NULL, 0, 0, 0, NULL, NULL, NULL},
};

static wkv_vad_params params;
static const char *model_path;
static wkv_vad_map *map; /* set by cli_vad_filter */
static wkv_vad_model *live_model; /* set by cli_vad_live */

static int set_error(char **msg, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

/* *msg = the message (for the caller to print); returns 1, the exit status */
static int set_error(char **msg, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_free(*msg);
    *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    return 1;
}

char *cli_vad_check(void)
{
    const char *env = g_getenv("WHISPERKV_VAD_MODEL");
    if (opt_vad_model && !*opt_vad_model)
        return g_strdup("--vad-model needs a file name");
    model_path = opt_vad_model ? opt_vad_model : (env && *env ? env : NULL);
    gboolean tuned = opt_threshold != -DBL_MAX || opt_max_speech != -DBL_MAX ||
                     opt_overlap != -DBL_MAX ||
                     opt_min_speech != G_MININT || opt_min_silence != G_MININT ||
                     opt_pad != G_MININT;
    if (!model_path && (tuned || opt_vad_only || opt_dump_probs))
        return g_strdup("the VAD options need --vad-model PATH (or WHISPERKV_VAD_MODEL)");
    wkv_vad_params_default(&params);
    /* out-of-range doubles must not be cast to float or int unchecked */
    if (opt_threshold != -DBL_MAX)
        params.threshold = opt_threshold >= 0 && opt_threshold <= 1 ? (float)opt_threshold : NAN;
    if (opt_max_speech != -DBL_MAX)
        params.max_speech_duration_s = opt_max_speech > 0 ? (float)fmin(opt_max_speech, FLT_MAX) : -1;
    if (opt_overlap != -DBL_MAX)
        params.samples_overlap = opt_overlap >= 0 && opt_overlap <= 10 ? (float)opt_overlap : -1;
    if (opt_min_speech != G_MININT)
        params.min_speech_duration_ms = opt_min_speech;
    if (opt_min_silence != G_MININT)
        params.min_silence_duration_ms = opt_min_silence;
    if (opt_pad != G_MININT)
        params.speech_pad_ms = opt_pad;
    const char *bad = wkv_vad_params_check(&params);
    return bad ? g_strdup_printf("bad VAD option: %s", bad) : NULL;
}

gboolean cli_vad_enabled(void)
{
    return model_path != NULL;
}

gboolean cli_vad_only(void)
{
    return opt_vad_only;
}

/* The probabilities as little-endian f32, whatever the host's byte order. */
static int dump_probs(const float *probs, int64_t n, char **msg)
{
    guint8 *bytes = g_malloc((gsize)n * 4 + 1);
    for (int64_t i = 0; i < n; i++) {
        guint32 u;
        memcpy(&u, &probs[i], 4);
        for (int k = 0; k < 4; k++)
            bytes[4 * i + k] = (guint8)(u >> (8 * k));
    }
    FILE *f = g_fopen(opt_dump_probs, "wb");
    gboolean ok = f && fwrite(bytes, 4, (size_t)n, f) == (size_t)n;
    if (f && fclose(f) != 0)
        ok = FALSE;
    g_free(bytes);
    return ok ? 0 : set_error(msg, "cannot write '%s': %s", opt_dump_probs, g_strerror(errno));
}

typedef struct {
    wkv_vad_segment *segs;
    int n_segs;
    int64_t n_probs;
    double load_ms, vad_ms;
} vad_result;

/* The model, the probabilities (dumped if asked) and the segments of pcm. */
static int detect(const float *pcm, gsize n, vad_result *r, char **msg)
{
    char *err = NULL;
    double t0 = (double)g_get_monotonic_time() / 1e3;
    wkv_vad_model *m = wkv_vad_model_load(model_path, &err);
    r->load_ms = (double)g_get_monotonic_time() / 1e3 - t0;
    if (!m) {
        set_error(msg, "%s", err ? err : "cannot load the VAD model");
        free(err);
        return 1;
    }
    float *probs = NULL;
    t0 = (double)g_get_monotonic_time() / 1e3;
    r->n_probs = wkv_vad_probs(m, pcm, n, &probs, &err);
    r->n_segs = r->n_probs < 0 ? -1 : wkv_vad_segments(probs, r->n_probs, &params, &r->segs, &err);
    r->vad_ms = (double)g_get_monotonic_time() / 1e3 - t0;
    wkv_vad_model_free(m);
    int status = 0;
    if (r->n_segs < 0)
        status = set_error(msg, "voice activity detection failed: %s", err ? err : "?");
    else if (opt_dump_probs)
        status = dump_probs(probs, r->n_probs, msg);
    free(probs);
    free(err);
    return status;
}

/* a float parameter as the decimal it was given as, not its binary expansion */
static double decimal(float x)
{
    return round((double)x * 1e6) / 1e6;
}

static void print_json(FILE *out, const vad_result *r, double duration)
{
    JsonBuilder *b = json_builder_new();
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "speech");
    json_builder_begin_array(b);
    for (int i = 0; i < r->n_segs; i++) {
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "start");
        json_builder_add_double_value(b, (double)r->segs[i].start / 100.0);
        json_builder_set_member_name(b, "end");
        json_builder_add_double_value(b, (double)r->segs[i].end / 100.0);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_set_member_name(b, "vad");
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "n_probs");
    json_builder_add_int_value(b, r->n_probs);
    json_builder_set_member_name(b, "threshold");
    json_builder_add_double_value(b, decimal(params.threshold));
    json_builder_set_member_name(b, "min_speech_duration_ms");
    json_builder_add_int_value(b, params.min_speech_duration_ms);
    json_builder_set_member_name(b, "min_silence_duration_ms");
    json_builder_add_int_value(b, params.min_silence_duration_ms);
    json_builder_set_member_name(b, "max_speech_duration_s"); /* null: no limit */
    if (params.max_speech_duration_s >= FLT_MAX)
        json_builder_add_null_value(b);
    else
        json_builder_add_double_value(b, decimal(params.max_speech_duration_s));
    json_builder_set_member_name(b, "speech_pad_ms");
    json_builder_add_int_value(b, params.speech_pad_ms);
    json_builder_set_member_name(b, "samples_overlap");
    json_builder_add_double_value(b, decimal(params.samples_overlap));
    json_builder_end_object(b);
    json_builder_set_member_name(b, "duration");
    json_builder_add_double_value(b, duration);
    json_builder_set_member_name(b, "timings");
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "load");
    json_builder_add_double_value(b, r->load_ms);
    json_builder_set_member_name(b, "vad");
    json_builder_add_double_value(b, r->vad_ms);
    json_builder_end_object(b);
    json_builder_end_object(b);
    JsonGenerator *gen = json_generator_new();
    JsonNode *root = json_builder_get_root(b);
    json_generator_set_pretty(gen, TRUE);
    json_generator_set_indent(gen, 2);
    json_generator_set_root(gen, root);
    char *text = json_generator_to_data(gen, NULL);
    fprintf(out, "%s\n", text);
    g_free(text);
    json_node_unref(root);
    g_object_unref(gen);
    g_object_unref(b);
}

/* Each segment as the format writes speech (txt: "start --> end" lines; srt and vtt:
 * a "[speech]" cue). */
static void print_segments(FILE *out, const cli_format *fmt, const vad_result *r)
{
    cli_output *o = cli_output_new(fmt, out);
    cli_output_begin(o);
    for (int i = 0; i < r->n_segs; i++) {
        wkv_segment seg = {0};
        seg.start = (double)r->segs[i].start / 100.0;
        seg.end = (double)r->segs[i].end / 100.0;
        seg.text = "[speech]";
        cli_output_speech(o, &seg);
    }
    cli_output_free(o);
}

/* Decodes the file; NULL after a message. */
static float *load_audio(const char *file, gsize *n, char **msg)
{
    gboolean is_uri = gst_uri_is_valid(file) && strstr(file, "://");
    if (!is_uri && !g_file_test(file, G_FILE_TEST_EXISTS)) {
        set_error(msg, "cannot open '%s': %s", file, g_strerror(ENOENT));
        return NULL;
    }
    GError *gerr = NULL;
    float *pcm = cli_audio_load(file, n, &gerr);
    if (!pcm) {
        set_error(msg, "%s", gerr ? gerr->message : "cannot decode the audio");
        g_clear_error(&gerr);
    }
    return pcm;
}

int cli_vad_only_run(const char *file, const cli_format *fmt, const char *output_file,
                     char **msg)
{
    gsize n = 0;
    float *pcm = load_audio(file, &n, msg);
    if (!pcm)
        return 1;
    vad_result r = {0};
    int status = detect(pcm, n, &r, msg);
    g_free(pcm);
    if (status)
        return status;
    FILE *out = cli_open_output(output_file, msg);
    if (!out) {
        free(r.segs);
        return 1;
    }
    if (cli_format_is_document(fmt))
        print_json(out, &r, (double)n / WKV_SAMPLE_RATE);
    else
        print_segments(out, fmt, &r);
    if (!cli_close_output(out, output_file, msg))
        status = 1;
    free(r.segs);
    return status;
}

int cli_vad_filter(float **pcm, gsize *n, char **msg)
{
    vad_result r = {0};
    int status = detect(*pcm, *n, &r, msg);
    if (status)
        return status;
    float *speech = NULL;
    size_t n_speech = 0;
    char *err = NULL;
    if (wkv_vad_filter(*pcm, *n, r.segs, r.n_segs, &params, &speech, &n_speech, &map, &err)) {
        status = set_error(msg, "%s", err ? err : "VAD filtering failed");
        free(err);
        free(r.segs);
        return status;
    }
    fprintf(stderr, "%s: VAD: %d speech segments, %.2f s of %.2f s transcribed\n", PROG,
            r.n_segs, (double)n_speech / WKV_SAMPLE_RATE, (double)*n / WKV_SAMPLE_RATE);
    g_free(*pcm);
    *pcm = g_new0(float, n_speech + 1); /* the caller's g_free'able buffer */
    if (n_speech)
        memcpy(*pcm, speech, n_speech * sizeof(float));
    *n = n_speech;
    free(speech);
    free(r.segs);
    return 0;
}

int cli_vad_chunks(const float *pcm, gsize n, wkv_chunk **chunks, char **msg)
{
    /* a speech segment longer than a chunk is cut where the VAD finds a pause */
    if (params.max_speech_duration_s > 30.0f)
        params.max_speech_duration_s = 30.0f;
    vad_result r = {0};
    if (detect(pcm, n, &r, msg) != 0)
        return -1;
    char *err = NULL;
    int nc = wkv_chunks_from_speech(r.segs, r.n_segs, n, chunks, &err);
    if (nc < 0)
        set_error(msg, "%s", err ? err : "cannot make the chunks");
    else
        fprintf(stderr, "%s: VAD: %d speech segments in %d chunks\n", PROG, r.n_segs, nc);
    free(err);
    free(r.segs);
    return nc;
}

const wkv_segment *cli_vad_map(const wkv_segment *seg, wkv_segment *mapped,
                               wkv_word **words)
{
    *words = NULL;
    if (!map)
        return seg;
    if (seg->n_words > 0)
        *words = g_new(wkv_word, seg->n_words);
    wkv_vad_map_result(map, seg, mapped, *words);
    return mapped;
}

int cli_vad_live(wkv_stream_options *so, char **msg)
{
    if (!cli_vad_enabled())
        return 0;
    char *err = NULL;
    live_model = wkv_vad_model_load(model_path, &err);
    if (!live_model) {
        set_error(msg, "%s", err ? err : "cannot load the VAD model");
        free(err);
        return 1;
    }
    so->vad_model = live_model;
    so->vad_params = params;
    return 0;
}

void cli_vad_cleanup(void)
{
    wkv_vad_map_free(map);
    map = NULL;
    wkv_vad_model_free(live_model);
    live_model = NULL;
}
