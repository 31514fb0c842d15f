/* Against the reference implementation's vectors (../shared/testvectors): encoder
 * output, logits of fixed sequences, greedy windows with and without timestamps,
 * and the long-form loop with global and window mel normalization. */
#include "testutil.h"
#include "wav.h"
#include "whisperkv_debug.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static JsonObject *load_expected(const char *set, JsonParser **parser)
{
    char rel[256];
    snprintf(rel, sizeof rel, "testvectors/%s/expected.json", set);
    *parser = json_parser_new();
    GError *err = NULL;
    if (!json_parser_load_from_file(*parser, tu_shared_path(rel), &err)) {
        CHECK(0, "%s: %s", rel, err->message);
        g_error_free(err);
        return NULL;
    }
    return json_node_get_object(json_parser_get_root(*parser));
}

static int *json_ints(JsonArray *a, int *n)
{
    *n = (int)json_array_get_length(a);
    int *v = malloc((size_t)(*n ? *n : 1) * sizeof *v);
    for (int i = 0; i < *n; i++)
        v[i] = (int)json_array_get_int_element(a, (guint)i);
    return v;
}

static float *read_vector(const char *set, const char *name, size_t *n)
{
    char rel[256];
    snprintf(rel, sizeof rel, "testvectors/%s/%s", set, name);
    float *v = tu_read_f32(tu_shared_path(rel), n);
    CHECK(v != NULL, "cannot read %s", rel);
    return v;
}

static void check_tokens(const char *what, const int *got, int n_got, const int *want,
                         int n_want)
{
    int first_diff = -1;
    for (int i = 0; i < n_got && i < n_want; i++)
        if (got[i] != want[i]) {
            first_diff = i;
            break;
        }
    if (first_diff < 0 && n_got != n_want)
        first_diff = n_got < n_want ? n_got : n_want;
    CHECK(first_diff < 0, "%s: tokens differ at %d (got %d tokens, want %d; got %d want %d)",
          what, first_diff, n_got, n_want, first_diff < n_got ? got[first_diff] : -1,
          first_diff < n_want ? want[first_diff] : -1);
}

static void test_window(wkv_context *ctx, const float *mel, JsonObject *exp,
                        const char *set, const char *key, int timestamps, int beam_size)
{
    JsonObject *w = json_object_get_object_member(exp, key);
    wkv_options o;
    wkv_options_default(&o);
    o.timestamps = timestamps;
    o.beam_size = beam_size;
    CHECK(wkv_encode(ctx, mel) == 0, "encode");
    wkv_window_result r;
    char *err = NULL;
    int rc = wkv_decode_window(ctx, NULL, 0, &o, &r, &err);
    CHECK(rc == 0, "%s %s: %s", set, key, err ? err : "");
    free(err);
    if (rc != 0)
        return;
    int n_want;
    int *want = json_ints(json_object_get_array_member(w, "tokens"), &n_want);
    char what[128];
    snprintf(what, sizeof what, "%s %s", set, key);
    check_tokens(what, r.tokens, r.n_tokens, want, n_want);
    const char *text = json_object_get_string_member(w, "text");
    CHECK(strcmp(r.text, text) == 0, "%s: text differs:\n got  '%s'\n want '%s'", what, r.text,
          text);
    double alp = json_object_get_double_member(w, "avg_logprob");
    CHECK(fabs(r.avg_logprob - alp) <= 1e-3, "%s: avg_logprob %g, want %g", what,
          r.avg_logprob, alp);
    printf("%s: %d tokens, avg_logprob %.6f (ref %.6f)\n", what, r.n_tokens, r.avg_logprob,
           alp);
    if (json_object_has_member(w, "no_speech_prob")) {
        double nsp = json_object_get_double_member(w, "no_speech_prob");
        CHECK(fabs(r.no_speech_prob - nsp) <= 1e-3, "%s: no_speech_prob %g, want %g", what,
              r.no_speech_prob, nsp);
    }
    if (json_object_has_member(w, "compression_ratio")) {
        double cr = json_object_get_double_member(w, "compression_ratio");
        CHECK(fabs(r.compression_ratio - cr) <= 1e-6, "%s: compression_ratio %g, want %g",
              what, r.compression_ratio, cr);
    }
    if (json_object_has_member(w, "step_margins")) {
        JsonArray *sm = json_object_get_array_member(w, "step_margins");
        double worst = 0;
        guint len = json_array_get_length(sm);
        int n_steps;
        const float *margins = wkv_context_step_margins(ctx, &n_steps);
        CHECK(len == (guint)n_steps, "%s: %d steps, want %u", what, n_steps, len);
        for (guint i = 0; i < len && i < (guint)n_steps; i++) {
            double d = fabs(margins[i] - json_array_get_double_element(sm, i));
            worst = d > worst ? d : worst;
        }
        CHECK(worst <= 5e-3, "%s: step margins differ by up to %g", what, worst);
        printf("%s: step margins within %.2e of the reference\n", what, worst);
    }
    free(want);
    wkv_window_result_clear(&r);
}

