/* whisperkv-transcribe: any audio file GStreamer can decode -> text, srt, vtt or json.
 *
 * Exit status: 0 done, 1 an error (missing or undecodable audio, bad model, failed
 * write), 2 bad options.
 *
 * main() runs the steps of a transcription in turn (the steps section); the options
 * are cli_options.c's, the formats output.c's, live mode cli_live.c's. */
#include <errno.h>
#include <locale.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>
#include <gst/gst.h>

#include "audio_load.h"
#include "cli_common.h"
#include "cli_from_json.h"
#include "cli_live.h"
#include "cli_options.h"
#include "cli_vad.h"
#include "output.h"
#include "whisperkv.h"
#include "whisperkv_debug.h"
#include "word_options.h"

/* ------------------------------------------------------------------ one run */

typedef struct {
    gboolean enabled, tty;
    gboolean line_open;   /* a "\r" progress line is on the terminal */
    gboolean out_tty;     /* the results go to the same terminal */
    int last_percent;
} progress_state;

/* What the steps of one transcription hand on to each other; finish_run frees it. */
typedef struct {
    const cli_args *args;
    char *model_path;
    /* as asked for; then en on English-only models, the detected or the stream's */
    const char *language;
    gboolean detect;      /* language auto, on a multilingual model */
    wkv_model *model;
    double load_ms;
    float *pcm;           /* the audio (offline with VAD, the speech only), until the
                           * transcriber (offline) or the stream (live) has it */
    gsize n_samples;
    double duration;      /* of the input, in seconds */
    wkv_mel *mel;         /* the whole log-mel, for the debug outputs only */
    wkv_context *ctx;
    FILE *outf;
    cli_output *out;
    wkv_options opts;
    progress_state prog;
    char *live_language;
    char *detected;       /* offline: the language the transcriber detected */
    char *err;            /* the last message from below (GLib memory) */
} run;

/* ------------------------------------------------------------------ progress */

/* Offline only, on a terminal for more than one window or with --progress. */
static void progress_init(run *r)
{
    progress_state *p = &r->prog;
    p->tty = isatty(STDERR_FILENO);
    p->enabled = !r->args->live &&
                 (r->args->progress ||
                  (p->tty && (int64_t)r->n_samples / WKV_HOP > WKV_N_FRAMES));
    p->last_percent = -1;
    p->out_tty = r->outf == stdout && isatty(STDOUT_FILENO);
}

static void on_progress(int64_t seek, int64_t total, void *user)
{
    progress_state *p = &((run *)user)->prog;
    if (!p->enabled || total <= 0)
        return;
    int pct = (int)(seek >= total ? 100 : seek * 100 / total);
    if (pct == p->last_percent)
        return;
    p->last_percent = pct;
    char a[32], b[32];
    cli_format_timestamp((double)MIN(seek, total) / 100.0, '.', a, sizeof a);
    cli_format_timestamp((double)total / 100.0, '.', b, sizeof b);
    fprintf(stderr, "%s%s: %3d%% (%s / %s)%s", p->tty ? "\r" : "", CLI_PROG, pct, a, b,
            p->tty ? "" : "\n");
    fflush(stderr);
    p->line_open = p->tty;
}

static int on_segment(const wkv_segment *seg, void *user)
{
    run *r = user;
    progress_state *p = &r->prog;
    if (p->line_open && p->out_tty) {
        /* results on the same terminal: erase the progress line, redrawn later */
        fputs("\r\033[K", stderr);
        fflush(stderr);
        p->line_open = FALSE;
        p->last_percent = -1;
    }
    if (r->args->batch_size > 0 && r->detect && !r->detected && seg->language) {
        r->detected = g_strdup(seg->language); /* batched: detected on the first chunk */
        r->language = r->detected;
    }
    wkv_segment mapped;
    wkv_word *words;
    /* with VAD: onto the input's timeline */
    cli_output_segment(r->out, cli_vad_map(seg, &mapped, &words));
    g_free(words);
    return 0;
}

/* ------------------------------------------------------------------ contexts */

/* What computes, once per run: with --verbose, the compute type and the f32 products'
 * library; always, a warning when those run kernels older than the CPU's. */
