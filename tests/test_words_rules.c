/* words-rules: the word-timestamp pieces one by one (white-box: core/words/words.h,
 * align.h, word_window.h).
 * - the DTW input matrix of micro-multi's first window against words_matrix.f32, and
 *   that window's raw words (text, times, probabilities) against words.json;
 * - alignment heads: auto on the tiny.en and tiny headers, the large-v1/large-v2
 *   ambiguity, names of other shapes refused, explicit lists;
 * - punctuation merging both ways (the vectors' texts have no appended marks);
 * - clip_timestamps: decoding starts at the first clip and stays inside the clips. */
#include "words/word_window.h"
#include "testutil.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void test_matrix(void)
{
    JsonParser *parser = json_parser_new();
    if (!json_parser_load_from_file(parser, tu_shared_path("testvectors/micro-multi/words.json"),
                                    NULL)) {
        CHECK(0, "micro-multi/words.json");
        g_object_unref(parser);
        return;
    }
    JsonObject *root = json_node_get_object(json_parser_get_root(parser));
    JsonObject *wm = json_object_get_object_member(root, "words_matrix");
    JsonObject *run = json_array_get_object_element(json_object_get_array_member(root, "runs"),
                                                    (guint)json_object_get_int_member(wm, "run") * 0);
    CHECK(!strcmp(json_object_get_string_member(run, "name"),
                  json_object_get_string_member(wm, "run")), "words_matrix run");
    JsonObject *win = json_array_get_object_element(json_object_get_array_member(run, "windows"),
                                                    (guint)json_object_get_int_member(wm, "window"));
    JsonArray *at = json_object_get_array_member(win, "alignment_tokens");
    const int L = (int)json_array_get_length(at), n_sot = 3, rows = (int)json_object_get_int_member(wm, "rows"),
              cols = (int)json_object_get_int_member(wm, "cols");
    int *seq = malloc((size_t)L * sizeof *seq);
    for (int i = 0; i < L; i++)
        seq[i] = (int)json_array_get_int_element(at, (guint)i);
    size_t n_want = 0, n_mel = 0;
    float *want = tu_read_f32(tu_shared_path("testvectors/micro-multi/words_matrix.f32"), &n_want);
    float *mel = tu_read_f32(tu_shared_path("testvectors/micro-multi/mel.f32"), &n_mel);
    wkv_model *m = wkv_model_load(tu_shared_path("testvectors/micro-multi/model.bin"), NULL);
    wkv_context *ctx = m ? wkv_context_new(m, 2, NULL) : NULL;
    CHECK(want && mel && ctx && n_want == (size_t)rows * cols && rows == L - n_sot - 1,
          "inputs of the matrix test");
    if (want && mel && ctx && n_want == (size_t)rows * cols) {
        int *pairs, n_pairs;
        float *a = malloc(n_want * sizeof *a), *probs = malloc((size_t)L * sizeof *probs);
        CHECK(wkv__heads_resolve(m, "default", &pairs, &n_pairs, NULL, NULL) == 0, "heads");
        CHECK(wkv_encode(ctx, mel) == 0, "encode");
        int rc = wkv__align_matrix(ctx, pairs, n_pairs, seq, L, n_sot, cols, a, probs);
        CHECK(rc == 0, "wkv__align_matrix");
        double err = rc == 0 ? tu_max_abs_err(a, want, n_want) : 1e9;
        CHECK(err < 2e-3, "matrix max abs error %g", err);
        printf("words_matrix %d x %d: max abs error %.3g\n", rows, cols, err);

        /* the window's words before the heuristics */
        wkv__aword *w;
        int nw, mf = 0;
        float *am = NULL;
        rc = wkv__align_window(ctx, pairs, n_pairs, seq, n_sot, seq + n_sot + 1, L - n_sot - 2,
                              (int)json_object_get_int_member(win, "num_frames"), 0, &w, &nw,
                              &am, &mf, NULL);
        /* the matrix it hands back (alignatt's stop rule reads it) is the pass's */
        CHECK(rc == 0 && am && mf == cols && memcmp(am, a, n_want * sizeof *a) == 0,
              "the window's matrix (%d frames) is not wkv__align_matrix's", mf);
        free(am);
        JsonArray *raw = json_object_get_array_member(win, "raw_words");
        CHECK(rc == 0 && nw == (int)json_array_get_length(raw), "raw words: %d", nw);
        for (int i = 0; rc == 0 && i < nw && i < (int)json_array_get_length(raw); i++) {
            JsonObject *x = json_array_get_object_element(raw, (guint)i);
            double p = json_object_get_double_member(x, "probability");
            CHECK(!strcmp(w[i].text, json_object_get_string_member(x, "word")) &&
                      fabs(w[i].start - json_object_get_double_member(x, "start")) < 1e-9 &&
                      fabs(w[i].end - json_object_get_double_member(x, "end")) < 1e-9 &&
                      fabs(w[i].probability - p) <= 1e-3 &&
                      (p < 1e-30 || fabs(w[i].probability - p) <= 0.02 * p),
                  "raw word %d '%s' %.2f-%.2f p %g", i, w[i].text, w[i].start, w[i].end,
                  (double)w[i].probability);
        }
        wkv__awords_free(w, nw);

        /* windows of 2 frames (one audio position: NaN after standardization) and of
         * 1 frame (none): every word at -0.02 s, as the reference's DTW gives */
        for (int frames = 1; frames <= 2; frames++) {
            rc = wkv__align_window(ctx, pairs, n_pairs, seq, n_sot, seq + n_sot + 1,
                                  L - n_sot - 2, frames, 0, &w, &nw, NULL, NULL, NULL);
            int all = rc == 0 && nw == (int)json_array_get_length(raw);
            for (int i = 0; all && i < nw; i++)
                all = w[i].start == -0.02 && w[i].end == -0.02;
            CHECK(all, "%d-frame window: %d words, all at -0.02 s", frames, nw);
            wkv__awords_free(w, nw);
        }
        /* more text than the decoder holds: no words, no failure */
        int *longer = calloc(500, sizeof *longer);
        for (int i = 0; i < 500; i++)
            longer[i] = seq[n_sot + 1 + i % (L - n_sot - 2)];
        rc = wkv__align_window(ctx, pairs, n_pairs, seq, n_sot, longer, 500, 3000, 0, &w, &nw, NULL, NULL, NULL);
        CHECK(rc == 0 && nw == 0, "500 text tokens: rc %d, %d words", rc, nw);
        wkv__awords_free(w, nw);
        free(longer);
        free(pairs);
        free(a);
        free(probs);
    }
    wkv_context_free(ctx);
    wkv_model_free(m);
    free(seq);
    free(want);
    free(mel);
    g_object_unref(parser);
}

