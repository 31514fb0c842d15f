/* words: word timestamps against testvectors/{micro-en,micro-multi}/words.json (the reference's long form
 * with word_timestamps=True): every reported segment's text and times, and its words'
 * text, times (0.011 s) and probabilities (1e-3 absolute and 2 % relative). */
#include "testutil.h"
#include "wav.h"
#include "whisperkv.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    GPtrArray *want; /* the reference's segments that have tokens: the ones reported */
    guint next;
    const char *run;
    int mismatches, words;
} seg_check;

static int near_time(double a, double b)
{
    return fabs(a - b) <= 0.011;
}

static int near_prob(double a, double b)
{
    double d = fabs(a - b);
    return d <= 1e-3 && (fabs(b) < 1e-30 || d <= 0.02 * fabs(b));
}

static int on_segment(const wkv_segment *s, void *user)
{
    seg_check *c = user;
    JsonObject *w = c->next < c->want->len ? g_ptr_array_index(c->want, c->next++) : NULL;
    if (!w) {
        CHECK(0, "%s: extra segment '%s'", c->run, s->text);
        c->mismatches++;
        return 0;
    }
    const char *text = json_object_get_string_member(w, "text");
    double start = json_object_get_double_member(w, "start");
    double end = json_object_get_double_member(w, "end");
    int ok = !strcmp(text, s->text) && near_time(s->start, start) && near_time(s->end, end);
    CHECK(ok, "%s: segment '%s' %.3f-%.3f, want '%s' %.3f-%.3f", c->run, s->text, s->start,
          s->end, text, start, end);
    JsonArray *ww = json_object_get_array_member(w, "words");
    int n = (int)json_array_get_length(ww);
    CHECK(s->n_words == n && (n == 0 || s->words), "%s: %d words, want %d", c->run,
          s->n_words, n);
    for (int i = 0; i < n && i < s->n_words; i++) {
        JsonObject *x = json_array_get_object_element(ww, (guint)i);
        const wkv_word *g = &s->words[i];
        const char *word = json_object_get_string_member(x, "word");
        double ws = json_object_get_double_member(x, "start");
        double we = json_object_get_double_member(x, "end");
        double wp = json_object_get_double_member(x, "probability");
        int wok = !strcmp(word, g->word) && near_time(g->start, ws) && near_time(g->end, we) &&
                  near_prob(g->probability, wp);
        CHECK(wok, "%s: word '%s' %.3f-%.3f p %.6g, want '%s' %.3f-%.3f p %.6g", c->run,
              g->word, g->start, g->end, (double)g->probability, word, ws, we, wp);
        ok &= wok;
    }
    c->mismatches += !ok || s->n_words != n;
    c->words += s->n_words;
    return 0;
}

static void test_set(const char *set)
{
    char rel[256];
    snprintf(rel, sizeof rel, "testvectors/%s/words.json", set);
    JsonParser *parser = json_parser_new();
    GError *err = NULL;
    if (!json_parser_load_from_file(parser, tu_shared_path(rel), &err)) {
        CHECK(0, "%s: %s", rel, err->message);
        g_error_free(err);
        g_object_unref(parser);
        return;
    }
    JsonObject *root = json_node_get_object(json_parser_get_root(parser));
    snprintf(rel, sizeof rel, "testvectors/%s/model.bin", set);
    char *e = NULL;
    wkv_model *model = wkv_model_load(tu_shared_path(rel), &e);
    CHECK(model != NULL, "%s: %s", rel, e ? e : "");
    free(e);
    snprintf(rel, sizeof rel, "speech/%s", json_object_get_string_member(root, "wav"));
    wav_data wav;
    char werr[256];
    if (!model || wav_read(tu_shared_path(rel), &wav, werr, sizeof werr) != 0) {
        CHECK(model == NULL, "%s: %s", rel, werr);
        wkv_model_free(model);
        g_object_unref(parser);
        return;
    }
    wkv_context *ctx = wkv_context_new(model, 2, NULL);
    wkv_mel *mel = wkv_mel_compute(model, wav.samples, wav.n, 2, NULL);
    CHECK(ctx && mel, "%s: context or mel", set);
    JsonArray *runs = json_object_get_array_member(root, "runs");
    for (guint r = 0; ctx && mel && r < json_array_get_length(runs); r++) {
        JsonObject *run = json_array_get_object_element(runs, r);
        char name[128];
        snprintf(name, sizeof name, "%s/%s", set, json_object_get_string_member(run, "name"));
        /* the reference lists cleared segments (no tokens); they are not reported */
        JsonArray *all = json_object_get_array_member(run, "segments");
        GPtrArray *reported = g_ptr_array_new();
        for (guint i = 0; i < json_array_get_length(all); i++) {
            JsonObject *x = json_array_get_object_element(all, i);
            if (json_array_get_length(json_object_get_array_member(x, "tokens")) > 0)
                g_ptr_array_add(reported, x);
        }
        seg_check c = {reported, 0, name, 0, 0};
        wkv_options o;
        wkv_options_default(&o);
        o.language = json_object_get_string_member(run, "language");
        o.no_speech_threshold = 1.0f; /* the vectors: temperature 0 only, no thresholds */
        o.temperature_increment = 0.0f;
        o.word_timestamps = 1;
        o.alignment_heads = json_object_get_string_member(run, "cli_alignment_heads");
        e = NULL;
        const wkv_stats *st = wkv_context_stats(ctx);
        int64_t passes = st->align_passes;
        double ms = st->align_ms, dec = st->decode_ms + st->encode_ms;
        int n = wkv_transcribe_mel(ctx, mel, &o, on_segment, NULL, &c, &e);
        CHECK(n >= 0, "%s: %s", name, e ? e : "");
        free(e);
        int remaining = (int)(reported->len - c.next);
        g_ptr_array_free(reported, TRUE);
        int want_words = (int)json_object_get_int_member(run, "n_words");
        CHECK(remaining == 0 && c.mismatches == 0 && c.words == want_words,
              "%s: %d segments missing, %d mismatches, %d words (want %d)", name, remaining,
              c.mismatches, c.words, want_words);
        passes = st->align_passes - passes;
        printf("%s: %d segments, %d words, %d mismatches; %lld alignment passes, "
               "%.2f ms each (encode+decode %.2f ms a window)\n",
               name, n, c.words, c.mismatches, (long long)passes,
               passes ? (st->align_ms - ms) / (double)passes : 0.0,
               passes ? (st->decode_ms + st->encode_ms - dec) / (double)passes : 0.0);
    }
    wkv_mel_free(mel);
    wkv_context_free(ctx);
    wav_free(&wav);
    wkv_model_free(model);
    g_object_unref(parser);
}

int main(void)
{
    tu_require_shared("the word-timestamp test vectors (testvectors/micro-*/words.json)");
    test_set("micro-en");
    test_set("micro-multi");
    return tu_finish("words");
}
