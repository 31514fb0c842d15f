/* whisperkv-transcribe: any audio file GStreamer can decode -> text, srt, vtt or json.
 *
 * Exit status: 0 done, 1 an error (missing or undecodable audio, bad model, failed
 * write), 2 bad options. */
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>
#include <gst/gst.h>

#include "audio_load.h"
#include "cli_vad.h"
#include "output.h"
#include "whisperkv.h"
#include "word_options.h"

#define PROG "whisperkv-transcribe"

/* ------------------------------------------------------------------ options */

static char *opt_model;
static char *opt_language;
static int opt_threads = G_MININT; /* G_MININT: not given */
static gchar *opt_compute_type = NULL;
static gboolean opt_no_timestamps, opt_no_condition, opt_no_fallback, opt_progress;
static gboolean opt_verbose;
static gboolean opt_translate;
static int opt_beam_size = G_MININT, opt_best_of = G_MININT, opt_sample_len = G_MININT;
static gboolean opt_fallback;
static double opt_compression_threshold = NAN, opt_logprob_threshold = NAN;
static gint64 opt_seed;
static char *opt_prompt;
static double opt_no_speech = NAN;
static char *opt_mel_norm;
static char *opt_format;
static char *opt_output_file;
static char *opt_dump_mel, *opt_dump_encoder;
static char *opt_logits_tokens, *opt_logits_path; /* --logits TOKENS PATH */
static char **opt_files;
static gboolean opt_live, opt_realtime;
static int opt_step = 2000, opt_latency = 8000;

static gboolean logits_callback(const char *name, const char *value, gpointer data,
                                GError **error)
{
    /* Only reached when the pre-scan found --logits without both arguments. */
    (void)name, (void)value, (void)data;
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "--logits needs two arguments: TOKENS (comma-separated ids) and PATH");
    return FALSE;
}

