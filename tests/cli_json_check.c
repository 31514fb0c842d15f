/* Checks the JSON that `whisperkv-transcribe -o json` writes: it parses, and has the
 * model's hyper-parameters, the language, well-formed segments (times that never go
 * back, tokens as integers), the timings and the f32 products' library (the one this
 * process would choose, whisperkv.h); with a `live` object (--live), every
 * segment's committed_at (not before its end), segments that never overlap, and the
 * summary's figures against the segments.  Prints the numbers test_cli.sh needs:
 * "n_mels=.. n_vocab=.. n_audio_ctx=.. n_audio_state=.. segments=.. duration=.. live=..".
 * Exit status 0 when everything holds, 1 otherwise (each problem on stderr). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <json-glib/json-glib.h>

#include "whisperkv.h"

static int problems;

static void problem(const char *fmt, ...) G_GNUC_PRINTF(1, 2);

static void problem(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("cli_json_check: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    problems++;
}

static JsonNode *member(JsonObject *obj, const char *where, const char *name)
{
    JsonNode *n = json_object_get_member(obj, name);
    if (!n)
        problem("%s: no \"%s\"", where, name);
    return n;
}

static gboolean is_int(JsonNode *n)
{
    return n && JSON_NODE_HOLDS_VALUE(n) && json_node_get_value_type(n) == G_TYPE_INT64;
}

static gboolean is_number(JsonNode *n)
{
    return n && JSON_NODE_HOLDS_VALUE(n) &&
           (json_node_get_value_type(n) == G_TYPE_INT64 ||
            json_node_get_value_type(n) == G_TYPE_DOUBLE);
}

static double number(JsonNode *n)
{
    return json_node_get_value_type(n) == G_TYPE_INT64 ? (double)json_node_get_int(n)
                                                       : json_node_get_double(n);
}

static gint64 int_member(JsonObject *obj, const char *where, const char *name)
{
    JsonNode *n = member(obj, where, name);
    if (n && !is_int(n)) {
        problem("%s.%s is not an integer", where, name);
        return -1;
    }
    return n ? json_node_get_int(n) : -1;
}

static double number_member(JsonObject *obj, const char *where, const char *name)
{
    JsonNode *n = member(obj, where, name);
    if (n && !is_number(n)) {
        problem("%s.%s is not a number", where, name);
        return 0;
    }
    return n ? number(n) : 0;
}

static JsonObject *object_member(JsonObject *obj, const char *where, const char *name)
{
    JsonNode *n = member(obj, where, name);
    if (n && !JSON_NODE_HOLDS_OBJECT(n)) {
        problem("%s.%s is not an object", where, name);
        return NULL;
    }
    return n ? json_node_get_object(n) : NULL;
}

/* The commit delays (committed_at - end) of the live segments. */
typedef struct {
    int n;
    double min, max, sum, prev_end, last_commit;
    int n_words; /* --word-timestamps: the same of every word */
    int n_forced; /* segments with "forced": true */
    double wmin, wmax, prev_word_end;
} delays;

/* A live segment's words: each final with its segment (committed_at), after its end,
 * one after the other across segments. */
static void live_words(JsonObject *s, const char *where, double at, delays *d)
{
    JsonNode *wn = json_object_get_member(s, "words");
    if (!wn || !JSON_NODE_HOLDS_ARRAY(wn))
        return;
    JsonArray *wa = json_node_get_array(wn);
    for (guint k = 0; k < json_array_get_length(wa); k++) {
        JsonObject *w = json_array_get_object_element(wa, k);
        char ww[64];
        g_snprintf(ww, sizeof ww, "%s.words[%u]", where, k);
        double ws = number_member(w, ww, "start"), we = number_member(w, ww, "end");
        double wat = number_member(w, ww, "committed_at");
        if (wat != at || we > at + 1e-6 || ws > we)
            problem("%s: %.3f-%.3f committed at %.3f (its segment at %.3f)", ww, ws, we, wat,
                    at);
        if (d->n_words > 0 && ws < d->prev_word_end - 1e-9)
            problem("%s: starts at %.3f before the previous word ends (%.3f)", ww, ws,
                    d->prev_word_end);
        double delay = at - we;
        d->wmin = d->n_words == 0 || delay < d->wmin ? delay : d->wmin;
        d->wmax = d->n_words == 0 || delay > d->wmax ? delay : d->wmax;
        d->prev_word_end = we;
        d->n_words++;
    }
}

