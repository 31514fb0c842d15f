/* The output formats: each one's writers (txt / srt / vtt written segment by segment;
 * json built with json-glib at the end), and the table of them at the end of the file,
 * the one place that says which formats there are. */
#include "output.h"

#include "cue_text.h"

#include <math.h>
#include <string.h>

#include <json-glib/json-glib.h>

struct cli_output {
    const cli_format *fmt;
    FILE *out;
    int cue;              /* srt cues written so far */
    JsonArray *segments;  /* json only */
    char *first_language; /* the first segment's language (for -l auto) */
    JsonArray *language_probs; /* [code, probability] pairs, when detected */
    JsonObject *live;     /* the live summary, when set */
    cue_options cue_opts; /* srt/vtt with word timestamps: how cues are cut */
    cue_writer *cues;     /* srt/vtt with word timestamps, from cli_output_begin */
    char *alignment_heads; /* json with word timestamps */
    char *compute_type;   /* json: the context's compute type (auto resolved) */
    char *kv_cache;       /* json: the type of its attention caches (auto resolved) */
    gboolean words;
    GArray *final_delays; /* live: committed_at - end of each final (double) */
    GArray *word_delays;  /* live with words: the same of each word */
};

/* An output format: one line of the table at the end of this file. */
struct cli_format {
    const char *name; /* -o NAME (any case) */
    const char *help; /* what it writes, for --help (NULL: the name says it) */
    gboolean document; /* cli_format_is_document */
    /* before the first segment (NULL: nothing) */
    void (*begin)(cli_output *o);
    /* a segment; committed_at NAN when not live, forced: the live final's flag */
    void (*segment)(cli_output *o, const wkv_segment *seg, double committed_at, int forced);
    /* --vad-only's speech segment (NULL: as a segment) */
    void (*speech)(cli_output *o, const wkv_segment *seg);
    /* what it keeps for the end; FALSE if writing failed (NULL: a flush) */
    gboolean (*finish)(cli_output *o, const wkv_model *model, const char *language,
                       double duration, const cli_out_timings *t);
};

void cli_output_set_words(cli_output *o, const cue_options *cues,
                          const char *alignment_heads)
{
    o->words = TRUE;
    o->cue_opts = *cues;
    g_free(o->alignment_heads);
    o->alignment_heads = g_strdup(alignment_heads);
}

void cli_output_set_types(cli_output *o, const char *compute_type, const char *kv_cache)
{
    g_free(o->compute_type);
    g_free(o->kv_cache);
    o->compute_type = g_strdup(compute_type);
    o->kv_cache = g_strdup(kv_cache);
}

void cli_format_timestamp(double t, char sep, char *buf, size_t size)
{
    cli_timestamp_ms((gint64)llround((t > 0 ? t : 0) * 1000.0), TRUE, sep, buf, size);
}

/* One line of text for txt/srt/vtt: valid UTF-8, control characters (newlines
 * included, so a cue never contains a blank line) as spaces, runs of spaces kept,
 * leading and trailing white space removed.  For vtt, '&', '<', '>' are escaped and
 * "-->" cannot appear. */
static char *line_text(const char *text, gboolean vtt)
{
    char *valid = g_utf8_make_valid(text ? text : "", -1);
    GString *s = g_string_sized_new(strlen(valid) + 8);
    for (const char *p = valid; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c < 0x20 || c == 0x7f)
            g_string_append_c(s, ' ');
        else if (!(vtt && cue_vtt_escape(s, c)))
            g_string_append_c(s, (char)c);
    }
    g_free(valid);
    return g_strstrip(g_string_free(s, FALSE));
}

static gboolean flushed(cli_output *o)
{
    return fflush(o->out) == 0 && !ferror(o->out);
}

/* ------------------------------------------------------------------ txt */

static void txt_segment(cli_output *o, const wkv_segment *seg, double committed_at,
                        int forced)
{
    (void)committed_at, (void)forced;
    char *text = line_text(seg->text, FALSE);
    if (*text) {
        fprintf(o->out, "%s\n", text);
        fflush(o->out);
    }
    g_free(text);
}