static GOptionEntry entries[] = {
    {"model", 'm', 0, G_OPTION_ARG_FILENAME, &opt_model,
     "ggml model file (default: $WHISPERKV_MODEL, then models/ggml-base.en.bin, then "
     "models/ggml-*.bin)", "PATH"},
    {"language", 'l', 0, G_OPTION_ARG_STRING, &opt_language,
     "Spoken language code, or auto to detect it (multilingual models); default en. "
     "English-only models always use en", "CODE"},
    {"translate", 0, 0, G_OPTION_ARG_NONE, &opt_translate,
     "Translate into English instead of transcribing (multilingual models)", NULL},
    {"prompt", 0, 0, G_OPTION_ARG_STRING, &opt_prompt,
     "Text to condition the first window on (the reference's initial prompt)", "TEXT"},
    {"beam-size", 0, 0, G_OPTION_ARG_INT, &opt_beam_size,
     "Beam search with N beams at temperature 0 (default 0: greedy)", "N"},
    {"best-of", 0, 0, G_OPTION_ARG_INT, &opt_best_of,
     "Candidates sampled at each fallback temperature (default 5)", "N"},
    {"sample-len", 0, 0, G_OPTION_ARG_INT, &opt_sample_len,
     "Tokens decoded per window at most (default 0: half the text context, 224)", "N"},
    {"threads", 't', 0, G_OPTION_ARG_INT, &opt_threads,
     "Threads (default: the number of cores)", "N"},
    {"compute-type", 0, 0, G_OPTION_ARG_STRING, &opt_compute_type,
     "Encoder compute type: auto (f32 for f32/f16 files, int8 for quantized ones), f32 "
     "(exact), bf16 or int8 (need oneDNN; docs/performance.md); default auto, as the "
     "element's", "TYPE"},
    {"no-timestamps", 0, 0, G_OPTION_ARG_NONE, &opt_no_timestamps,
     "Decode without timestamp tokens (one segment per 30-s window)", NULL},
    {"no-condition", 0, 0, G_OPTION_ARG_NONE, &opt_no_condition,
     "Do not give the previous text as a prompt to the next window", NULL},
    {"temperature-fallback", 0, 0, G_OPTION_ARG_NONE, &opt_fallback,
     "Retry at temperatures 0.2, 0.4, ... 1.0 when a window's text is too repetitive or "
     "improbable (the default)", NULL},
    {"compression-ratio-threshold", 0, 0, G_OPTION_ARG_DOUBLE, &opt_compression_threshold,
     "Fall back when the text's gzip compression ratio exceeds X (default 2.4; <= 0 off)",
     "X"},
    {"logprob-threshold", 0, 0, G_OPTION_ARG_DOUBLE, &opt_logprob_threshold,
     "Fall back when the average log-probability is below X (default -1.0); also the "
     "silence test with --no-speech-threshold", "X"},
    {"seed", 0, 0, G_OPTION_ARG_INT64, &opt_seed,
     "Seed of the sampling at temperatures above 0 (runs are reproducible; default 0)", "N"},
    {"no-fallback", 0, 0, G_OPTION_ARG_NONE, &opt_no_fallback,
     "Decode at temperature 0 only: no retry at higher temperatures when a window's "
     "text is too repetitive or improbable", NULL},
    {"no-speech-threshold", 0, 0, G_OPTION_ARG_DOUBLE, &opt_no_speech,
     "Skip a window as silence above this no-speech probability (default 0.6; >= 1 "
     "never skips)", "X"},
    {"mel-norm", 0, 0, G_OPTION_ARG_STRING, &opt_mel_norm,
     "Log-mel normalization: global (one maximum over the whole file, the reference's; "
     "default) or window (per window, what a stream does)", "global|window"},
    {"live", 0, 0, G_OPTION_ARG_NONE, &opt_live,
     "Transcribe as a live stream: the file goes through the core's stream in simulated "
     "real time (the audio arrives at its real rate on a virtual clock, which each run's "
     "measured compute time advances); finals are written as they commit", NULL},
    {"realtime", 0, 0, G_OPTION_ARG_NONE, &opt_realtime,
     "Live, paced by the wall clock instead of the virtual one (takes as long as the audio; "
     "implies --live)", NULL},
    {"step", 0, 0, G_OPTION_ARG_INT, &opt_step,
     "Live: new audio between two runs, in ms (default 2000)", "MS"},
    {"latency", 0, 0, G_OPTION_ARG_INT, &opt_latency,
     "Live: text is forced final about this many ms after its audio arrived (default 8000)",
     "MS"},
    {"output-format", 'o', 0, G_OPTION_ARG_STRING, &opt_format,
     "Output format (default txt)", "txt|srt|vtt|json"},
    {"output-file", 0, 0, G_OPTION_ARG_FILENAME, &opt_output_file,
     "Write the result there instead of standard output", "PATH"},
    {"progress", 0, 0, G_OPTION_ARG_NONE, &opt_progress,
     "Show progress on stderr even when it is not a terminal", NULL},
    {"verbose", 'v', 0, G_OPTION_ARG_NONE, &opt_verbose,
     "Say on stderr what computes: the compute type and the library and kernels of the "
     "f32 matrix products", NULL},
    {"dump-mel", 0, 0, G_OPTION_ARG_FILENAME, &opt_dump_mel,
     "Debug: write the first window's log-mel (n_mels x 3000 f32 LE)", "PATH"},
    {"dump-encoder", 0, 0, G_OPTION_ARG_FILENAME, &opt_dump_encoder,
     "Debug: write the first window's encoder output (n_audio_ctx x n_audio_state f32 LE)",
     "PATH"},
    {"logits", 0, G_OPTION_FLAG_OPTIONAL_ARG, G_OPTION_ARG_CALLBACK, (gpointer)logits_callback,
     "Debug: write the n_vocab logits (f32 LE) of the last of these comma-separated token "
     "ids, decoded after the first window's audio", "TOKENS PATH"},
    {G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &opt_files, NULL, NULL},
    {NULL, 0, 0, 0, NULL, NULL, NULL},
};

static const char description[] =
    "Transcribes FILE (any audio format GStreamer can decode, or a URI) with a Whisper\n"
    "model in the whisper.cpp ggml format (f32 or f16): greedy decoding (or beam search)\n"
    "at temperature 0, retried at rising temperatures when the result looks wrong\n"
    "(the reference's fallback; --no-fallback turns it off).\n"
    "\n"
    "Model: -m PATH, else $WHISPERKV_MODEL, else models/ggml-base.en.bin, else the first\n"
    "models/ggml-*.bin (relative to the current directory).\n"
    "\n"
    "Output formats: txt (one segment per line), srt, vtt, json (segments with tokens\n"
    "and scores, the model's hyper-parameters and timings).\n"
    "\n"
    "--live: the whole file through the live stream (re-runs every --step ms, text final\n"
    "when two runs agree or --latency forces it); json adds each segment's committed_at\n"
    "and a `live` summary (runs, commit delays, forced commits); with --word-timestamps\n"
    "the stream commits word by word and the summary has per-word delays.\n"
    "Word timestamps and subtitle cues (--word-timestamps, ...): see --help-words.\n"
    "\n"

    "Exit status: 0 done, 1 error, 2 bad options.\n";

