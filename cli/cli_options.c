/* whisperkv-transcribe's main options (cli_options.h): the entries, --help's text, the
 * two-argument --logits, and the checks of what was given (exit 2). */
#include "cli_options.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gst/gst.h>

#include "cli_common.h"
#include "cli_vad.h"
#include "word_options.h"

static char *opt_model;
static char *opt_language;
static int opt_threads = G_MININT; /* G_MININT: not given */
static gchar *opt_compute_type = NULL;
static gchar *opt_kv_cache = NULL;
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
static int opt_step = 2000, opt_latency = 8000, opt_run_ms, opt_frame_threshold = -1;
static int opt_max_held;
static char *opt_commit_policy;
static int opt_batch_size;
static gboolean opt_no_drafts;
static gboolean opt_from_json;
static char *opt_audio_ctx;

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
    {"batch-size", 0, 0, G_OPTION_ARG_INT, &opt_batch_size,
     "Offline batching (faster-whisper's batched pipeline): cut the file into chunks of up "
     "to 30 s (plain 30-s windows, or with --vad-model speech merged up to 30 s), decode "
     "each without the previous text, N chunks side by side (1-64; default 0: the "
     "reference's sequential long form)", "N"},
    {"no-drafts", 0, 0, G_OPTION_ARG_NONE, &opt_no_drafts,
     "Live: decode each run token by token instead of first checking the previous run's "
     "tokens as a draft in one pass (the text is the same; for comparisons)", NULL},
    {"threads", 't', 0, G_OPTION_ARG_INT, &opt_threads,
     "Threads (default: the number of cores)", "N"},
    {"compute-type", 0, 0, G_OPTION_ARG_STRING, &opt_compute_type,
     /* each "name (description); " of the core's list of types (whisperkv.h) */
#define CLI_TYPE_HELP(suffix, name, description) name " (" description "); "
     "Encoder compute type: " WKV_COMPUTE_TYPES(CLI_TYPE_HELP) "docs/performance.md; "
     "default auto, as the element's", "TYPE"},
#undef CLI_TYPE_HELP
    {"audio-ctx", 0, 0, G_OPTION_ARG_STRING, &opt_audio_ctx,
     "Encoder frames (0.02 s each) per window, as whisper.cpp's -ac: N runs the encoder on "
     "the window's first N frames only (faster, less accurate; too few and the decoder may "
     "loop), auto sizes each window to the audio it holds (live: every run; offline: a "
     "window shorter than 30 s); default 0: all of the model's (1500); docs/architecture.md",
     "N|auto"},
    {"kv-cache", 0, 0, G_OPTION_ARG_STRING, &opt_kv_cache,
     "The decoder's attention caches: auto (half for quantized files and bf16/int8, f32 "
     "for f32/f16 files on f32), f32 or f16 (half: faster steps, a smaller context, "
     "logits within half's rounding); default auto, as the element's", "TYPE"},
    {"no-timestamps", 0, 0, G_OPTION_ARG_NONE, &opt_no_timestamps,
     "Decode without timestamp tokens (one segment per 30-s window)", NULL},
    {"no-condition", 0, 0, G_OPTION_ARG_NONE, &opt_no_condition,
     "Do not give the previous text as a prompt to the next window (live: to the next "
     "run; --prompt stays the prompt of every run)", NULL},
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
    {"commit-policy", 0, 0, G_OPTION_ARG_STRING, &opt_commit_policy,
     "Live: when text becomes final: alignatt (one run decides: the words before the "
     "first token whose attention reaches the last --frame-threshold ms of the audio; "
     "default) or agreement (two consecutive runs agree, LocalAgreement-2)",
     "agreement|alignatt"},
    {"frame-threshold", 0, 0, G_OPTION_ARG_INT, &opt_frame_threshold,
     "Live, alignatt: how close to the end of the audio (ms) a token may look before the "
     "run stops there (default 500)", "MS"},
    {"max-held", 0, 0, G_OPTION_ARG_INT, &opt_max_held,
     "Live, alignatt: the most audio a run holds, committed words' included (ms; default "
     "0: 24 s); with --audio-ctx auto it bounds the encoder's work (6000: 256 - 384 "
     "frames a run)", "MS"},
    {"run-ms", 0, 0, G_OPTION_ARG_INT, &opt_run_ms,
     "Live, virtual clock: each run takes this many ms instead of its measured compute "
     "time (a repeatable run on any machine, or a slower or faster device's; default 0: "
     "measured)", "MS"},
    /* description and -o's argument: the format names, filled in by parse() */
    {"from-json", 0, 0, G_OPTION_ARG_NONE, &opt_from_json, NULL, NULL},
    {"output-format", 'o', 0, G_OPTION_ARG_STRING, &opt_format,
     "Output format (default txt)", NULL},
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