/* --vad-only: the times alone, "HH:MM:SS.mmm --> HH:MM:SS.mmm" */
static void txt_speech(cli_output *o, const wkv_segment *seg)
{
    char a[32], b[32];
    cli_format_timestamp(seg->start, '.', a, sizeof a);
    cli_format_timestamp(seg->end, '.', b, sizeof b);
    fprintf(o->out, "%s --> %s\n", a, b);
}

/* ------------------------------------------------------------------ srt, vtt */

/* With word timestamps the cues are cut from the words (subtitles.c), else each
 * segment is a cue. */
static void cues_begin(cli_output *o, gboolean vtt)
{
    if (o->words && !o->cues)
        o->cues = cue_writer_new(&o->cue_opts, vtt, o->out);
}

static void srt_begin(cli_output *o)
{
    cues_begin(o, FALSE);
}

static void vtt_begin(cli_output *o)
{
    fputs("WEBVTT\n\n", o->out);
    fflush(o->out);
    cues_begin(o, TRUE);
}

/* A segment as one cue, its end never before its start, its times with hours in vtt
 * too (unlike the cues cut from words, which follow the reference: subtitles.c). */
static void cue_segment(cli_output *o, const wkv_segment *seg, gboolean vtt)
{
    if (o->cues) {
        cue_writer_segment(o->cues, seg);
        return;
    }
    char *text = line_text(seg->text, vtt);
    if (*text) {
        char a[32], b[32];
        double end = seg->end < seg->start ? seg->start : seg->end;
        cli_format_timestamp(seg->start, vtt ? '.' : ',', a, sizeof a);
        cli_format_timestamp(end, vtt ? '.' : ',', b, sizeof b);
        if (vtt)
            fprintf(o->out, "%s --> %s\n%s\n\n", a, b, text);
        else
            fprintf(o->out, "%d\n%s --> %s\n%s\n\n", ++o->cue, a, b, text);
        fflush(o->out);
    }
    g_free(text);
}

static void srt_segment(cli_output *o, const wkv_segment *seg, double committed_at,
                        int forced)
{
    (void)committed_at, (void)forced;
    cue_segment(o, seg, FALSE);
}

static void vtt_segment(cli_output *o, const wkv_segment *seg, double committed_at,
                        int forced)
{
    (void)committed_at, (void)forced;
    cue_segment(o, seg, TRUE);
}

/* the last cue cut from words */
static gboolean cues_finish(cli_output *o, const wkv_model *model, const char *language,
                            double duration, const cli_out_timings *t)
{
    (void)model, (void)language, (void)duration, (void)t;
    if (o->cues)
        cue_writer_finish(o->cues);
    return flushed(o);
}

/* ------------------------------------------------------------------ json */

/* The segments written so far (made at the first). */
static JsonArray *json_segments(cli_output *o)
{
    if (!o->segments)
        o->segments = json_array_new();
    return o->segments;
}

static void json_segment(cli_output *o, const wkv_segment *seg, double committed_at,
                         int forced)
{
    JsonObject *obj = json_object_new();
    json_object_set_int_member(obj, "seek", seg->seek);
    json_object_set_double_member(obj, "start", seg->start);
    json_object_set_double_member(obj, "end", seg->end);
    char *text = g_utf8_make_valid(seg->text ? seg->text : "", -1);
    json_object_set_string_member(obj, "text", text);
    g_free(text);
    JsonArray *tokens = json_array_sized_new(seg->n_tokens > 0 ? (guint)seg->n_tokens : 0);
    for (int i = 0; i < seg->n_tokens; i++)
        json_array_add_int_element(tokens, seg->tokens[i]);
    json_object_set_array_member(obj, "tokens", tokens);
    json_object_set_double_member(obj, "avg_logprob", seg->avg_logprob);
    json_object_set_double_member(obj, "no_speech_prob", seg->no_speech_prob);
    json_object_set_double_member(obj, "compression_ratio", seg->compression_ratio);
    json_object_set_double_member(obj, "temperature", seg->temperature);
    if (seg->language)
        json_object_set_string_member(obj, "language", seg->language);
    if (!isnan(committed_at)) {
        json_object_set_double_member(obj, "committed_at", committed_at);
        /* committed without two runs agreeing (the latency bound, the 30-s cap, the end) */
        json_object_set_boolean_member(obj, "forced", forced != 0);
    }
    if (o->words) {
        JsonArray *words = json_array_new();
        for (int i = 0; i < seg->n_words; i++) {
            JsonObject *w = json_object_new();
            char *word = g_utf8_make_valid(seg->words[i].word, -1);
            json_object_set_string_member(w, "word", word);
            g_free(word);
            json_object_set_double_member(w, "start", seg->words[i].start);
            json_object_set_double_member(w, "end", seg->words[i].end);
            json_object_set_double_member(w, "probability", seg->words[i].probability);
            if (!isnan(committed_at)) /* live: a word is final with its segment */
                json_object_set_double_member(w, "committed_at", committed_at);
            json_array_add_object_element(words, w);
        }
        json_object_set_array_member(obj, "words", words);
    }
    json_array_add_object_element(json_segments(o), obj);
}