static void say_what_runs(const wkv_context *ctx, gboolean verbose)
{
    static gboolean said;
    if (said)
        return;
    said = TRUE;
    if (verbose)
        fprintf(stderr, "whisperkv: compute type %s, %s caches; f32 products on %s (%s "
                        "kernels)\n",
                wkv_compute_type_name(wkv_context_compute_type(ctx)),
                wkv_cache_type_name(wkv_context_cache_type(ctx)), wkv_f32_gemm_library(),
                wkv_f32_gemm_kernels());
    if (wkv_f32_gemm_slow())
        fprintf(stderr, "warning: the f32 matrix products run %s's %s kernels, older than "
                        "this CPU's: f32 encoding is several times slower than it could be "
                        "(build whisperkv with oneDNN, or set OPENBLAS_CORETYPE before "
                        "starting)\n", wkv_f32_gemm_library(), wkv_f32_gemm_kernels());
}

/* A decoding context on --compute-type (auto when not given), the same for the
 * transcription and the debug outputs; NULL with *err (GLib memory). */
static wkv_context *new_context(const wkv_model *model, const cli_args *a, char **err)
{
    wkv_context *ctx = wkv_context_new(model, a->threads, err);
    if (!ctx) {
        *err = cli_core_error(*err, "cannot create a decoding context");
        return NULL;
    }
    wkv_compute_type type = a->compute_type
                                ? (wkv_compute_type)wkv_compute_type_parse(a->compute_type)
                                : WKV_COMPUTE_AUTO;
    if (wkv_context_set_compute_type(ctx, type, err) != 0) {
        *err = cli_core_error(*err, "cannot use that compute type");
        wkv_context_free(ctx);
        return NULL;
    }
    if (a->kv_cache &&
        wkv_context_set_cache_type(ctx, (wkv_cache_type)wkv_cache_type_parse(a->kv_cache),
                                   err) != 0) {
        *err = cli_core_error(*err, "cannot use that cache type");
        wkv_context_free(ctx);
        return NULL;
    }
    say_what_runs(ctx, a->verbose);
    wkv_debug_set_drafts(ctx, !a->no_drafts);
    return ctx;
}

/* ------------------------------------------------------------------ debug outputs */

static gboolean wants_debug_outputs(const cli_args *a)
{
    return a->dump_mel || a->dump_encoder || a->logit_ids;
}

/* --dump-mel, --dump-encoder, --logits: all on the first window, in a context of
 * their own so that the transcription's counters stay its own, on the compute type
 * the transcription uses. */