static char *heads_name(const wkv_model *m, const char *spec)
{
    char *e = NULL;
    char *name = wkv_alignment_heads_name(m, spec, &e);
    free(e);
    return name;
}

static void expect_name(const wkv_model *m, const char *spec, const char *want)
{
    char *got = heads_name(m, spec);
    CHECK(want ? got && !strcmp(got, want) : got == NULL, "heads '%s': '%s', want '%s'", spec,
          got ? got : "(refused)", want ? want : "(refused)");
    free(got);
}

static void test_heads(void)
{
    wkv_model *en = wkv__model_load_vocab_only(tu_shared_path("models/for-tests-ggml-tiny.en.bin"), NULL);
    wkv_model *multi = wkv__model_load_vocab_only(tu_shared_path("models/for-tests-ggml-tiny.bin"), NULL);
    CHECK(en && multi, "the tiny headers");
    if (en && multi) {
        expect_name(en, "auto", "tiny.en");
        expect_name(en, NULL, "tiny.en");
        expect_name(multi, "auto", "tiny");
        expect_name(en, "tiny", NULL); /* another vocabulary */
        expect_name(en, "base.en", NULL);
        expect_name(en, "default", "default");
        expect_name(en, "3.5,1.0,3.5", "3.5,1.0,3.5");
        expect_name(en, "4.0", NULL); /* tiny has 4 decoder layers */
        expect_name(en, "1.6", NULL);
        expect_name(en, "1.0,", NULL);
        expect_name(en, "x", NULL);
        int *p, n;
        CHECK(wkv__heads_resolve(en, "3.5,1.0,3.5", &p, &n, NULL, NULL) == 0 && n == 2 &&
                  p[0] == 1 && p[1] == 0 && p[2] == 3 && p[3] == 5,
              "explicit heads sorted, duplicates dropped");
        free(p);
        CHECK(wkv__heads_resolve(en, "default", &p, &n, NULL, NULL) == 0 &&
                  n == 2 * en->hp.n_text_head && p[0] == en->hp.n_text_layer / 2,
              "default: every head of the last half of the layers (%d)", n);
        free(p);
        /* large-v1 and large-v2 share their shape: auto cannot tell, names can */
        en->hp.n_text_layer = 32;
        en->hp.n_text_head = 20;
        en->hp.n_text_state = 1280;
        en->hp.n_vocab = 51865;
        expect_name(en, "auto", "default");
        expect_name(en, "large-v2", "large-v2");
        expect_name(en, "large-v1", "large-v1");
        en->hp.n_vocab = 51866;
        en->hp.n_mels = 128;
        expect_name(en, "auto", "large-v3");
        expect_name(en, "large", "large-v3");
    }
    wkv_model_free(en);
    wkv_model_free(multi);
}