static void test_logits(wkv_context *ctx, const float *mel, JsonObject *exp, const char *set)
{
    JsonObject *seqs = json_object_get_object_member(exp, "sequences");
    const wkv_hparams *hp = wkv_model_hparams(wkv_context_model(ctx));
    float *logits = malloc((size_t)hp->n_vocab * sizeof *logits);
    CHECK(wkv_encode(ctx, mel) == 0, "encode");
    GList *names = json_object_get_members(seqs);
    for (GList *l = names; l; l = l->next) {
        const char *name = l->data;
        int n;
        int *toks = json_ints(json_object_get_array_member(seqs, name), &n);
        char file[128];
        snprintf(file, sizeof file, "logits_%s.f32", name);
        size_t nref = 0;
        float *ref = read_vector(set, file, &nref);
        for (int mode = WKV_CACHE_FULL; mode <= WKV_CACHE_NONE && ref; mode++) {
            wkv_decode_reset(ctx);
            /* the cached path token by token after the first; the others in one go */
            int rc = mode == WKV_CACHE_FULL
                         ? wkv_decode(ctx, toks, 1, logits)
                         : wkv_decode_mode(ctx, toks, n, (wkv_cache_mode)mode, logits);
            for (int i = 1; mode == WKV_CACHE_FULL && i < n && rc == 0; i++)
                rc = wkv_decode(ctx, toks + i, 1, logits);
            CHECK(rc == 0 && nref == (size_t)hp->n_vocab, "%s %s: decode", set, name);
            double e = tu_rel_err(logits, ref, (size_t)hp->n_vocab);
            CHECK(e <= 1e-3, "%s logits_%s mode %d: relative error %g", set, name, mode, e);
            printf("%s logits_%s (cache mode %d): relative error %.2e\n", set, name, mode, e);
        }
        free(ref);
        free(toks);
    }
    g_list_free(names);
    free(logits);
}

typedef struct {
    JsonArray *want; /* expected segments with tokens */
    guint next;
    const char *what;
    int mismatches;
} seg_check;