static void write_segment(cli_output *o, const wkv_segment *seg, double committed_at,
                          int forced)
{
    if (!o->first_language && seg->language)
        o->first_language = g_strdup(seg->language);
    o->fmt->segment(o, seg, committed_at, forced);
}

void cli_output_segment(cli_output *o, const wkv_segment *seg)
{
    write_segment(o, seg, NAN, 0);
}

static void add_delay(GArray **a, double d)
{
    if (!*a)
        *a = g_array_new(FALSE, FALSE, sizeof(double));
    g_array_append_val(*a, d);
}

void cli_output_live_segment(cli_output *o, const wkv_segment *seg, double committed_at,
                             int forced)
{
    add_delay(&o->final_delays, committed_at - seg->end);
    for (int i = 0; o->words && i < seg->n_words; i++)
        add_delay(&o->word_delays, committed_at - seg->words[i].end);
    write_segment(o, seg, committed_at, forced);
}

static gint cmp_double(gconstpointer a, gconstpointer b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* {count, median, p90, worst} of the delays (seconds): the median the middle value
 * (the mean of the two middle ones for an even count), p90 by nearest rank. */
static JsonObject *delay_summary(GArray *a)
{
    JsonObject *j = json_object_new();
    guint n = a ? a->len : 0;
    json_object_set_int_member(j, "count", n);
    if (n == 0)
        return j;
    g_array_sort(a, cmp_double);
    const double *d = (const double *)a->data;
    json_object_set_double_member(j, "median", n % 2 ? d[n / 2] : (d[n / 2 - 1] + d[n / 2]) / 2);
    json_object_set_double_member(j, "p90", d[(guint)ceil(0.9 * n) - 1]);
    json_object_set_double_member(j, "worst", d[n - 1]);
    return j;
}

void cli_output_set_live(cli_output *o, const cli_out_live *l)
{
    if (o->live)
        json_object_unref(o->live);
    JsonObject *j = o->live = json_object_new();
    json_object_set_string_member(j, "clock", l->realtime ? "wall" : "virtual");
    const struct {
        const char *name;
        gint64 value;
    } counts[] = {
        {"step_ms", l->step_ms}, {"latency_ms", l->latency_ms}, {"run_ms", l->run_ms},
        {"runs", l->runs},
        {"silent_runs", l->silent_runs}, {"forced_runs", l->forced_runs},
        {"finals", l->finals}, {"forced_finals", l->forced_finals}, {"partials", l->partials},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(counts); i++)
        json_object_set_int_member(j, counts[i].name, counts[i].value);
    const struct {
        const char *name;
        double value;
    } figures[] = {
        {"median_commit_delay", l->delay_median}, {"mean_commit_delay", l->delay_mean},
        {"worst_commit_delay", l->delay_worst}, {"busy_ms", l->busy_ms},
        {"max_run_ms", l->max_run_ms}, {"finished_at", l->finished_at},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(figures); i++)
        json_object_set_double_member(j, figures[i].name, figures[i].value);
    /* per final and (word timestamps) per word: committed_at - end */
    json_object_set_object_member(j, "final_delay", delay_summary(o->final_delays));
    if (o->words)
        json_object_set_object_member(j, "word_delay", delay_summary(o->word_delays));
}

static void set_hparams(JsonObject *obj, const wkv_hparams *hp)
{
    const struct {
        const char *name;
        int32_t value;
    } fields[] = {
        {"n_vocab", hp->n_vocab},
        {"n_audio_ctx", hp->n_audio_ctx},
        {"n_audio_state", hp->n_audio_state},
        {"n_audio_head", hp->n_audio_head},
        {"n_audio_layer", hp->n_audio_layer},
        {"n_text_ctx", hp->n_text_ctx},
        {"n_text_state", hp->n_text_state},
        {"n_text_head", hp->n_text_head},
        {"n_text_layer", hp->n_text_layer},
        {"n_mels", hp->n_mels},
        {"ftype", hp->ftype},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(fields); i++)
        json_object_set_int_member(obj, fields[i].name, fields[i].value);
}

void cli_output_set_language_probs(cli_output *o, const wkv_model *model, const float *probs)
{
    const wkv_specials *sp = wkv_model_specials(model);
    int taken[128] = {0};
    if (o->language_probs)
        json_array_unref(o->language_probs);
    o->language_probs = json_array_new();
    /* the ten most probable, best first */
    for (int k = 0; k < 10 && k < sp->n_langs && sp->n_langs <= 128; k++) {
        int best = -1;
        for (int i = 0; i < sp->n_langs; i++)
            if (!taken[i] && (best < 0 || probs[i] > probs[best]))
                best = i;
        taken[best] = 1;
        JsonArray *pair = json_array_new();
        json_array_add_string_element(pair, wkv_lang_code(model, sp->lang_begin + best));
        json_array_add_double_element(pair, probs[best]);
        json_array_add_array_element(o->language_probs, pair);
    }
}

/* The whole document. */
static gboolean json_finish(cli_output *o, const wkv_model *model, const char *language,
                            double duration, const cli_out_timings *t)
{
    JsonObject *root = json_object_new();
    JsonObject *m = json_object_new();
    set_hparams(m, wkv_model_hparams(model));
    json_object_set_object_member(root, "model", m);
    if (o->compute_type)
        json_object_set_string_member(root, "compute_type", o->compute_type);
    if (o->kv_cache)
        json_object_set_string_member(root, "kv_cache", o->kv_cache);
    /* which library and kernels ran the f32 products (chosen once per process) */
    JsonObject *g = json_object_new();
    json_object_set_string_member(g, "library", wkv_f32_gemm_library());
    json_object_set_string_member(g, "kernels", wkv_f32_gemm_kernels());
    json_object_set_object_member(root, "f32_products", g);
    /* "auto": what was detected (the first window's), if anything was */
    if (g_strcmp0(language, "auto") == 0 && o->first_language)
        language = o->first_language;
    json_object_set_string_member(root, "language", language);
    if (o->language_probs)
        json_object_set_array_member(root, "language_probs", json_array_ref(o->language_probs));
    json_object_set_double_member(root, "duration", duration);
    if (o->alignment_heads)
        json_object_set_string_member(root, "alignment_heads", o->alignment_heads);
    json_object_set_array_member(root, "segments", json_array_ref(json_segments(o)));
    JsonObject *tm = json_object_new();
    json_object_set_double_member(tm, "load", t->load_ms);
    json_object_set_double_member(tm, "mel", t->mel_ms);
    json_object_set_double_member(tm, "encode", t->encode_ms);
    json_object_set_double_member(tm, "decode", t->decode_ms);
    json_object_set_int_member(tm, "windows", t->windows);
    json_object_set_int_member(tm, "tokens", t->tokens);
    if (t->draft_tokens > 0) {
        json_object_set_int_member(tm, "draft_tokens", t->draft_tokens);
        json_object_set_int_member(tm, "draft_accepted", t->draft_accepted);
    }
    if (t->align_windows > 0) {
        json_object_set_double_member(tm, "align", t->align_ms);
        json_object_set_int_member(tm, "align_windows", t->align_windows);
    }
    json_object_set_object_member(root, "timings", tm);
    if (o->live)
        json_object_set_object_member(root, "live", json_object_ref(o->live));

    JsonNode *node = json_node_alloc();
    json_node_init_object(node, root);
    json_object_unref(root);
    JsonGenerator *gen = json_generator_new();
    json_generator_set_pretty(gen, TRUE);
    json_generator_set_indent(gen, 2);
    json_generator_set_root(gen, node);
    gsize len = 0;
    char *data = json_generator_to_data(gen, &len);
    gboolean ok = fwrite(data, 1, len, o->out) == len && fputc('\n', o->out) != EOF &&
                  fflush(o->out) == 0 && !ferror(o->out);
    g_free(data);
    g_object_unref(gen);
    json_node_unref(node);
    return ok;
}

/* ------------------------------------------------------------------ the formats */

/* -o's names in this order in --help and its messages; the first is the default. */
static const cli_format formats[] = {
    {"txt", "one segment per line", FALSE, NULL, txt_segment, txt_speech, NULL},
    {"srt", NULL, FALSE, srt_begin, srt_segment, NULL, cues_finish},
    {"vtt", NULL, FALSE, vtt_begin, vtt_segment, NULL, cues_finish},
    {"json", "segments with tokens\nand scores, the model's hyper-parameters and timings", TRUE,
     NULL, json_segment, NULL, json_finish},
};

const cli_format *cli_format_find(const char *name)
{
    for (size_t i = 0; i < G_N_ELEMENTS(formats); i++)
        if (!name || g_ascii_strcasecmp(name, formats[i].name) == 0)
            return &formats[i];
    return NULL;
}

gboolean cli_format_is_document(const cli_format *f)
{
    return f->document;
}

char *cli_format_names(const char *sep, const char *last, gboolean documents)
{
    GPtrArray *names = g_ptr_array_new();
    for (size_t i = 0; i < G_N_ELEMENTS(formats); i++)
        if (documents || !formats[i].document)
            g_ptr_array_add(names, (gpointer)formats[i].name);
    GString *s = g_string_new(NULL);
    for (guint i = 0; i < names->len; i++)
        g_string_append_printf(s, "%s%s", i == 0 ? "" : i + 1 < names->len ? sep : last,
                               (const char *)names->pdata[i]);
    g_ptr_array_unref(names);
    return g_string_free(s, FALSE);
}

char *cli_format_help(void)
{
    GString *s = g_string_new(NULL);
    for (size_t i = 0; i < G_N_ELEMENTS(formats); i++) {
        g_string_append_printf(s, "%s%s", i ? ", " : "", formats[i].name);
        if (formats[i].help)
            g_string_append_printf(s, " (%s)", formats[i].help);
    }
    return g_string_free(s, FALSE);
}

cli_output *cli_output_new(const cli_format *fmt, FILE *out)
{
    cli_output *o = g_new0(cli_output, 1);
    o->fmt = fmt;
    o->out = out;
    return o;
}

void cli_output_free(cli_output *o)
{
    if (!o)
        return;
    if (o->segments)
        json_array_unref(o->segments);
    g_free(o->first_language);
    g_free(o->alignment_heads);
    g_free(o->compute_type);
    g_free(o->kv_cache);
    cue_writer_free(o->cues);
    if (o->language_probs)
        json_array_unref(o->language_probs);
    if (o->live)
        json_object_unref(o->live);
    if (o->final_delays)
        g_array_unref(o->final_delays);
    if (o->word_delays)
        g_array_unref(o->word_delays);
    g_free(o);
}

void cli_output_begin(cli_output *o)
{
    if (o->fmt->begin)
        o->fmt->begin(o);
}

void cli_output_speech(cli_output *o, const wkv_segment *seg)
{
    if (o->fmt->speech)
        o->fmt->speech(o, seg);
    else
        cli_output_segment(o, seg);
}

gboolean cli_output_finish(cli_output *o, const wkv_model *model, const char *language,
                           double duration, const cli_out_timings *t)
{
    return o->fmt->finish ? o->fmt->finish(o, model, language, duration, t) : flushed(o);
}