/* A {count, median, p90, worst} delay summary against the delays seen. */
static void check_summary(JsonObject *live, const char *name, int n, double min, double max)
{
    JsonObject *o = object_member(live, "live", name);
    if (!o)
        return;
    if (int_member(o, name, "count") != n)
        problem("live.%s.count is not %d", name, n);
    if (n == 0)
        return;
    double median = number_member(o, name, "median"), p90 = number_member(o, name, "p90");
    double worst = number_member(o, name, "worst");
    if (fabs(worst - max) > 1e-6 || median < min - 1e-9 || p90 < median - 1e-9 ||
        p90 > worst + 1e-9)
        problem("live.%s: median %.3f p90 %.3f worst %.3f, the delays %.3f..%.3f", name,
                median, p90, worst, min, max);
}

static void live_segment(JsonObject *s, const char *where, double start, double end,
                         delays *d)
{
    double at = number_member(s, where, "committed_at");
    if (at < end - 1e-6)
        problem("%s: committed_at %.3f before its end %.3f", where, at, end);
    if (d->n > 0 && start < d->prev_end - 1e-9)
        problem("%s: starts at %.3f, inside the previous final (ends %.3f)", where, start,
                d->prev_end);
    live_words(s, where, at, d);
    if (!json_object_has_member(s, "forced") ||
        json_node_get_value_type(json_object_get_member(s, "forced")) != G_TYPE_BOOLEAN)
        problem("%s: no boolean forced", where);
    else
        d->n_forced += json_object_get_boolean_member(s, "forced");
    double delay = at - end;
    d->min = d->n == 0 || delay < d->min ? delay : d->min;
    d->max = d->n == 0 || delay > d->max ? delay : d->max;
    d->last_commit = at > d->last_commit ? at : d->last_commit;
    d->sum += delay;
    d->prev_end = end;
    d->n++;
}