static int on_segment(const wkv_segment *s, void *user)
{
    seg_check *c = user;
    /* the reference lists cleared segments with no tokens; we do not report them */
    JsonObject *w = NULL;
    while (c->next < json_array_get_length(c->want)) {
        w = json_array_get_object_element(c->want, c->next++);
        if (json_array_get_length(json_object_get_array_member(w, "tokens")) > 0)
            break;
        w = NULL;
    }
    CHECK(w != NULL, "%s: extra segment at %.2f '%s'", c->what, s->start, s->text);
    if (!w)
        return 1;
    int n;
    int *toks = json_ints(json_object_get_array_member(w, "tokens"), &n);
    int64_t seek = json_object_get_int_member(w, "seek");
    double start = json_object_get_double_member(w, "start");
    double end = json_object_get_double_member(w, "end");
    const char *text = json_object_get_string_member(w, "text");
    int ok = s->seek == seek && fabs(s->start - start) < 1e-6 && fabs(s->end - end) < 1e-6 &&
             n == s->n_tokens && memcmp(toks, s->tokens, (size_t)n * sizeof *toks) == 0 &&
             strcmp(text, s->text) == 0;
    CHECK(ok, "%s segment %u: got seek %lld %.2f-%.2f '%s' (%d tokens), want seek %lld "
              "%.2f-%.2f '%s' (%d tokens)",
          c->what, c->next - 1, (long long)s->seek, s->start, s->end, s->text, s->n_tokens,
          (long long)seek, start, end, text, n);
    free(toks);
    if (!ok && ++c->mismatches > 3)
        return 1; /* one divergence shifts everything after it */
    return 0;
}

static void test_long_form(wkv_context *ctx, const wkv_model *model, JsonObject *exp)
{
    wav_data wav;
    char err[256];
    if (wav_read(tu_shared_path("speech/gb0/gb0.wav"), &wav, err, sizeof err) != 0) {
        CHECK(0, "gb0.wav: %s", err);
        return;
    }
    char *e = NULL;
    wkv_mel *mel = wkv_mel_compute(model, wav.samples, wav.n, 2, &e);
    CHECK(mel != NULL, "mel: %s", e ? e : "");
    free(e);
    const char *keys[2] = {"long_form", "long_form_window_norm"};
    for (int k = 0; k < 2 && mel; k++) {
        JsonObject *lf = json_object_get_object_member(exp, keys[k]);
        seg_check c = {json_object_get_array_member(lf, "segments"), 0, keys[k], 0};
        wkv_options o;
        wkv_options_default(&o);
        o.no_speech_threshold = 1.0f; /* the vectors: temperature 0 only, no thresholds */
        o.temperature_increment = 0.0f;
        o.mel_norm = k ? WKV_MEL_WINDOW : WKV_MEL_GLOBAL;
        e = NULL;
        int n = wkv_transcribe_mel(ctx, mel, &o, on_segment, NULL, &c, &e);
        CHECK(n >= 0, "%s: %s", keys[k], e ? e : "");
        free(e);
        int remaining = 0;
        for (guint i = c.next; i < json_array_get_length(c.want); i++)
            remaining += json_array_get_length(json_object_get_array_member(
                             json_array_get_object_element(c.want, i), "tokens")) > 0;
        CHECK(remaining == 0 && c.mismatches == 0, "%s: %d segments missing, %d mismatches",
              keys[k], remaining, c.mismatches);
        printf("%s: %d segments reported, %d mismatches\n", keys[k], n, c.mismatches);
    }
    wkv_mel_free(mel);
    wav_free(&wav);
}

