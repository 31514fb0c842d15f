/* Models whose encoder and decoder have different layer counts (large-v3-turbo: 32 and
 * 4), generated at the micro size both ways round (4+2 and 1+3):
 *  - they load with each count where it belongs;
 *  - the encoder output equals, bit for bit, that of the model with the same encoder
 *    and another decoder (the generator seeds each tensor by its name, so the encoder
 *    weights are the same): the loader took every encoder block from the encoder's
 *    tensors whatever the decoder's count;
 *  - the default alignment heads are every head of the last half of the *decoder's*
 *    layers;
 *  - the long-form loop with word timestamps decodes text and words. */
#include "words/word_window.h"
#include "genlib.h"
#include "testutil.h"
#include "whisperkv.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static wkv_model *make(int n_audio_layer, int n_text_layer)
{
    gen_params p;
    gen_params_preset(&p, "micro");
    p.n_audio_layer = n_audio_layer;
    p.n_text_layer = n_text_layer;
    p.seed = 21;
    char path[] = "/tmp/wkv-layers-XXXXXX";
    int fd = mkstemp(path);
    if (fd >= 0)
        close(fd);
    char *err = NULL;
    wkv_model *m = NULL;
    if (fd >= 0 && gen_model_write(path, &p, &err) == 0)
        m = wkv_model_load(path, &err);
    if (fd >= 0)
        unlink(path);
    CHECK(m != NULL, "%d+%d layers: %s", n_audio_layer, n_text_layer, err ? err : "mkstemp");
    free(err);
    return m;
}

/* The encoder output of m for mel (malloc'd), or NULL. */
static float *encode(const wkv_model *m, const float *mel)
{
    const wkv_hparams *hp = wkv_model_hparams(m);
    size_t n = (size_t)hp->n_audio_ctx * hp->n_audio_state;
    wkv_context *ctx = wkv_context_new(m, 2, NULL);
    float *out = malloc(n * sizeof *out);
    int ok = ctx && out && wkv_encode(ctx, mel) == 0;
    if (ok)
        memcpy(out, wkv_encoder_output(ctx), n * sizeof *out);
    wkv_context_free(ctx);
    if (!ok) {
        free(out);
        return NULL;
    }
    return out;
}

typedef struct {
    int segments, words;
} seen;

static int on_segment(const wkv_segment *s, void *user)
{
    seen *c = user;
    c->segments++;
    c->words += s->n_words;
    return 0;
}

static void check(int n_audio_layer, int n_text_layer)
{
    wkv_model *m = make(n_audio_layer, n_text_layer);
    wkv_model *same_enc = make(n_audio_layer, n_audio_layer);
    if (!m || !same_enc)
        goto out;
    const wkv_hparams *hp = wkv_model_hparams(m);
    CHECK(hp->n_audio_layer == n_audio_layer && hp->n_text_layer == n_text_layer,
          "%d+%d: loaded as %d+%d", n_audio_layer, n_text_layer, hp->n_audio_layer,
          hp->n_text_layer);

    float *mel = malloc((size_t)hp->n_mels * WKV_N_FRAMES * sizeof *mel);
    for (size_t i = 0; i < (size_t)hp->n_mels * WKV_N_FRAMES; i++)
        mel[i] = 0.5f * sinf((float)i * 0.013f);
    float *a = encode(m, mel), *b = encode(same_enc, mel);
    size_t n = (size_t)hp->n_audio_ctx * hp->n_audio_state;
    CHECK(a && b && memcmp(a, b, n * sizeof *a) == 0,
          "%d+%d: encoder output differs from the %d+%d model's (max %g)", n_audio_layer,
          n_text_layer, n_audio_layer, n_audio_layer, a && b ? tu_max_abs_err(a, b, n) : -1.0);
    free(a);
    free(b);
    free(mel);

    int *pairs = NULL, n_pairs = 0;
    CHECK(wkv__heads_resolve(m, "default", &pairs, &n_pairs, NULL, NULL) == 0, "heads");
    int first = n_text_layer / 2, bad = 0;
    for (int i = 0; i < n_pairs; i++)
        bad += pairs[2 * i] < first || pairs[2 * i] >= n_text_layer;
    CHECK(n_pairs == (n_text_layer - first) * hp->n_text_head && bad == 0,
          "%d+%d: %d default heads (%d outside decoder layers %d..%d), want %d", n_audio_layer,
          n_text_layer, n_pairs, bad, first, n_text_layer - 1,
          (n_text_layer - first) * hp->n_text_head);
    free(pairs);

    size_t n_pcm = 16000 * 8;
    float *pcm = malloc(n_pcm * sizeof *pcm);
    for (size_t i = 0; i < n_pcm; i++)
        pcm[i] = 0.3f * sinf((float)i * 0.05f) * sinf((float)i * 0.0004f);
    wkv_context *ctx = wkv_context_new(m, 2, NULL);
    wkv_options o;
    wkv_options_default(&o);
    o.word_timestamps = 1;
    o.temperature_increment = 0;
    o.no_speech_threshold = 1.0f;
    seen c = {0, 0};
    char *err = NULL;
    int count = ctx ? wkv_transcribe(ctx, pcm, n_pcm, &o, on_segment, NULL, &c, &err) : -1;
    CHECK(count > 0 && c.words > 0, "%d+%d: transcribe gave %d segments, %d words: %s",
          n_audio_layer, n_text_layer, count, c.words, err ? err : "");
    printf("%d encoder + %d decoder layers: %d default heads, %d segments, %d words\n",
           n_audio_layer, n_text_layer, n_pairs, count, c.words);
    free(err);
    free(pcm);
    wkv_context_free(ctx);
out:
    wkv_model_free(m);
    wkv_model_free(same_enc);
}

int main(void)
{
    check(4, 2); /* large-v3-turbo's way: a deeper encoder */
    check(1, 3);
    return tu_finish("layer_counts");
}