/* A word of one token `id` with its text and times. */
static wkv__aword word(const char *text, int id, double start, double end)
{
    wkv__aword w = {strdup(text), malloc(sizeof(int)), 1, start, end, 0.5f};
    w.tokens[0] = id;
    return w;
}

static void test_punctuation(void)
{
    wkv__aword *w = malloc(6 * sizeof *w);
    w[0] = word(" (", 1, 0.0, 0.2);
    w[1] = word(" Hello", 2, 0.2, 0.6);
    w[2] = word(",", 3, 0.6, 0.7);
    w[3] = word(" world", 4, 0.7, 1.0);
    w[4] = word("!", 5, 1.0, 1.1);
    w[5] = word(")", 6, 1.1, 1.2);
    /* speech until 10.5 s: the rules for the first words after a pause stay out */
    wkv__wseg seg = {.start = 10.0, .end = 11.2, .n_text = 6};
    int rc = wkv__add_word_timestamps(&seg, 1, w, 6, 10.0, 10.5, NULL, NULL);
    CHECK(rc == 0 && seg.n_words == 2, "merged into 2 words, got %d", seg.n_words);
    if (rc == 0 && seg.n_words == 2) {
        CHECK(!strcmp(seg.words[0].text, " ( Hello,") && seg.words[0].n_tokens == 3,
              "prepended and appended: '%s'", seg.words[0].text);
        CHECK(!strcmp(seg.words[1].text, " world!)") && seg.words[1].n_tokens == 3,
              "two appended in a row: '%s'", seg.words[1].text);
        /* the receiving word keeps its own times, offset by the window's 10 s; the
         * segment takes its words' start and end */
        CHECK(fabs(seg.words[0].start - 10.2) < 1e-9 && fabs(seg.words[0].end - 10.6) < 1e-9 &&
                  fabs(seg.words[1].start - 10.7) < 1e-9 && fabs(seg.words[1].end - 11.0) < 1e-9 &&
                  fabs(seg.start - 10.2) < 1e-9 && fabs(seg.end - 11.0) < 1e-9,
              "times %.2f-%.2f, %.2f-%.2f, segment %.2f-%.2f", seg.words[0].start,
              seg.words[0].end, seg.words[1].start, seg.words[1].end, seg.start, seg.end);
    }
    wkv__wsegs_clear(&seg, 1);
}

/* A segment [start, end] of one word: confident and 0.5 s long, or anomalous
 * (probability 0.01, 0.05 s: score 1 + 1.245). */
static wkv__wseg one_word_segment(double start, int anomalous)
{
    wkv__wseg g = {.start = start, .end = start + (anomalous ? 0.05 : 0.5), .n_words = 1};
    g.words = calloc(1, sizeof *g.words);
    g.words[0] = word(anomalous ? " uh" : " word", 7, g.start, g.end);
    g.words[0].probability = anomalous ? 0.01f : 0.9f;
    return g;
}

