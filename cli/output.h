/* The CLI's output formats (plain text, SubRip, WebVTT, JSON) behind one writer. */
#ifndef CLI_OUTPUT_H
#define CLI_OUTPUT_H

#include <stdio.h>

#include <glib.h>

#include "subtitles.h"
#include "whisperkv.h"

/* An output format (-o NAME): its name and its writers, one line of output.c's table.
 * The rest of the CLI asks the questions below, never which format it is. */
typedef struct cli_format cli_format;

/* The format named `name` (any case; NULL: txt, the default); NULL when none is. */
const cli_format *cli_format_find(const char *name);
/* A document (json): written whole at the end from the run and the model, so
 * --from-json cannot write it and --vad-only writes a document of its own. */
gboolean cli_format_is_document(const cli_format *f);
/* The formats' names in the table's order, joined by sep and the last two by last
 * ("txt, srt, vtt or json"); without documents unless `documents`.  g_free. */
char *cli_format_names(const char *sep, const char *last, gboolean documents);
/* --help's list: the names, each with what it writes in parentheses.  g_free. */
char *cli_format_help(void);

/* What the JSON `timings` object reports. */
typedef struct {
    double load_ms, mel_ms, encode_ms, decode_ms;
    gint64 windows, tokens;
    double align_ms;      /* word timestamps: the alignment passes (align_windows > 0) */
    gint64 align_windows;
    gint64 draft_tokens, draft_accepted; /* live: draft tokens checked / chosen again */
} cli_out_timings;

typedef struct cli_output cli_output;

/* Writes to `out` (not closed by the output).  txt, srt and vtt are written segment by
 * segment as they come (and flushed); json is written by cli_output_finish. */
cli_output *cli_output_new(const cli_format *fmt, FILE *out);
void cli_output_free(cli_output *o);
/* The header (the WEBVTT line), if the format has one. */
void cli_output_begin(cli_output *o);
void cli_output_segment(cli_output *o, const wkv_segment *seg);
/* --vad-only: a speech segment (text "[speech]", no language): txt writes a
 * "start --> end" line, the other formats it as a segment. */
void cli_output_speech(cli_output *o, const wkv_segment *seg);
/* Live mode (--live): a final segment, the stream time (seconds) when its text
 * became final and whether it was forced (not agreed); JSON segments then carry
 * `committed_at` and `forced`. */
void cli_output_live_segment(cli_output *o, const wkv_segment *seg, double committed_at,
                             int forced);

/* What the JSON `live` object reports: the stream's settings and figures. */
typedef struct {
    int step_ms, latency_ms;
    int run_ms; /* --run-ms, 0: each run's measured time moved the virtual clock */
    gboolean realtime;         /* paced by the wall clock, not the virtual one */
    gint64 runs, silent_runs, forced_runs, finals, forced_finals, partials;
    double delay_median, delay_mean, delay_worst; /* committed_at - end, seconds */
    double busy_ms, max_run_ms; /* compute time of the runs: total, longest */
    double finished_at;         /* stream time when the last text was final */
} cli_out_live;

/* JSON: adds the `live` object, with the delays (committed_at - end) of the finals
 * written by cli_output_live_segment, `final_delay`, and of their words, `word_delay`
 * (with word timestamps): {count, median, p90, worst}. */
void cli_output_set_live(cli_output *o, const cli_out_live *live);
/* JSON: `language_probs`, the ten most probable languages of detection (probs has
 * wkv_model_specials()->n_langs entries). */
void cli_output_set_language_probs(cli_output *o, const wkv_model *model, const float *probs);
/* Writes what the format keeps for the end (the whole JSON document).  `duration` is
 * the audio's length in seconds; `language` "auto" is reported as the language of the
 * first segment.  Returns FALSE if writing failed. */
gboolean cli_output_finish(cli_output *o, const wkv_model *model, const char *language,
                           double duration, const cli_out_timings *timings);

/* Word timestamps are on: srt/vtt cues are cut from the words with these options
 * (subtitles.c), json segments list their words and the JSON names the alignment
 * heads.  Call before cli_output_begin. */
void cli_output_set_words(cli_output *o, const cue_options *cues,
                          const char *alignment_heads);

/* JSON: `compute_type`, what the context computes on, and `kv_cache`, the type of its
 * attention caches (`auto` resolved in both); the document also says what ran the f32
 * products (`f32_products`: `library`, `kernels`). */
void cli_output_set_types(cli_output *o, const char *compute_type, const char *kv_cache);

/* "HH:MM:SS<sep>mmm" for t seconds (negative or NaN clamps to 0), rounded half away
 * from zero (the cues cut from words round half to even, as the reference: subtitles.c);
 * buf needs 32 bytes. */
void cli_format_timestamp(double t, char sep, char *buf, size_t size);

#endif