/* GOption cannot take two arguments for one option: pull "--logits TOKENS PATH" (or
 * "--logits=TOKENS PATH") out of argv before parsing.  An incomplete one is left for
 * the parser, whose callback reports it. */
static void take_logits_args(int *argc, char **argv)
{
    for (int i = 1; i < *argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            return;
        int take = 0;
        if (strcmp(argv[i], "--logits") == 0 && i + 2 < *argc) {
            opt_logits_tokens = argv[i + 1];
            opt_logits_path = argv[i + 2];
            take = 3;
        } else if (g_str_has_prefix(argv[i], "--logits=") && i + 1 < *argc) {
            opt_logits_tokens = argv[i] + strlen("--logits=");
            opt_logits_path = argv[i + 1];
            take = 2;
        }
        if (take) {
            memmove(argv + i, argv + i + take, sizeof(char *) * (size_t)(*argc - i - take + 1));
            *argc -= take;
            i--;
        }
    }
}

/* Comma-separated non-negative ids -> array; NULL on a syntax error. */
static int *parse_token_list(const char *s, int *n)
{
    char **parts = g_strsplit(s, ",", -1);
    int count = (int)g_strv_length(parts);
    int *ids = count > 0 ? g_new(int, count) : NULL;
    *n = 0;
    for (int i = 0; i < count; i++) {
        const char *p = g_strstrip(parts[i]);
        char *end = NULL;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (!*p || *end || errno || v < 0 || v > G_MAXINT) {
            g_free(ids);
            g_strfreev(parts);
            return NULL;
        }
        ids[(*n)++] = (int)v;
    }
    g_strfreev(parts);
    if (*n == 0) {
        g_free(ids);
        return NULL;
    }
    return ids;
}

/* ------------------------------------------------------------------ messages */