/* A format for g_strdup_printf: %s, the formats' --help (cli_format_help). */
static const char description[] =
    "Transcribes FILE (any audio format GStreamer can decode, or a URI) with a Whisper\n"
    "model in the whisper.cpp ggml format (f32 or f16): greedy decoding (or beam search)\n"
    "at temperature 0, retried at rising temperatures when the result looks wrong\n"
    "(the reference's fallback; --no-fallback turns it off).\n"
    "\n"
    "Model: -m PATH, else $WHISPERKV_MODEL, else models/ggml-base.en.bin, else the first\n"
    "models/ggml-*.bin (relative to the current directory).\n"
    "\n"
    "Output formats: %s.\n" /* output.c's table */
    "\n"
    "--live: the whole file through the live stream (re-runs every --step ms, text final\n"
    "when one run's attention has not reached the last --frame-threshold ms, or with\n"
    "--commit-policy agreement when two runs agree; --latency forces it); json adds each segment's committed_at\n"
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

char *cli_find_model(const cli_args *args)
{
    if (args->model && *args->model)
        return g_strdup(args->model);
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

/* GOption over the whole command line: the main and VAD entries, GStreamer's group and
 * the word group. */
static int parse(int *argc, char ***argv)
{
    take_logits_args(argc, *argv);
    /* the texts naming the output formats, from output.c's table */
    char *help = cli_format_help(), *all = cli_format_names("|", "|", TRUE);
    char *text = cli_format_names(", ", " or ", FALSE);
    char *desc = g_strdup_printf(description, help);
    char *from_json = g_strdup_printf(
        "FILE is a document this program wrote with -o json: write it again as %s, no "
        "model or audio needed (with --word-timestamps, srt/vtt cues are cut from its "
        "words with the cue options given: other line widths without transcribing again)",
        text);
    for (GOptionEntry *e = entries; e->long_name; e++) {
        if (strcmp(e->long_name, "from-json") == 0)
            e->description = from_json;
        else if (strcmp(e->long_name, "output-format") == 0)
            e->arg_description = all;
    }
    GOptionContext *octx = g_option_context_new("FILE");
    g_option_context_set_summary(octx, "Speech to text with OpenAI Whisper models (whisperkv).");
    g_option_context_set_description(octx, desc);
    g_option_context_add_main_entries(octx, entries, NULL);
    g_option_context_add_main_entries(octx, cli_vad_entries, NULL);
    g_option_context_add_group(octx, gst_init_get_option_group());
    g_option_context_add_group(octx, cli_word_option_group());
    GError *gerr = NULL;
    gboolean parsed = g_option_context_parse(octx, argc, argv, &gerr);
    g_option_context_free(octx);
    for (GOptionEntry *e = entries; e->long_name; e++)
        if (e->description == from_json)
            e->description = NULL;
        else if (e->arg_description == all)
            e->arg_description = NULL;
    g_free(help), g_free(all), g_free(text), g_free(desc), g_free(from_json);
    if (parsed)
        return 0;
    int st = cli_usage("%s", gerr->message);
    g_error_free(gerr);
    return st;
}

/* The file, the output, the log-mel, what computes and live mode. */
static int check_io_and_compute(cli_args *a)
{
    guint n_files = opt_files ? g_strv_length(opt_files) : 0;
    if (n_files == 0)
        return cli_usage("no audio file given");
    if (n_files > 1)
        return cli_usage("give one audio file, not %u", n_files);
    a->file = opt_files[0];
    a->model = opt_model;

    a->format = cli_format_find(opt_format);
    if (!a->format) {
        char *names = cli_format_names(", ", " or ", TRUE);
        int st = cli_usage("unknown output format '%s' (%s)", opt_format, names);
        g_free(names);
        return st;
    }
    a->output_file = opt_output_file;

    a->decode.mel_norm = WKV_MEL_GLOBAL;
    if (opt_mel_norm) {
        if (g_ascii_strcasecmp(opt_mel_norm, "window") == 0)
            a->decode.mel_norm = WKV_MEL_WINDOW;
        else if (g_ascii_strcasecmp(opt_mel_norm, "global") != 0)
            return cli_usage("--mel-norm must be global or window, not '%s'", opt_mel_norm);
    }

    if (opt_compute_type && wkv_compute_type_parse(opt_compute_type) < 0)
#define CLI_TYPE_NAME(suffix, name, description) " " name
        return cli_usage("--compute-type must be one of:" WKV_COMPUTE_TYPES(CLI_TYPE_NAME));
#undef CLI_TYPE_NAME
    a->compute_type = opt_compute_type;
    if (opt_kv_cache && wkv_cache_type_parse(opt_kv_cache) < 0)
        return cli_usage("--kv-cache must be auto, f32 or f16");
    a->kv_cache = opt_kv_cache;
    if (opt_threads == G_MININT)
        opt_threads = (int)g_get_num_processors();
    else if (opt_threads < 1 || opt_threads > 1024)
        return cli_usage("--threads must be between 1 and 1024");
    a->threads = opt_threads;
    a->progress = opt_progress;
    a->verbose = opt_verbose;

    a->live = opt_live || opt_realtime;
    a->realtime = opt_realtime;
    if (a->live && (opt_step < 10 || opt_step > 30000))
        return cli_usage("--step must be between 10 and 30000 ms");
    if (a->live && opt_latency < 0)
        return cli_usage("--latency must not be negative");
    if (opt_run_ms < 0 || opt_run_ms > 600000 || (opt_run_ms && (!a->live || a->realtime)))
        return cli_usage("--run-ms is for --live on the virtual clock, 0 to 600000 ms");
    a->step_ms = opt_step;
    a->latency_ms = opt_latency;
    if ((opt_commit_policy || opt_frame_threshold >= 0) && !a->live)
        return cli_usage("--commit-policy and --frame-threshold are for --live");
    if (opt_commit_policy && strcmp(opt_commit_policy, "agreement") != 0 &&
        strcmp(opt_commit_policy, "alignatt") != 0)
        return cli_usage("--commit-policy must be agreement or alignatt");
    a->alignatt = !opt_commit_policy || strcmp(opt_commit_policy, "alignatt") == 0;
    if (opt_frame_threshold >= 0 && !a->alignatt)
        return cli_usage("--frame-threshold is for --commit-policy alignatt");
    if (opt_frame_threshold > 30000 || opt_frame_threshold < -1)
        return cli_usage("--frame-threshold must be between 0 and 30000 ms");
    a->frame_threshold_ms = opt_frame_threshold;
    if (opt_max_held && (!a->live || !a->alignatt))
        return cli_usage("--max-held is for --live with --commit-policy alignatt");
    if (opt_max_held && (opt_max_held < 1000 || opt_max_held > 30000))
        return cli_usage("--max-held must be 0, or between 1000 and 30000 ms");
    a->max_held_ms = opt_max_held;
    a->run_ms = opt_run_ms;
    if (opt_batch_size < 0 || opt_batch_size > 64)
        return cli_usage("--batch-size must be between 0 and 64");
    if (opt_batch_size > 0 && a->live)
        return cli_usage("--batch-size is for offline runs, not --live");
    a->batch_size = opt_batch_size;
    a->no_drafts = opt_no_drafts;
    a->from_json = opt_from_json;
    if (a->from_json && (cli_format_is_document(a->format) || a->live || a->batch_size ||
                         cli_vad_only() || opt_dump_mel || opt_dump_encoder ||
                         opt_logits_tokens)) {
        char *names = cli_format_names(", ", " or ", FALSE);
        int st = cli_usage("--from-json writes %s from a JSON document: not with -o json, "
                           "--live, --batch-size, --vad-only or the debug outputs", names);
        g_free(names);
        return st;
    }
    return 0;
}

/* The language and the decoding options, into a->decode. */
static int check_decoding(cli_args *a)
{
    if (!isnan(opt_no_speech) && !isfinite(opt_no_speech))
        return cli_usage("--no-speech-threshold must be a number");

    a->language = opt_language && *opt_language ? opt_language : "en";
    a->detect = g_ascii_strcasecmp(a->language, "auto") == 0;
    if (a->detect)
        a->language = "auto";
    a->translate = opt_translate;
    if (opt_beam_size != G_MININT && (opt_beam_size < 0 || opt_beam_size > 32))
        return cli_usage("--beam-size must be between 0 and 32");
    if (opt_best_of != G_MININT && (opt_best_of < 1 || opt_best_of > 32))
        return cli_usage("--best-of must be between 1 and 32");
    if (opt_sample_len != G_MININT && (opt_sample_len < 0 || opt_sample_len > 448))
        return cli_usage("--sample-len must be between 0 and 448");
    if (opt_fallback && opt_no_fallback)
        return cli_usage("--temperature-fallback and --no-fallback contradict each other");
    if ((!isnan(opt_compression_threshold) && !isfinite(opt_compression_threshold)) ||
        (!isnan(opt_logprob_threshold) && isinf(opt_logprob_threshold) &&
         opt_logprob_threshold > 0))
        return cli_usage("thresholds must be numbers");

    wkv_options *o = &a->decode;
    o->timestamps = !opt_no_timestamps;
    o->condition_on_previous_text = !opt_no_condition;
    if (!isnan(opt_no_speech))
        o->no_speech_threshold = (float)opt_no_speech;
    if (opt_no_fallback)
        o->temperature_increment = 0.0f;
    if (opt_beam_size != G_MININT)
        o->beam_size = opt_beam_size;
    if (opt_best_of != G_MININT)
        o->best_of = opt_best_of;
    if (opt_sample_len != G_MININT)
        o->sample_len = opt_sample_len;
    if (opt_prompt && *opt_prompt)
        o->initial_prompt = opt_prompt;
    if (!isnan(opt_compression_threshold))
        o->compression_ratio_threshold = (float)opt_compression_threshold;
    if (!isnan(opt_logprob_threshold))
        o->logprob_threshold = (float)opt_logprob_threshold;
    o->seed = (uint64_t)opt_seed;
    if (opt_audio_ctx) {
        char *end = NULL;
        errno = 0;
        long v = strtol(opt_audio_ctx, &end, 10);
        if (g_ascii_strcasecmp(opt_audio_ctx, "auto") == 0)
            o->audio_ctx = WKV_AUDIO_CTX_AUTO;
        else if (!*opt_audio_ctx || *end || errno || v < 0 || v > 1500)
            return cli_usage("--audio-ctx must be auto or between 0 and 1500 frames, not '%s'",
                             opt_audio_ctx);
        else
            o->audio_ctx = (int)v;
    }
    return 0;
}

/* The word options, the debug outputs and the VAD options. */
static int check_extras(cli_args *a)
{
    char *word_problem = cli_word_options_check();
    if (word_problem) {
        int st = cli_usage("%s", word_problem);
        g_free(word_problem);
        return st;
    }

    a->dump_mel = opt_dump_mel;
    a->dump_encoder = opt_dump_encoder;
    if (opt_logits_tokens) {
        a->logit_ids = parse_token_list(opt_logits_tokens, &a->n_logit_ids);
        if (!a->logit_ids)
            return cli_usage("--logits: bad token list '%s' (comma-separated ids)",
                             opt_logits_tokens);
        a->logits_path = opt_logits_path;
    }

    char *vad_bad = cli_vad_check();
    if (vad_bad) {
        int st = cli_usage("%s", vad_bad);
        g_free(vad_bad);
        return st;
    }
    return 0;
}

int cli_args_parse(int *argc, char ***argv, cli_args *args)
{
    memset(args, 0, sizeof *args);
    wkv_options_default(&args->decode);
    int st = parse(argc, argv);
    if (st == 0)
        st = check_io_and_compute(args);
    if (st == 0)
        st = check_decoding(args);
    if (st == 0)
        st = check_extras(args);
    if (st != 0)
        cli_args_clear(args);
    return st;
}

void cli_args_clear(cli_args *args)
{
    g_clear_pointer(&args->logit_ids, g_free);
    args->n_logit_ids = 0;
}