/* micro-multi: language probabilities from the first 3000 frames of the whole mel. */
static void test_language(wkv_context *ctx, const wkv_model *model, JsonObject *exp)
{
    JsonObject *ld = json_object_get_object_member(exp, "language_detection");
    JsonArray *top = json_object_get_array_member(ld, "top10");
    wav_data wav;
    char err[256];
    if (wav_read(tu_shared_path("speech/jfk/jfk.wav"), &wav, err, sizeof err) != 0) {
        CHECK(0, "jfk.wav: %s", err);
        return;
    }
    const wkv_hparams *hp = wkv_model_hparams(model);
    const wkv_specials *sp = wkv_model_specials(model);
    wkv_mel *mel = wkv_mel_compute(model, wav.samples, wav.n, 2, NULL);
    float *window = malloc((size_t)hp->n_mels * WKV_N_FRAMES * sizeof *window);
    float *probs = malloc((size_t)sp->n_langs * sizeof *probs);
    wkv_mel_window(mel, 0, WKV_N_FRAMES, WKV_MEL_GLOBAL, window);
    char *e = NULL;
    int lang = wkv_detect_language(ctx, window, probs, &e);
    CHECK(lang >= 0, "detect: %s", e ? e : "");
    free(e);
    double worst = 0;
    for (guint i = 0; lang >= 0 && i < json_array_get_length(top); i++) {
        JsonArray *pair = json_array_get_array_element(top, i);
        const char *code = json_array_get_string_element(pair, 0);
        double want = json_array_get_double_element(pair, 1);
        int tok = wkv_lang_token(model, code);
        CHECK(tok >= 0, "language %s", code);
        double d = tok >= 0 ? fabs(probs[tok - sp->lang_begin] - want) : 1;
        worst = d > worst ? d : worst;
        if (i == 0)
            CHECK(lang == tok, "detected %s, want %s", wkv_lang_code(model, lang), code);
    }
    CHECK(worst <= 1e-4, "language probabilities differ by up to %g", worst);
    printf("language detection: %s, top-10 probabilities within %.1e\n",
           lang >= 0 ? wkv_lang_code(model, lang) : "?", worst);
    free(probs);
    free(window);
    wkv_mel_free(mel);
    wav_free(&wav);
}

static void test_set(const char *set)
{
    char rel[256], *err = NULL;
    snprintf(rel, sizeof rel, "testvectors/%s/model.bin", set);
    wkv_model *model = wkv_model_load(tu_shared_path(rel), &err);
    CHECK(model != NULL, "%s: %s", rel, err ? err : "");
    free(err);
    if (!model)
        return;
    JsonParser *parser;
    JsonObject *exp = load_expected(set, &parser);
    wkv_context *ctx = wkv_context_new(model, 2, NULL);
    size_t n_mel = 0, n_enc = 0;
    float *mel = read_vector(set, "mel.f32", &n_mel);
    float *enc = read_vector(set, "encoder.f32", &n_enc);
    const wkv_hparams *hp = wkv_model_hparams(model);
    /* a vector missing or of the wrong size is a failure, never a quiet skip */
    CHECK(exp && ctx && mel && enc, "%s: expected.json, a context, mel.f32 and encoder.f32",
          set);
    CHECK(!mel || n_mel == (size_t)hp->n_mels * WKV_N_FRAMES,
          "%s: mel.f32 has %zu floats, want %d x %d", set, n_mel, hp->n_mels, WKV_N_FRAMES);
    if (exp && ctx && mel && enc && n_mel == (size_t)hp->n_mels * WKV_N_FRAMES) {
        CHECK(wkv_encode(ctx, mel) == 0, "encode");
        CHECK(n_enc == (size_t)hp->n_audio_ctx * hp->n_audio_state, "encoder.f32 size");
        double e = tu_rel_err(wkv_encoder_output(ctx), enc, n_enc);
        CHECK(e <= 1e-3, "%s encoder: relative error %g", set, e);
        printf("%s encoder: relative error %.2e\n", set, e);

        test_logits(ctx, mel, exp, set);
        test_window(ctx, mel, exp, set, "greedy_window", 1, 0);
        test_window(ctx, mel, exp, set, "greedy_window_notimestamps", 0, 0);
        test_window(ctx, mel, exp, set, "beam5_window", 1, 5);
        test_window(ctx, mel, exp, set, "beam5_window_notimestamps", 0, 5);
        if (json_object_has_member(exp, "long_form"))
            test_long_form(ctx, model, exp);
        if (json_object_has_member(exp, "language_detection"))
            test_language(ctx, model, exp);
    }
    free(mel);
    free(enc);
    wkv_context_free(ctx);
    if (exp)
        g_object_unref(parser);
    wkv_model_free(model);
}

int main(void)
{
    tu_require_shared("the reference test vectors (testvectors/micro-en, micro-multi)");
    test_set("micro-en");
    test_set("micro-multi");
    return tu_finish("reference");
}