static int debug_outputs(const run *r)
{
    const cli_args *a = r->args;
    const wkv_mel *mel = r->mel;
    const wkv_hparams *hp = wkv_model_hparams(r->model);
    size_t win_n = (size_t)mel->n_mels * WKV_N_FRAMES;
    float *win = g_new(float, win_n);
    int size = (int)MIN((int64_t)WKV_N_FRAMES, mel->content_frames);
    wkv_mel_window(mel, 0, size, a->decode.mel_norm, win);
    char *err = NULL;
    int status = 0;
    wkv_context *ctx = NULL;
    float *logits = NULL;

    if (a->dump_mel && !cli_write_f32_le(a->dump_mel, win, win_n, &err)) {
        status = cli_fail(1, "%s", err);
        goto out;
    }
    if (!a->dump_encoder && !a->logit_ids)
        goto out;
    ctx = new_context(r->model, a, &err);
    if (!ctx) {
        status = cli_fail(1, "%s", err);
        goto out;
    }
    if (wkv_encode(ctx, win) != 0) {
        status = cli_fail(1, "the encoder failed on the first window");
        goto out;
    }
    if (a->dump_encoder &&
        !cli_write_f32_le(a->dump_encoder, wkv_encoder_output(ctx),
                      (size_t)hp->n_audio_ctx * (size_t)hp->n_audio_state, &err)) {
        status = cli_fail(1, "%s", err);
        goto out;
    }
    if (a->logit_ids) {
        logits = g_new(float, hp->n_vocab);
        if (wkv_decode(ctx, a->logit_ids, a->n_logit_ids, logits) != 0) {
            status = cli_fail(1, "--logits: cannot decode %d tokens (the model holds at "
                                 "most %d)", a->n_logit_ids, hp->n_text_ctx);
            goto out;
        }
        if (!cli_write_f32_le(a->logits_path, logits, (size_t)hp->n_vocab, &err)) {
            status = cli_fail(1, "%s", err);
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

/* ------------------------------------------------------------------ the steps */
/* Each returns 0, or the exit status after saying on stderr what went wrong. */

/* --vad-only: the speech segments of the file, without a Whisper model. */
static int run_vad_only(const cli_args *a)
{
    char *msg = NULL;
    int st = cli_vad_only_run(a->file, a->format, a->output_file, &msg);
    if (st)
        cli_fail(st, "%s", msg);
    g_free(msg);
    return st;
}

/* --from-json: a -o json document written again as txt, srt or vtt. */
static int run_from_json(const cli_args *a)
{
    char *msg = NULL;
    int st = cli_from_json_run(a, &msg);
    if (st)
        cli_fail(st, "%s", msg);
    g_free(msg);
    return st;
}

/* No model file at all is a usage error, said before anything is read. */
static int find_model(run *r)
{
    r->model_path = cli_find_model(r->args);
    if (!r->model_path)
        return cli_usage("no model: give -m PATH, set WHISPERKV_MODEL, or put "
                         "ggml-base.en.bin into models/");
    return 0;
}

/* A missing file is said before the model loads (a URI only when it is decoded). */
static int check_input(run *r)
{
    const char *file = r->args->file;
    gboolean is_uri = gst_uri_is_valid(file) && strstr(file, "://");
    if (!is_uri && !g_file_test(file, G_FILE_TEST_EXISTS))
        return cli_fail(1, "cannot open '%s': %s", file, g_strerror(ENOENT));
    return 0;
}

/* The model, timed for the JSON's timings. */
static int load_model(run *r)
{
    double t0 = cli_now_ms();
    r->model = wkv_model_load(r->model_path, &r->err);
    r->load_ms = cli_now_ms() - t0;
    if (!r->model) {
        r->err = cli_core_error(r->err, "cannot load the model");
        return cli_fail(1, "%s", r->err);
    }
    return 0;
}

/* The options only the model can check: the language (English-only models always use
 * en, with a warning) and the --logits ids. */
static int check_model_options(run *r)
{
    const cli_args *a = r->args;
    if (!wkv_model_is_multilingual(r->model)) {
        if (g_ascii_strcasecmp(r->language, "en") != 0 && !r->detect)
            fprintf(stderr, "%s: warning: %s is an English-only model; using en, not %s\n",
                    CLI_PROG, r->model_path, r->language);
        if (a->translate)
            fprintf(stderr, "%s: warning: %s is an English-only model; it cannot translate\n",
                    CLI_PROG, r->model_path);
        r->language = "en";
        r->detect = FALSE;
    } else if (!r->detect && wkv_lang_token(r->model, r->language) < 0) {
        return cli_usage("unknown language code '%s'", r->language);
    }
    int n_vocab = wkv_model_hparams(r->model)->n_vocab;
    for (int i = 0; i < a->n_logit_ids; i++)
        if (a->logit_ids[i] >= n_vocab)
            return cli_usage("--logits: token id %d is not below n_vocab %d", a->logit_ids[i],
                             n_vocab);
    return 0;
}

/* The samples, decoded by GStreamer; with VAD offline, the speech only (live, the
 * stream gates with VAD itself: cli_run_live). */
static int load_audio(run *r)
{
    GError *aerr = NULL;
    r->pcm = cli_audio_load(r->args->file, &r->n_samples, &aerr);
    if (!r->pcm) {
        int st = cli_fail(1, "%s", aerr ? aerr->message : "cannot decode the audio");
        g_clear_error(&aerr);
        return st;
    }
    r->duration = (double)r->n_samples / WKV_SAMPLE_RATE;
    /* batched, VAD picks the chunks instead (transcribe_batched) */
    if (cli_vad_enabled() && !r->args->live && r->args->batch_size == 0 &&
        cli_vad_filter(&r->pcm, &r->n_samples, &r->err) != 0)
        return cli_fail(1, "%s", r->err);
    return 0;
}

/* The log-mel of the whole file for the debug outputs only: the transcription computes
 * its own (the core's offline transcriber, or the stream every run). */
static int compute_mel(run *r)
{
    const cli_args *a = r->args;
    if (!wants_debug_outputs(a))
        return 0;
    r->mel = wkv_mel_compute(r->model, r->pcm, r->n_samples, a->threads, &r->err);
    if (!r->mel) {
        r->err = cli_core_error(r->err, "cannot compute the log-mel");
        return cli_fail(1, "%s", r->err);
    }
    return 0;
}

/* --dump-mel, --dump-encoder and --logits, before the transcription. */
static int write_debug_outputs(run *r)
{
    return wants_debug_outputs(r->args) ? debug_outputs(r) : 0;
}

/* The transcription's context. */
static int open_context(run *r)
{
    r->ctx = new_context(r->model, r->args, &r->err);
    return r->ctx ? 0 : cli_fail(1, "%s", r->err);
}

/* The output file (standard output without --output-file, or with "-") and the
 * writer of the format. */
static int open_output(run *r)
{
    char *msg = NULL;
    r->outf = cli_open_output(r->args->output_file, &msg);
    if (!r->outf) {
        r->outf = stdout;
        int st = cli_fail(1, "%s", msg);
        g_free(msg);
        return st;
    }
    r->out = cli_output_new(r->args->format, r->outf);
    cli_output_set_types(r->out, wkv_compute_type_name(wkv_context_compute_type(r->ctx)),
                         wkv_cache_type_name(wkv_context_cache_type(r->ctx)));
    return 0;
}

/* The decoding options: the command line's, on the language the model allows, and the
 * word options, which the output is told too (a bad --alignment-heads: exit 2). */
static int set_options(run *r)
{
    r->opts = r->args->decode;
    r->opts.language = r->language;
    r->opts.translate = r->args->translate && wkv_model_is_multilingual(r->model);
    if (!cli_word_options_apply(r->model, &r->opts, r->out, &r->err))
        return cli_usage("%s", r->err);
    return 0;
}

/* --language auto offline: the transcriber detected it on the first window; the
 * probabilities go to the output (JSON) and the choice to stderr, once. */
static void report_language(run *r, const wkv_transcriber *t)
{
    if (!r->detect || !wkv_model_is_multilingual(r->model) || strcmp(r->language, "auto"))
        return;
    const wkv_specials *sp = wkv_model_specials(r->model);
    float *probs = g_new(float, (gsize)sp->n_langs);
    const char *code = wkv_transcriber_language(t, probs);
    int lang = wkv_lang_token(r->model, code);
    if (lang >= 0) {
        r->detected = g_strdup(code); /* the transcriber's goes with it */
        r->language = r->detected;
        cli_output_set_language_probs(r->out, r->model, probs);
        fprintf(stderr, "detected language: %s (p = %.3f)\n", code,
                probs[lang - sp->lang_begin]);
    }
    g_free(probs);
}

/* Runs the windows the transcriber has ready, with progress; 0 or -1. */
static int run_ready(run *r, wkv_transcriber *t, int64_t content)
{
    while (wkv_transcriber_next(t) > 0) {
        int64_t seek = wkv_transcriber_run(t, &r->err);
        if (seek < 0)
            return -1;
        report_language(r, t);
        on_progress(seek, content, r);
    }
    return 0;
}

/* Offline: the core's transcriber on the file, a window's worth of samples at a time,
 * each window run once it is in (with window normalization the transcriber then holds
 * about one window; the reference's global one waits for the close). */
static int transcribe_offline(run *r)
{
    wkv_transcriber *t = wkv_transcriber_new(r->ctx, &r->opts, on_segment, r, &r->err);
    if (!t)
        return -1;
    const int64_t content = (int64_t)r->n_samples / WKV_HOP;
    on_progress(0, content, r); /* the 0% line, before the first window */
    int rc = 0;
    for (gsize at = 0; rc == 0 && at < r->n_samples; at += WKV_N_SAMPLES) {
        gsize k = MIN((gsize)WKV_N_SAMPLES, r->n_samples - at);
        rc = wkv_transcriber_push(t, r->pcm + at, k, &r->err);
        if (rc == 0)
            rc = run_ready(r, t, content);
    }
    g_clear_pointer(&r->pcm, g_free);
    wkv_transcriber_close(t);
    if (rc == 0)
        rc = run_ready(r, t, content);
    int n_seg = rc == 0 ? wkv_transcriber_segments(t) : -1;
    wkv_transcriber_free(t);
    return n_seg;
}

/* --batch-size: the file in chunks (plain 30-s ones, or speech merged up to 30 s with
 * VAD), batch_size of them decoded side by side by the core. */
static int transcribe_batched(run *r)
{
    wkv_chunk *chunks = NULL;
    int nc = cli_vad_enabled() ? cli_vad_chunks(r->pcm, r->n_samples, &chunks, &r->err)
                               : wkv_chunks_plain(r->n_samples, &chunks, &r->err);
    if (nc < 0)
        return -1;
    on_progress(0, (int64_t)r->n_samples / WKV_HOP, r);
    int n_seg = wkv_transcribe_chunks(r->ctx, r->pcm, r->n_samples, chunks, nc,
                                      r->args->batch_size, &r->opts, on_segment,
                                      on_progress, r, &r->err);
    free(chunks);
    return n_seg;
}

/* The transcription, offline with progress or live; the output writes the segments
 * as they come. */
static int transcribe(run *r)
{
    progress_init(r);
    cli_output_begin(r->out);
    int n_seg;
    if (r->args->live) {
        n_seg = cli_run_live(r->ctx, r->pcm, r->n_samples, &r->opts, r->args, r->out,
                             &r->live_language, &r->err);
        if (r->live_language)
            r->language = r->live_language;
    } else if (r->args->batch_size > 0) {
        n_seg = transcribe_batched(r);
    } else {
        n_seg = transcribe_offline(r);
    }
    if (r->prog.line_open)
        fputc('\n', stderr);
    if (n_seg < 0) {
        r->err = cli_core_error(r->err, "transcription failed");
        return cli_fail(1, "%s", r->err);
    }
    return 0;
}

/* What the format keeps for the end (the whole JSON document, with the timings). */
static int write_result(run *r)
{
    const wkv_stats *st = wkv_context_stats(r->ctx);
    cli_out_timings tm = {
        .load_ms = r->load_ms,
        .mel_ms = st->mel_ms,
        .encode_ms = st->encode_ms,
        .decode_ms = st->decode_ms,
        .windows = st->windows,
        .tokens = st->tokens_decoded,
        .align_ms = st->align_ms,
        .align_windows = st->align_passes,
        .draft_tokens = st->draft_tokens,
        .draft_accepted = st->draft_accepted,
    };
    const char *path = r->args->output_file;
    if (!cli_output_finish(r->out, r->model, r->language, r->duration, &tm))
        return cli_fail(1, "cannot write '%s': %s", path ? path : "stdout", g_strerror(errno));
    return 0;
}

/* Frees the run and closes the output file, whose failed close fails a run that had
 * succeeded.  Returns the exit status. */
static int finish_run(run *r, int status)
{
    cli_vad_cleanup();
    cli_output_free(r->out);
    if (r->outf != stdout && fclose(r->outf) != 0 && status == 0)
        status = cli_fail(1, "cannot write '%s': %s", r->args->output_file, g_strerror(errno));
    wkv_context_free(r->ctx);
    wkv_mel_free(r->mel);
    wkv_model_free(r->model);
    g_free(r->pcm);
    g_free(r->err);
    g_free(r->model_path);
    g_free(r->live_language);
    g_free(r->detected);
    return status;
}

/* ------------------------------------------------------------------ main */

int main(int argc, char **argv)
{
    setlocale(LC_ALL, ""); /* option messages in the user's language and charset */
    setlocale(LC_NUMERIC, "C"); /* numbers always with a '.' */
    cli_args args;
    int status = cli_args_parse(&argc, &argv, &args);
    if (status != 0)
        return status;
    if (cli_vad_only()) { /* no Whisper model needed */
        status = run_vad_only(&args);
        cli_args_clear(&args);
        return status;
    }
    if (args.from_json) { /* neither model nor audio */
        status = run_from_json(&args);
        cli_args_clear(&args);
        return status;
    }

    run r = {.args = &args, .language = args.language, .detect = args.detect, .outf = stdout};
    status = find_model(&r);
    if (status == 0)
        status = check_input(&r);
    if (status == 0)
        status = load_model(&r);
    if (status == 0)
        status = check_model_options(&r);
    if (status == 0)
        status = load_audio(&r);
    if (status == 0)
        status = compute_mel(&r);
    if (status == 0)
        status = write_debug_outputs(&r);
    if (status == 0)
        status = open_context(&r);
    if (status == 0)
        status = open_output(&r);
    if (status == 0)
        status = set_options(&r);
    if (status == 0)
        status = transcribe(&r);
    if (status == 0)
        status = write_result(&r);
    status = finish_run(&r, status);
    cli_args_clear(&args);
    return status;
}