static void test_hallucinations(void)
{
    wkv__words_state st = {.hallucination_threshold = 2.0f, .last_speech = 0.0,
                          .content_frames = 12000};
    /* speech at 0.5 s, an anomalous word alone at 10 s: dropped from it on, the next
     * window starting at 10 s */
    wkv__wseg segs[3] = {one_word_segment(0.5, 0), one_word_segment(10.0, 1)};
    int n = 2;
    int64_t next = 0;
    int drop = wkv__skip_hallucinations(&st, segs, &n, 0, 3000, 0, &next);
    CHECK(!drop && n == 1 && next == 1000, "isolated anomaly: drop %d, %d segments, seek %lld",
          drop, n, (long long)next);
    wkv__wsegs_clear(segs, n);
    /* the same anomaly followed by speech 1 s later: kept */
    segs[0] = one_word_segment(0.5, 0);
    segs[1] = one_word_segment(10.0, 1);
    segs[2] = one_word_segment(11.0, 0);
    n = 3;
    drop = wkv__skip_hallucinations(&st, segs, &n, 0, 3000, 0, &next);
    CHECK(!drop && n == 3 && next == 1150, "anomaly between speech: drop %d, %d segments, "
          "seek %lld (after the last word)", drop, n, (long long)next);
    wkv__wsegs_clear(segs, n);
    /* a window opening with an anomaly 5 s in: skipped up to it */
    segs[0] = one_word_segment(105.0, 1);
    segs[1] = one_word_segment(107.0, 0);
    n = 2;
    drop = wkv__skip_hallucinations(&st, segs, &n, 10000, 2000, 0, &next);
    CHECK(drop && next == 10500, "leading anomaly: drop %d, seek %lld", drop, (long long)next);
    wkv__wsegs_clear(segs, n);
}

static int count_segment(const wkv_segment *s, void *user)
{
    int64_t *seen = user;
    if (seen[0] < 0)
        seen[0] = s->seek;
    seen[1] = s->seek > seen[1] ? s->seek : seen[1];
    seen[2]++;
    return 0;
}

static void test_clips(void)
{
    size_t n = 0;
    float *mel_data = tu_read_f32(tu_shared_path("testvectors/micro-en/mel.f32"), &n);
    wkv_model *m = wkv_model_load(tu_shared_path("testvectors/micro-en/model.bin"), NULL);
    wkv_context *ctx = m ? wkv_context_new(m, 2, NULL) : NULL;
    CHECK(mel_data && ctx, "clip inputs");
    if (mel_data && ctx) {
        /* one window's mel (the recording is shorter than 30 s): its frames as input */
        wkv_mel mel = {80, WKV_N_FRAMES, WKV_N_FRAMES, 0.0f, mel_data};
        for (size_t i = 0; i < n; i++)
            mel.max = i == 0 || mel_data[i] > mel.max ? mel_data[i] : mel.max;
        wkv_options o;
        wkv_options_default(&o);
        o.no_speech_threshold = 1.0f;
        o.temperature_increment = 0.0f;
        o.clip_timestamps = "3,9,,20"; /* frames 300-900 and 2000 to the end */
        int64_t seen[3] = {-1, -1, 0};
        int rc = wkv_transcribe_mel(ctx, &mel, &o, count_segment, NULL, seen, NULL);
        CHECK(rc >= 0 && seen[2] > 0 && seen[0] == 300 && seen[1] < WKV_N_FRAMES,
              "clips: %d segments, first seek %lld, last %lld", rc, (long long)seen[0],
              (long long)seen[1]);
        o.clip_timestamps = "3,x";
        char *e = NULL;
        CHECK(wkv_transcribe_mel(ctx, &mel, &o, NULL, NULL, NULL, &e) < 0 && e,
              "a bad clip list is refused");
        free(e);
    }
    wkv_context_free(ctx);
    wkv_model_free(m);
    free(mel_data);
}

int main(void)
{
    tu_require_shared("the test vectors and model headers");
    test_matrix();
    test_heads();
    test_punctuation();
    test_hallucinations();
    test_clips();
    return tu_finish("words-rules");
}
