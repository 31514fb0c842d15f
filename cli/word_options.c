/* --word-timestamps and its options; the reference CLI refuses the cue options
 * without word timestamps (argparse, exit 2), and so do we for every option here that
 * only acts on words. */
#include "word_options.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static gboolean opt_words, opt_highlight;
static char *opt_heads, *opt_prepend, *opt_append, *opt_clip;
static double opt_hallucination = NAN;
static int opt_width = G_MININT, opt_count = G_MININT, opt_per_line = G_MININT; /* not given */

static GOptionEntry word_entries[] = {
    {"word-timestamps", 0, 0, G_OPTION_ARG_NONE, &opt_words,
     "Word-level timestamps (the reference's word_timestamps): json lists each segment's "
     "words; srt/vtt cues are cut from words", NULL},
    {"alignment-heads", 0, 0, G_OPTION_ARG_STRING, &opt_heads,
     "Cross-attention heads timing the words: auto (the checkpoint's table when the "
     "model's shape identifies one, else default; the default), default (every head of "
     "the last half of the decoder layers), a name (tiny.en ... large-v3-turbo) or "
     "LAYER.HEAD,...", "auto|default|NAME|L.H,..."},
    {"prepend-punctuations", 0, 0, G_OPTION_ARG_STRING, &opt_prepend,
     "Marks merged into the following word (default \"'\u201c\u00bf([{-)", "S"},
    {"append-punctuations", 0, 0, G_OPTION_ARG_STRING, &opt_append,
     "Marks merged into the preceding word (default \"'.\u3002,\uff0c!\uff01?\uff1f:\uff1a"
     "\u201d)]}\u3001)", "S"},
    {"hallucination-silence-threshold", 0, 0, G_OPTION_ARG_DOUBLE, &opt_hallucination,
     "Skip silences longer than X seconds around likely hallucinations (default off)", "X"},
    {"clip-timestamps", 0, 0, G_OPTION_ARG_STRING, &opt_clip,
     "Decode only these stretches: start,end,start,end,... in seconds (an open last "
     "stretch runs to the end; default 0)", "LIST"},
    {"max-line-width", 0, 0, G_OPTION_ARG_INT, &opt_width,
     "srt/vtt: at most N characters a line (with --word-timestamps)", "N"},
    {"max-line-count", 0, 0, G_OPTION_ARG_INT, &opt_count,
     "srt/vtt: at most N lines a cue (with --word-timestamps and --max-line-width)", "N"},
    {"max-words-per-line", 0, 0, G_OPTION_ARG_INT, &opt_per_line,
     "srt/vtt: at most N words a line (with --word-timestamps; no effect with both "
     "--max-line-width and --max-line-count)", "N"},
    {"highlight-words", 0, 0, G_OPTION_ARG_NONE, &opt_highlight,
     "srt/vtt: underline each word as it is spoken (with --word-timestamps)", NULL},
    {NULL, 0, 0, 0, NULL, NULL, NULL},
};

GOptionGroup *cli_word_option_group(void)
{
    GOptionGroup *g = g_option_group_new("words", "Word timestamps and subtitle cues:",
                                         "Show the word-timestamp options", NULL, NULL);
    g_option_group_add_entries(g, word_entries);
    return g;
}

/* "x,y,..." of non-negative seconds (empty items allowed, as the reference's split) */
static gboolean clip_list_ok(const char *s)
{
    while (*s) {
        if (*s == ',') {
            s++;
            continue;
        }
        char *e;
        double v = strtod(s, &e);
        if (e == s || (*e && *e != ',') || !(v >= 0) || v > 1e9)
            return FALSE;
        s = e;
    }
    return TRUE;
}

char *cli_word_options_check(void)
{
    const struct {
        gboolean given;
        const char *name;
    } need[] = {
        {opt_heads != NULL, "--alignment-heads"},
        {opt_prepend != NULL, "--prepend-punctuations"},
        {opt_append != NULL, "--append-punctuations"},
        {!isnan(opt_hallucination), "--hallucination-silence-threshold"},
        {opt_width != G_MININT, "--max-line-width"},
        {opt_count != G_MININT, "--max-line-count"},
        {opt_per_line != G_MININT, "--max-words-per-line"},
        {opt_highlight, "--highlight-words"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(need); i++)
        if (need[i].given && !opt_words)
            return g_strdup_printf("%s requires --word-timestamps", need[i].name);
    if ((opt_width != G_MININT && opt_width < 0) || (opt_count != G_MININT && opt_count < 0) ||
        (opt_per_line != G_MININT && opt_per_line < 0))
        return g_strdup("--max-line-width, --max-line-count and --max-words-per-line take "
                        "N >= 0 (0: no limit)");
    if (!isnan(opt_hallucination) && !isfinite(opt_hallucination))
        return g_strdup("--hallucination-silence-threshold must be a number");
    if (opt_clip && !clip_list_ok(opt_clip))
        return g_strdup_printf("--clip-timestamps: bad list '%s' (seconds start,end,...)",
                               opt_clip);
    if (opt_count > 0 && opt_width <= 0)
        fprintf(stderr, "whisperkv-transcribe: warning: --max-line-count has no effect "
                        "without --max-line-width\n");
    return NULL;
}

gboolean cli_word_options_apply(const wkv_model *model, wkv_options *opts, cli_output *out,
                                char **error)
{
    opts->clip_timestamps = opt_clip;
    if (!opt_words)
        return TRUE;
    char *err = NULL;
    char *name = wkv_alignment_heads_name(model, opt_heads, &err);
    if (!name) {
        *error = g_strdup(err ? err : "bad --alignment-heads");
        free(err);
        return FALSE;
    }
    if (!opt_heads || !strcmp(opt_heads, "auto"))
        fprintf(stderr, "whisperkv-transcribe: alignment heads: %s (auto)\n", name);
    opts->word_timestamps = 1;
    opts->alignment_heads = opt_heads;
    opts->prepend_punctuations = opt_prepend;
    opts->append_punctuations = opt_append;
    if (!isnan(opt_hallucination))
        opts->hallucination_silence_threshold = (float)opt_hallucination;
    cue_options cues;
    cli_word_options_cues(&cues);
    cli_output_set_words(out, &cues, name);
    free(name);
    return TRUE;
}

gboolean cli_word_options_cues(cue_options *cues)
{
    *cues = (cue_options){{MAX(opt_width, 0), MAX(opt_count, 0), MAX(opt_per_line, 0)},
                          opt_highlight};
    return opt_words;
}
