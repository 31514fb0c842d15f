/* The other vocabulary layouts end to end on generated models: multilingual and
 * large-v3 (128 mel bins, 51866 tokens, "yue", every id from translate up moved by
 * one), f32 and f16; language detection, translation and the initial prompt. */
#include "genlib.h"
#include "testutil.h"
#include "whisperkv.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    const wkv_model *m;
    int segments, bad_tokens;
} seen;

static int on_segment(const wkv_segment *s, void *user)
{
    seen *c = user;
    const wkv_specials *sp = wkv_model_specials(c->m);
    c->segments++;
    for (int i = 0; i < s->n_tokens; i++)
        if (s->tokens[i] >= sp->eot && s->tokens[i] < sp->timestamp_begin)
            c->bad_tokens++; /* only text and timestamps belong in segments */
    return 0;
}

static void run_layout(const char *what, int n_vocab, int n_mels, int ftype)
{
    gen_params p;
    gen_params_preset(&p, "micro");
    p.n_vocab = n_vocab;
    p.n_mels = n_mels;
    p.ftype = ftype;
    p.seed = 11;
    char path[] = "/tmp/wkv-layout-XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    char *err = NULL;
    CHECK(gen_model_write(path, &p, &err) == 0, "%s: generate: %s", what, err ? err : "");
    free(err);
    err = NULL;
    wkv_model *m = wkv_model_load(path, &err);
    unlink(path);
    CHECK(m != NULL, "%s: load: %s", what, err ? err : "");
    free(err);
    if (!m)
        return;
    const wkv_hparams *hp = wkv_model_hparams(m);
    const wkv_specials *sp = wkv_model_specials(m);
    CHECK(hp->n_mels == n_mels && hp->n_vocab == n_vocab, "%s: hparams", what);
    if (n_vocab == 51866) {
        CHECK(sp->n_langs == 100 && wkv_lang_token(m, "yue") == 50358 &&
                  sp->translate == 50359 && sp->transcribe == 50360 && sp->nospeech == 50363 &&
                  sp->timestamp_begin == 50365,
              "%s: large-v3 token ids", what);
        size_t len;
        const char *b = wkv_token_bytes(m, 50358, &len);
        CHECK(b && len == 7 && !memcmp(b, "<|yue|>", 7), "%s: <|yue|> spelling", what);
    } else {
        CHECK(wkv_lang_token(m, "yue") == -1, "%s: no yue before large-v3", what);
    }

    wkv_context *ctx = wkv_context_new(m, 2, NULL);
    size_t n = 16000 * 12;
    float *pcm = malloc(n * sizeof *pcm);
    for (size_t i = 0; i < n; i++)
        pcm[i] = 0.3f * sinf((float)i * 0.07f) * sinf((float)i * 0.0003f);
    wkv_mel *mel = wkv_mel_compute(m, pcm, n, 2, NULL);
    CHECK(mel && mel->n_mels == n_mels, "%s: mel with %d bins", what, n_mels);

    /* language detection gives a distribution over this layout's languages */
    float *window = malloc((size_t)n_mels * WKV_N_FRAMES * sizeof *window);
    float *probs = malloc((size_t)sp->n_langs * sizeof *probs);
    wkv_mel_window(mel, 0, WKV_N_FRAMES, WKV_MEL_GLOBAL, window);
    int lang = wkv_detect_language(ctx, window, probs, NULL);
    double total = 0;
    for (int i = 0; i < sp->n_langs; i++)
        total += probs[i];
    CHECK(lang >= sp->lang_begin && lang < sp->lang_begin + sp->n_langs &&
              fabs(total - 1.0) < 1e-4,
          "%s: detection gave %d, probabilities sum to %g", what, lang, total);

    /* "auto" then translate, with an initial prompt: the loop runs and segments hold
     * only text and timestamps */
    wkv_options o;
    wkv_options_default(&o);
    o.language = "auto";
    o.translate = 1;
    o.initial_prompt = "Hello world.";
    o.temperature_increment = 0;
    o.no_speech_threshold = 1.0f;
    seen c = {m, 0, 0};
    err = NULL;
    int count = wkv_transcribe_mel(ctx, mel, &o, on_segment, NULL, &c, &err);
    CHECK(count >= 0, "%s: transcribe: %s", what, err ? err : "");
    free(err);
    CHECK(c.bad_tokens == 0, "%s: %d special tokens inside segments", what, c.bad_tokens);
    CHECK(count == c.segments, "%s: %d segments reported, %d seen", what, count, c.segments);
    /* no-speech test off: a window of audio always gives text, so 0 means a lost window */
    CHECK(count > 0, "%s: no segment from 12 s of audio", what);

    /* the window result names the detected language token */
    CHECK(wkv_encode(ctx, window) == 0, "encode");
    o.language = wkv_lang_code(m, lang);
    wkv_window_result r;
    CHECK(wkv_decode_window(ctx, NULL, 0, &o, &r, NULL) == 0 && r.language == lang,
          "%s: window language", what);
    wkv_window_result_clear(&r);
    o.language = "xx";
    err = NULL;
    CHECK(wkv_decode_window(ctx, NULL, 0, &o, &r, &err) != 0 && err && strstr(err, "xx"),
          "%s: unknown language refused", what);
    free(err);
    printf("%s: detected %s, %d segments\n", what, wkv_lang_code(m, lang), count);

    free(probs);
    free(window);
    wkv_mel_free(mel);
    free(pcm);
    wkv_context_free(ctx);
    wkv_model_free(m);
}

int main(void)
{
    run_layout("multilingual f16", 51865, 80, 1);
    run_layout("large-v3 f16", 51866, 128, 1);
    run_layout("large-v3 f32", 51866, 128, 0);
    return tu_finish("layouts");
}