/* The `live` summary against the segments. */
static void check_live(JsonObject *live, const delays *d, double duration)
{
    gint64 runs = int_member(live, "live", "runs");
    gint64 finals = int_member(live, "live", "finals");
    gint64 forced = int_member(live, "live", "forced_finals");
    gint64 forced_runs = int_member(live, "live", "forced_runs");
    int_member(live, "live", "partials");
    int_member(live, "live", "step_ms");
    int_member(live, "live", "latency_ms");
    int_member(live, "live", "run_ms");
    double median = number_member(live, "live", "median_commit_delay");
    double mean = number_member(live, "live", "mean_commit_delay");
    double worst = number_member(live, "live", "worst_commit_delay");
    double finished = number_member(live, "live", "finished_at");
    /* the audio arrives at its real rate: the stream cannot end before it */
    if (finished < duration - 1e-6)
        problem("live.finished_at %.3f before the audio's end %.3f", finished, duration);
    if (runs < 1)
        problem("live.runs %" G_GINT64_FORMAT " is below 1", runs);
    if (finals != d->n)
        problem("live.finals %" G_GINT64_FORMAT " but %d segments", finals, d->n);
    if (forced != d->n_forced)
        problem("live.forced_finals %" G_GINT64_FORMAT " but %d segments forced", forced,
                d->n_forced);
    if (forced < 0 || forced > finals || forced_runs < 0 || forced_runs > runs)
        problem("live: %" G_GINT64_FORMAT " forced finals of %" G_GINT64_FORMAT ", %"
                G_GINT64_FORMAT " forced runs of %" G_GINT64_FORMAT, forced, finals,
                forced_runs, runs);
    if (d->n > 0) {
        if (fabs(worst - d->max) > 1e-6)
            problem("live.worst_commit_delay %.6f, the segments' %.6f", worst, d->max);
        if (fabs(mean - d->sum / d->n) > 1e-6)
            problem("live.mean_commit_delay %.6f, the segments' %.6f", mean, d->sum / d->n);
        if (median < d->min - 1e-9 || median > d->max + 1e-9)
            problem("live.median_commit_delay %.3f outside the delays [%.3f, %.3f]", median,
                    d->min, d->max);
        if (finished < d->last_commit - 1e-9)
            problem("live.finished_at %.3f before the last commit %.3f", finished,
                    d->last_commit);
    }
    check_summary(live, "final_delay", d->n, d->min, d->max);
    if (d->n_words > 0 && !json_object_has_member(live, "word_delay"))
        problem("live: words but no word_delay");
    if (json_object_has_member(live, "word_delay"))
        check_summary(live, "word_delay", d->n_words, d->wmin, d->wmax);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: cli_json_check FILE.json\n");
        return 2;
    }
    JsonParser *parser = json_parser_new();
    GError *err = NULL;
    if (!json_parser_load_from_file(parser, argv[1], &err)) {
        problem("%s does not parse: %s", argv[1], err->message);
        g_error_free(err);
        g_object_unref(parser);
        return 1;
    }
    JsonNode *root_node = json_parser_get_root(parser);
    if (!root_node || !JSON_NODE_HOLDS_OBJECT(root_node)) {
        problem("the document is not an object");
        g_object_unref(parser);
        return 1;
    }
    JsonObject *root = json_node_get_object(root_node);

    static const char *const hparams[] = {
        "n_vocab", "n_audio_ctx", "n_audio_state", "n_audio_head", "n_audio_layer", "n_text_ctx",
        "n_text_state", "n_text_head", "n_text_layer", "n_mels", "ftype",
    };
    gint64 hp[G_N_ELEMENTS(hparams)];
    for (size_t i = 0; i < G_N_ELEMENTS(hparams); i++)
        hp[i] = -1;
    JsonObject *model = object_member(root, "root", "model");
    if (model)
        for (size_t i = 0; i < G_N_ELEMENTS(hparams); i++) {
            hp[i] = int_member(model, "model", hparams[i]);
            if (hp[i] < 0)
                problem("model.%s is negative or missing", hparams[i]);
        }

    /* what ran: the CLI's default (auto) is f32 on f32/f16 files, int8 on quantized
     * ones when built with oneDNN; the tests run f16 files without --compute-type */
    JsonNode *ct = member(root, "root", "compute_type");
    const char *ct_name = ct && JSON_NODE_HOLDS_VALUE(ct) &&
                                  json_node_get_value_type(ct) == G_TYPE_STRING
                              ? json_node_get_string(ct) : NULL;
    gint64 ft = hp[G_N_ELEMENTS(hparams) - 1] % 1000;
    if (!ct_name || ((ft == 0 || ft == 1) && strcmp(ct_name, "f32") != 0))
        problem("compute_type is %s on a file of ftype %" G_GINT64_FORMAT " (want f32)",
                ct_name ? ct_name : "missing", ft);

    /* the caches' type: auto resolved like the compute type (f32 or f16, never auto) */
    JsonNode *kc = member(root, "root", "kv_cache");
    const char *kc_name = kc && JSON_NODE_HOLDS_VALUE(kc) &&
                                  json_node_get_value_type(kc) == G_TYPE_STRING
                              ? json_node_get_string(kc) : NULL;
    if (!kc_name || (strcmp(kc_name, "f32") != 0 && strcmp(kc_name, "f16") != 0))
        problem("kv_cache is %s (want f32 or f16)", kc_name ? kc_name : "missing");

    /* which library ran the f32 products: what this process, on the same machine and
     * environment, would choose too */
    JsonObject *gemm = object_member(root, "root", "f32_products");
    const char *want_gemm[2] = {wkv_f32_gemm_library(), wkv_f32_gemm_kernels()};
    const char *gemm_keys[2] = {"library", "kernels"};
    for (int i = 0; gemm && i < 2; i++) {
        JsonNode *v = member(gemm, "f32_products", gemm_keys[i]);
        const char *got = v && JSON_NODE_HOLDS_VALUE(v) &&
                                  json_node_get_value_type(v) == G_TYPE_STRING
                              ? json_node_get_string(v) : NULL;
        if (!got || strcmp(got, want_gemm[i]) != 0)
            problem("f32_products.%s is %s, want %s", gemm_keys[i], got ? got : "missing",
                    want_gemm[i]);
    }

    JsonNode *lang = member(root, "root", "language");
    if (lang && (!JSON_NODE_HOLDS_VALUE(lang) || json_node_get_value_type(lang) != G_TYPE_STRING ||
                 !*json_node_get_string(lang)))
        problem("language is not a non-empty string");

    JsonObject *live = json_object_has_member(root, "live")
                           ? object_member(root, "root", "live") : NULL;
    delays d = {0};
    int n_segments = 0;
    guint seg_tokens = 0; /* every segment's tokens (--sample-len bounds them per window) */
    gint64 windows = 0;
    JsonNode *segs = member(root, "root", "segments");
    if (segs && !JSON_NODE_HOLDS_ARRAY(segs)) {
        problem("segments is not an array");
    } else if (segs) {
        JsonArray *arr = json_node_get_array(segs);
        n_segments = (int)json_array_get_length(arr);
        double prev_start = 0;
        gint64 prev_seek = 0;
        for (int i = 0; i < n_segments; i++) {
            char where[32];
            g_snprintf(where, sizeof where, "segments[%d]", i);
            JsonNode *sn = json_array_get_element(arr, (guint)i);
            if (!JSON_NODE_HOLDS_OBJECT(sn)) {
                problem("%s is not an object", where);
                continue;
            }
            JsonObject *s = json_node_get_object(sn);
            gint64 seek = int_member(s, where, "seek");
            double start = number_member(s, where, "start");
            double end = number_member(s, where, "end");
            if (seek < prev_seek)
                problem("%s: seek %" G_GINT64_FORMAT " goes back", where, seek);
            if (start < 0 || end < start)
                problem("%s: bad times %.3f -> %.3f", where, start, end);
            if (start < prev_start)
                problem("%s: start %.3f before the previous start %.3f", where, start,
                        prev_start);
            if (start + 1e-9 < seek * 0.01)
                problem("%s: start %.3f before its window (seek %" G_GINT64_FORMAT ")", where,
                        start, seek);
            prev_start = start;
            prev_seek = seek;
            if (live)
                live_segment(s, where, start, end, &d);
            else if (json_object_has_member(s, "committed_at"))
                problem("%s: committed_at without a live summary", where);
            JsonNode *text = member(s, where, "text");
            if (text && (!JSON_NODE_HOLDS_VALUE(text) ||
                         json_node_get_value_type(text) != G_TYPE_STRING))
                problem("%s.text is not a string", where);
            JsonNode *toks = member(s, where, "tokens");
            if (toks && !JSON_NODE_HOLDS_ARRAY(toks)) {
                problem("%s.tokens is not an array", where);
            } else if (toks) {
                JsonArray *ta = json_node_get_array(toks);
                guint nt = json_array_get_length(ta);
                seg_tokens += nt;
                if (nt == 0)
                    problem("%s.tokens is empty", where);
                for (guint k = 0; k < nt; k++) {
                    JsonNode *t = json_array_get_element(ta, k);
                    if (!is_int(t) || json_node_get_int(t) < 0 ||
                        (hp[0] > 0 && json_node_get_int(t) >= hp[0])) {
                        problem("%s.tokens[%u] is not a token id", where, k);
                        break;
                    }
                }
            }
            static const char *const scores[] = {"avg_logprob", "no_speech_prob",
                                                 "compression_ratio", "temperature"};
            for (size_t k = 0; k < G_N_ELEMENTS(scores); k++)
                number_member(s, where, scores[k]);
            double nsp = number_member(s, where, "no_speech_prob");
            if (nsp < 0 || nsp > 1)
                problem("%s.no_speech_prob %g is not a probability", where, nsp);
        }
    }

    JsonObject *timings = object_member(root, "root", "timings");
    if (timings) {
        static const char *const ms[] = {"load", "mel", "encode", "decode"};
        for (size_t i = 0; i < G_N_ELEMENTS(ms); i++)
            if (number_member(timings, "timings", ms[i]) < 0)
                problem("timings.%s is negative", ms[i]);
        windows = int_member(timings, "timings", "windows");
        if (windows < 1)
            problem("timings.windows is below 1");
        if (int_member(timings, "timings", "tokens") < 1)
            problem("timings.tokens is below 1");
    }
    double duration = 0;
    if (json_object_has_member(root, "duration"))
        duration = number_member(root, "root", "duration");
    if (live)
        check_live(live, &d, duration);

    printf("n_mels=%" G_GINT64_FORMAT " n_vocab=%" G_GINT64_FORMAT " n_audio_ctx=%" G_GINT64_FORMAT
           " n_audio_state=%" G_GINT64_FORMAT " segments=%d duration=%.3f live=%d tokens=%u windows=%" G_GINT64_FORMAT "\n",
           hp[9], hp[0], hp[1], hp[2], n_segments, duration, live != NULL, seg_tokens, windows);
    g_object_unref(parser);
    return problems ? 1 : 0;
}