static int fail(int status, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

/* One line on stderr, "whisperkv-transcribe: <message>"; returns status. */
static int fail(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_strdelimit(msg, "\r\n", ' ');
    fprintf(stderr, "%s: %s\n", PROG, msg);
    g_free(msg);
    return status;
}

static int usage(const char *fmt, ...) G_GNUC_PRINTF(1, 2);

static int usage(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s: %s (see --help)\n", PROG, msg);
    g_free(msg);
    return 2;
}

/* ------------------------------------------------------------------ model lookup */

/* -m, $WHISPERKV_MODEL, models/ggml-base.en.bin, the first models/ggml-*.bin. */
static char *find_model(void)
{
    if (opt_model && *opt_model)
        return g_strdup(opt_model);
    const char *env = g_getenv("WHISPERKV_MODEL");
    if (env && *env)
        return g_strdup(env);
    if (g_file_test("models/ggml-base.en.bin", G_FILE_TEST_IS_REGULAR))
        return g_strdup("models/ggml-base.en.bin");
    GDir *dir = g_dir_open("models", 0, NULL);
    if (!dir)
        return NULL;
    char *best = NULL;
    const char *name;
    while ((name = g_dir_read_name(dir))) {
        if (!g_str_has_prefix(name, "ggml-") || !g_str_has_suffix(name, ".bin"))
            continue;
        char *path = g_build_filename("models", name, NULL);
        if (g_file_test(path, G_FILE_TEST_IS_REGULAR) && (!best || strcmp(path, best) < 0)) {
            g_free(best);
            best = path;
        } else {
            g_free(path);
        }
    }
    g_dir_close(dir);
    return best;
}

/* ------------------------------------------------------------------ helpers */

static double now_ms(void)
{
    return (double)g_get_monotonic_time() / 1000.0;
}

/* Writes count floats little-endian.  FALSE with *error on failure. */
static gboolean write_f32_le(const char *path, const float *data, size_t count, char **error)
{
    FILE *f = g_fopen(path, "wb");
    if (!f) {
        *error = g_strdup_printf("cannot write '%s': %s", path, g_strerror(errno));
        return FALSE;
    }
    gboolean ok = TRUE;
#if G_BYTE_ORDER == G_LITTLE_ENDIAN
    ok = fwrite(data, sizeof(float), count, f) == count;
#else
    for (size_t i = 0; i < count && ok; i++) {
        guint32 u;
        memcpy(&u, &data[i], 4);
        u = GUINT32_TO_LE(u);
        ok = fwrite(&u, 4, 1, f) == 1;
    }
#endif
    if (fclose(f) != 0)
        ok = FALSE;
    if (!ok)
        *error = g_strdup_printf("cannot write '%s': %s", path, g_strerror(errno));
    return ok;
}

/* Core messages are malloc'd; copy into GLib memory and free the original. */
static char *take_core_error(char *err, const char *fallback)
{
    char *s = g_strdup(err ? err : fallback);
    free(err);
    return s;
}

/* ------------------------------------------------------------------ progress */

typedef struct {
    gboolean enabled, tty, shown;
    gboolean line_open;   /* a "\r" progress line is on the terminal */
    gboolean out_tty;     /* the results go to the same terminal */
    int last_percent;
} progress_state;

static void on_progress(int64_t seek, int64_t total, void *user)
{
    progress_state *p = ((void **)user)[1];
    if (!p->enabled || total <= 0)
        return;
    int pct = (int)(seek >= total ? 100 : seek * 100 / total);
    if (pct == p->last_percent)
        return;
    p->last_percent = pct;
    char a[32], b[32];
    cli_format_timestamp((double)MIN(seek, total) / 100.0, '.', a, sizeof a);
    cli_format_timestamp((double)total / 100.0, '.', b, sizeof b);
    fprintf(stderr, "%s%s: %3d%% (%s / %s)%s", p->tty ? "\r" : "", PROG, pct, a, b,
            p->tty ? "" : "\n");
    fflush(stderr);
    p->shown = TRUE;
    p->line_open = p->tty;
}

static int on_segment(const wkv_segment *seg, void *user)
{
    cli_output *out = ((void **)user)[0];
    progress_state *p = ((void **)user)[1];
    if (p->line_open && p->out_tty) {
        /* results on the same terminal: erase the progress line, redrawn later */
        fputs("\r\033[K", stderr);
        fflush(stderr);
        p->line_open = FALSE;
        p->last_percent = -1;
    }
    wkv_segment mapped;
    wkv_word *words;
    /* with VAD: onto the input's timeline */
    cli_output_segment(out, cli_vad_map(seg, &mapped, &words));
    g_free(words);
    return 0;
}

/* ------------------------------------------------------------------ debug outputs */

/* What computes, once per run: with --verbose, the compute type and the f32 products'
 * library; always, a warning when those run kernels older than the CPU's. */
static void say_what_runs(const wkv_context *ctx)
{
    static gboolean said;
    if (said)
        return;
    said = TRUE;
    if (opt_verbose)
        fprintf(stderr, "whisperkv: compute type %s; f32 products on %s (%s kernels)\n",
                wkv_compute_type_name(wkv_context_compute_type(ctx)), wkv_f32_gemm_library(),
                wkv_f32_gemm_kernels());
    if (wkv_f32_gemm_slow())
        fprintf(stderr, "warning: the f32 matrix products run %s's %s kernels, older than "
                        "this CPU's: f32 encoding is several times slower than it could be "
                        "(build whisperkv with oneDNN, or set OPENBLAS_CORETYPE before "
                        "starting)\n", wkv_f32_gemm_library(), wkv_f32_gemm_kernels());
}

/* --compute-type (auto when not given) on ctx; -1 with *err set. */
static int set_compute_type(wkv_context *ctx, char **err)
{
    wkv_compute_type type = opt_compute_type
                                ? (wkv_compute_type)wkv_compute_type_parse(opt_compute_type)
                                : WKV_COMPUTE_AUTO;
    if (wkv_context_set_compute_type(ctx, type, err) == 0) {
        say_what_runs(ctx);
        return 0;
    }
    *err = take_core_error(*err, "cannot use that compute type");
    return -1;
}

/* --dump-mel, --dump-encoder, --logits: all on the first window, in a context of
 * their own so that the transcription's counters stay its own, on the compute type
 * the transcription uses. */
static int debug_outputs(const wkv_model *model, const wkv_mel *mel, wkv_mel_norm norm,
                         int threads, const int *ids, int n_ids)
{
    const wkv_hparams *hp = wkv_model_hparams(model);
    size_t win_n = (size_t)mel->n_mels * WKV_N_FRAMES;
    float *win = g_new(float, win_n);
    int size = (int)MIN((int64_t)WKV_N_FRAMES, mel->content_frames);
    wkv_mel_window(mel, 0, size, norm, win);
    char *err = NULL;
    int status = 0;
    wkv_context *ctx = NULL;
    float *logits = NULL;

    if (opt_dump_mel && !write_f32_le(opt_dump_mel, win, win_n, &err)) {
        status = fail(1, "%s", err);
        goto out;
    }
    if (!opt_dump_encoder && !ids)
        goto out;
    ctx = wkv_context_new(model, threads, &err);
    if (!ctx) {
        err = take_core_error(err, "cannot create a decoding context");
        status = fail(1, "%s", err);
        goto out;
    }
    if (set_compute_type(ctx, &err) != 0) {
        status = fail(1, "%s", err);
        goto out;
    }
    if (wkv_encode(ctx, win) != 0) {
        status = fail(1, "the encoder failed on the first window");
        goto out;
    }
    if (opt_dump_encoder &&
        !write_f32_le(opt_dump_encoder, wkv_encoder_output(ctx),
                      (size_t)hp->n_audio_ctx * (size_t)hp->n_audio_state, &err)) {
        status = fail(1, "%s", err);
        goto out;
    }
    if (ids) {
        logits = g_new(float, hp->n_vocab);
        if (wkv_decode(ctx, ids, n_ids, logits) != 0) {
            status = fail(1, "--logits: cannot decode %d tokens (the model holds at most %d)",
                          n_ids, hp->n_text_ctx);
            goto out;
        }
        if (!write_f32_le(opt_logits_path, logits, (size_t)hp->n_vocab, &err)) {
            status = fail(1, "%s", err);
            goto out;
        }
    }
out:
    g_free(err);
    g_free(logits);
    g_free(win);
    wkv_context_free(ctx);
    return status;
}

/* ------------------------------------------------------------------ live */

/* The simulated source delivers audio every 100 ms. */
#define LIVE_CHUNK (WKV_SAMPLE_RATE / 10)

static void on_live_segment(const wkv_stream_segment *s, void *user)
{
    if (!s->final)
        return;
    wkv_segment seg = {
        .seek = s->run_base / WKV_HOP, .start = s->start, .end = s->end,
        .tokens = s->tokens, .n_tokens = s->n_tokens, .text = s->text,
        .avg_logprob = s->avg_logprob, .no_speech_prob = s->no_speech_prob,
        .compression_ratio = s->compression_ratio, .temperature = s->temperature,
        .language = s->language, .words = s->words, .n_words = s->n_words,
    };
    cli_output_live_segment(user, &seg, s->committed_at);
}

/* Stream seconds now: the wall clock since t0 (--realtime), or the virtual clock. */
static double live_now(double t0_ms, double vnow)
{
    return opt_realtime ? (now_ms() - t0_ms) / 1000.0 : vnow;
}

/* Feeds pcm through a stream as a live source would deliver it, then finishes it.
 * On the virtual clock the audio up to `now` has arrived at each push, and a push's
 * compute time moves `now` on; --realtime sleeps until the audio is due instead.
 * Returns the number of finals, or -1 with *err. */
static int run_live(wkv_context *ctx, const float *pcm, size_t n, const wkv_options *opts,
                    cli_output *out, char **language, char **err)
{
    wkv_stream_options so;
    wkv_stream_options_default(&so);
    so.step_ms = opt_step;
    so.latency_ms = opt_latency;
    if (cli_vad_live(&so, err) != 0)
        return -1;
    wkv_stream *st = wkv_stream_new(ctx, opts, &so, on_live_segment, out, err);
    if (!st)
        return -1;
    wkv_stream_stats ss;
    wkv_stream_get_stats(st, &ss);
    double t0 = now_ms(), vnow = 0;
    size_t pos = 0;
    int rc = 0;
    while (pos < n && rc >= 0) {
        size_t next = MIN(n, pos + LIVE_CHUNK);
        double due = (double)next / WKV_SAMPLE_RATE, now = live_now(t0, vnow);
        if (opt_realtime && now < due)
            g_usleep((gulong)((due - now) * 1e6));
        vnow = MAX(vnow, due);
        now = live_now(t0, vnow);
        /* everything that has arrived by now (more than one chunk after a long run) */
        size_t avail = MIN(n, MAX(next, (size_t)(now * WKV_SAMPLE_RATE)));
        wkv_stream_get_stats(st, &ss);
        double busy = ss.busy_ms;
        rc = wkv_stream_push(st, pcm + pos, avail - pos, now, err);
        pos = avail;
        wkv_stream_get_stats(st, &ss);
        vnow += (ss.busy_ms - busy) / 1000.0;
    }
    double busy = ss.busy_ms;
    if (rc >= 0)
        rc = wkv_stream_finish(st, live_now(t0, vnow), err);
    wkv_stream_get_stats(st, &ss);
    vnow += (ss.busy_ms - busy) / 1000.0;
    cli_out_live l = {
        .step_ms = opt_step, .latency_ms = opt_latency, .realtime = opt_realtime,
        .runs = ss.runs, .silent_runs = ss.silent_runs, .forced_runs = ss.forced_runs,
        .finals = ss.finals, .forced_finals = ss.forced_finals, .partials = ss.partials,
        .delay_median = ss.delay_median, .delay_mean = ss.delay_mean,
        .delay_worst = ss.delay_max, .busy_ms = ss.busy_ms, .max_run_ms = ss.max_busy_ms,
        .finished_at = live_now(t0, vnow),
    };
    cli_output_set_live(out, &l);
    *language = g_strdup(wkv_stream_language(st));
    wkv_stream_free(st);
    if (rc >= 0)
        fprintf(stderr, "%s: live: %" G_GINT64_FORMAT " runs, %" G_GINT64_FORMAT " finals (%"
                G_GINT64_FORMAT " forced), commit delay median %.2f s, worst %.2f s\n", PROG,
                ss.runs, ss.finals, ss.forced_finals, ss.delay_median, ss.delay_max);
    return rc < 0 ? -1 : (int)ss.finals;
}

/* ------------------------------------------------------------------ main */

int main(int argc, char **argv)
{
    setlocale(LC_ALL, ""); /* option messages in the user's language and charset */
    setlocale(LC_NUMERIC, "C"); /* numbers always with a '.' */
    take_logits_args(&argc, argv);

    GOptionContext *octx = g_option_context_new("FILE");
    g_option_context_set_summary(octx, "Speech to text with OpenAI Whisper models (whisperkv).");
    g_option_context_set_description(octx, description);
    g_option_context_add_main_entries(octx, entries, NULL);
    g_option_context_add_main_entries(octx, cli_vad_entries, NULL);
    g_option_context_add_group(octx, gst_init_get_option_group());
    g_option_context_add_group(octx, cli_word_option_group());
    GError *gerr = NULL;
    gboolean parsed = g_option_context_parse(octx, &argc, &argv, &gerr);
    g_option_context_free(octx);
    if (!parsed) {
        int st = usage("%s", gerr->message);
        g_error_free(gerr);
        return st;
    }

    /* ---- validate the options */
    guint n_files = opt_files ? g_strv_length(opt_files) : 0;
    if (n_files == 0)
        return usage("no audio file given");
    if (n_files > 1)
        return usage("give one audio file, not %u", n_files);
    const char *file = opt_files[0];

    cli_out_format fmt = CLI_OUT_TXT;
    if (opt_format && !cli_out_format_parse(opt_format, &fmt))
        return usage("unknown output format '%s' (txt, srt, vtt or json)", opt_format);

    wkv_mel_norm norm = WKV_MEL_GLOBAL;
    if (opt_mel_norm) {
        if (g_ascii_strcasecmp(opt_mel_norm, "window") == 0)
            norm = WKV_MEL_WINDOW;
        else if (g_ascii_strcasecmp(opt_mel_norm, "global") != 0)
            return usage("--mel-norm must be global or window, not '%s'", opt_mel_norm);
    }

    if (opt_compute_type && wkv_compute_type_parse(opt_compute_type) < 0)
        return usage("--compute-type must be auto, f32, bf16 or int8");
    if (opt_threads == G_MININT)
        opt_threads = (int)g_get_num_processors();
    else if (opt_threads < 1 || opt_threads > 1024)
        return usage("--threads must be between 1 and 1024");

    opt_live |= opt_realtime;
    if (opt_live && (opt_step < 10 || opt_step > 30000))
        return usage("--step must be between 10 and 30000 ms");
    if (opt_live && opt_latency < 0)
        return usage("--latency must not be negative");

    if (!isnan(opt_no_speech) && !isfinite(opt_no_speech))
        return usage("--no-speech-threshold must be a number");

    const char *language = opt_language && *opt_language ? opt_language : "en";
    gboolean detect = g_ascii_strcasecmp(language, "auto") == 0;
    if (detect)
        language = "auto";
    if (opt_beam_size != G_MININT && (opt_beam_size < 0 || opt_beam_size > 32))
        return usage("--beam-size must be between 0 and 32");
    if (opt_best_of != G_MININT && (opt_best_of < 1 || opt_best_of > 32))
        return usage("--best-of must be between 1 and 32");
    if (opt_sample_len != G_MININT && (opt_sample_len < 0 || opt_sample_len > 448))
        return usage("--sample-len must be between 0 and 448");
    if (opt_fallback && opt_no_fallback)
        return usage("--temperature-fallback and --no-fallback contradict each other");
    if ((!isnan(opt_compression_threshold) && !isfinite(opt_compression_threshold)) ||
        (!isnan(opt_logprob_threshold) && isinf(opt_logprob_threshold) &&
         opt_logprob_threshold > 0))
        return usage("thresholds must be numbers");

    char *word_problem = cli_word_options_check();
    if (word_problem) {
        int st = usage("%s", word_problem);
        g_free(word_problem);
        return st;
    }

    int *logit_ids = NULL, n_logit_ids = 0;
    if (opt_logits_tokens) {
        logit_ids = parse_token_list(opt_logits_tokens, &n_logit_ids);
        if (!logit_ids)
            return usage("--logits: bad token list '%s' (comma-separated ids)",
                         opt_logits_tokens);
    }

    char *vad_bad = cli_vad_check();
    if (vad_bad) {
        int st = usage("%s", vad_bad);
        g_free(vad_bad);
        return st;
    }
    if (cli_vad_only()) { /* no Whisper model needed */
        char *msg = NULL;
        int st = cli_vad_only_run(file, fmt, opt_output_file, &msg);
        if (st)
            fail(st, "%s", msg);
        g_free(msg);
        return st;
    }

    char *model_path = find_model();
    if (!model_path)
        return usage("no model: give -m PATH, set WHISPERKV_MODEL, or put "
                     "ggml-base.en.bin into models/");

    /* ---- everything below fails with status 1 */
    int status = 1;
    wkv_model *model = NULL;
    wkv_context *ctx = NULL;
    wkv_mel *mel = NULL;
    cli_output *out = NULL;
    float *pcm = NULL;
    FILE *outf = stdout;
    char *err = NULL;
    char *live_language = NULL;

    gboolean is_uri = gst_uri_is_valid(file) && strstr(file, "://");
    if (!is_uri && !g_file_test(file, G_FILE_TEST_EXISTS)) {
        status = fail(1, "cannot open '%s': %s", file, g_strerror(ENOENT));
        goto done;
    }

    double t0 = now_ms();
    model = wkv_model_load(model_path, &err);
    double load_ms = now_ms() - t0;
    if (!model) {
        err = take_core_error(err, "cannot load the model");
        status = fail(1, "%s", err);
        goto done;
    }
    const wkv_hparams *hp = wkv_model_hparams(model);

    if (!wkv_model_is_multilingual(model)) {
        if (g_ascii_strcasecmp(language, "en") != 0 && !detect)
            fprintf(stderr, "%s: warning: %s is an English-only model; using en, not %s\n",
                    PROG, model_path, language);
        if (opt_translate)
            fprintf(stderr, "%s: warning: %s is an English-only model; it cannot translate\n",
                    PROG, model_path);
        language = "en";
        detect = FALSE;
    } else if (!detect && wkv_lang_token(model, language) < 0) {
        status = usage("unknown language code '%s'", language);
        goto done;
    }
    for (int i = 0; i < n_logit_ids; i++)
        if (logit_ids[i] >= hp->n_vocab) {
            status = usage("--logits: token id %d is not below n_vocab %d", logit_ids[i],
                           hp->n_vocab);
            goto done;
        }

    GError *aerr = NULL;
    gsize n_samples = 0;
    pcm = cli_audio_load(file, &n_samples, &aerr);
    if (!pcm) {
        status = fail(1, "%s", aerr ? aerr->message : "cannot decode the audio");
        g_clear_error(&aerr);
        goto done;
    }
    double duration = (double)n_samples / WKV_SAMPLE_RATE;
    /* live, the stream gates with VAD itself (run_live) */
    if (cli_vad_enabled() && !opt_live && cli_vad_filter(&pcm, &n_samples, &err) != 0) {
        status = fail(1, "%s", err);
        goto done;
    }

    /* live, the stream computes its own log-mel every run */
    gboolean debug = opt_dump_mel || opt_dump_encoder || logit_ids;
    double mel_ms = 0;
    if (!opt_live || debug) {
        t0 = now_ms();
        mel = wkv_mel_compute(model, pcm, n_samples, opt_threads, &err);
        mel_ms = now_ms() - t0;
        if (!mel) {
            err = take_core_error(err, "cannot compute the log-mel");
            status = fail(1, "%s", err);
            goto done;
        }
    }
    if (!opt_live)
        g_clear_pointer(&pcm, g_free);

    if (debug) {
        if (debug_outputs(model, mel, norm, opt_threads, logit_ids, n_logit_ids) != 0)
            goto done;
    }

    ctx = wkv_context_new(model, opt_threads, &err);
    if (!ctx) {
        err = take_core_error(err, "cannot create a decoding context");
        status = fail(1, "%s", err);
        goto done;
    }
    if (set_compute_type(ctx, &err) != 0) {
        status = fail(1, "%s", err);
        goto done;
    }

    if (opt_output_file && strcmp(opt_output_file, "-") != 0) {
        outf = g_fopen(opt_output_file, "w");
        if (!outf) {
            outf = stdout;
            status = fail(1, "cannot write '%s': %s", opt_output_file, g_strerror(errno));
            goto done;
        }
    }

    wkv_options opts;
    wkv_options_default(&opts);
    opts.language = language;
    opts.timestamps = !opt_no_timestamps;
    opts.condition_on_previous_text = !opt_no_condition;
    if (!isnan(opt_no_speech))
        opts.no_speech_threshold = (float)opt_no_speech;
    opts.mel_norm = norm;
    opts.translate = opt_translate && wkv_model_is_multilingual(model);
    if (opt_no_fallback)
        opts.temperature_increment = 0.0f;
    if (opt_beam_size != G_MININT)
        opts.beam_size = opt_beam_size;
    if (opt_best_of != G_MININT)
        opts.best_of = opt_best_of;
    if (opt_sample_len != G_MININT)
        opts.sample_len = opt_sample_len;
    if (opt_prompt && *opt_prompt)
        opts.initial_prompt = opt_prompt;
    if (!isnan(opt_compression_threshold))
        opts.compression_ratio_threshold = (float)opt_compression_threshold;
    if (!isnan(opt_logprob_threshold))
        opts.logprob_threshold = (float)opt_logprob_threshold;
    opts.seed = (uint64_t)opt_seed;

    progress_state prog = {0};
    prog.tty = isatty(STDERR_FILENO);
    prog.enabled = !opt_live && (opt_progress || (prog.tty && mel->content_frames > WKV_N_FRAMES));
    prog.last_percent = -1;
    prog.out_tty = outf == stdout && isatty(STDOUT_FILENO);

    out = cli_output_new(fmt, outf);
    cli_output_set_compute_type(out, wkv_compute_type_name(wkv_context_compute_type(ctx)));
    if (!cli_word_options_apply(model, &opts, out, &err)) {
        status = usage("%s", err);
        goto done;
    }
    if (detect && wkv_model_is_multilingual(model) && !opt_live) {
        /* detect here (the core would too) to report the probabilities */
        const wkv_specials *sp = wkv_model_specials(model);
        float *window = g_new(float, (gsize)wkv_model_hparams(model)->n_mels * WKV_N_FRAMES);
        float *probs = g_new(float, (gsize)sp->n_langs);
        wkv_mel_window(mel, 0, WKV_N_FRAMES, norm, window);
        int lang = wkv_detect_language(ctx, window, probs, &err);
        if (lang >= 0) {
            opts.language = wkv_lang_code(model, lang);
            language = opts.language;
            cli_output_set_language_probs(out, model, probs);
            fprintf(stderr, "detected language: %s (p = %.3f)\n", language,
                    probs[lang - sp->lang_begin]);
        }
        g_free(window);
        g_free(probs);
        if (lang < 0) {
            err = take_core_error(err, "language detection failed");
            status = fail(1, "%s", err);
            goto done;
        }
    }
    cli_output_begin(out);
    void *cb_data[2] = {out, &prog};
    int n_seg;
    if (opt_live) {
        n_seg = run_live(ctx, pcm, n_samples, &opts, out, &live_language, &err);
        if (live_language)
            language = live_language;
    } else {
        on_progress(0, mel->content_frames, cb_data); /* the 0% line, before the first window */
        n_seg = wkv_transcribe_mel(ctx, mel, &opts, on_segment, on_progress, cb_data, &err);
    }
    if (prog.line_open)
        fputc('\n', stderr);
    if (n_seg < 0) {
        err = take_core_error(err, "transcription failed");
        status = fail(1, "%s", err);
        goto done;
    }

    const wkv_stats *st = wkv_context_stats(ctx);
    cli_out_timings tm = {
        .load_ms = load_ms,
        .mel_ms = mel_ms + st->mel_ms,
        .encode_ms = st->encode_ms,
        .decode_ms = st->decode_ms,
        .windows = st->windows,
        .tokens = st->tokens_decoded,
        .align_ms = st->align_ms,
        .align_windows = st->align_passes,
    };
    if (!cli_output_finish(out, model, language, duration, &tm)) {
        status = fail(1, "cannot write '%s': %s", opt_output_file ? opt_output_file : "stdout",
                      g_strerror(errno));
        goto done;
    }
    status = 0;

done:
    cli_vad_cleanup();
    cli_output_free(out);
    if (outf != stdout && fclose(outf) != 0 && status == 0)
        status = fail(1, "cannot write '%s': %s", opt_output_file, g_strerror(errno));
    wkv_context_free(ctx);
    wkv_mel_free(mel);
    wkv_model_free(model);
    g_free(pcm);
    g_free(err);
    g_free(logit_ids);
    g_free(model_path);
    g_free(live_language);
    return status;
}
