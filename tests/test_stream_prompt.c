/* The live stream's prompt (whisperkv_stream.h, wkv_stream_new): with
 * condition_on_previous_text a run after a commit decodes with the committed text as
 * its prompt; without it, with the initial prompt alone (none, or every run the same).
 * Each case catches a real stream's run after a commit and decodes its audio by hand
 * with each candidate prompt: the run must equal the one it names, and differ from the
 * others (or the case proves nothing).  Usage: test_stream_prompt MODEL.bin (the
 * generated micro model); the recording comes from shared/. */
#include "decode/search.h"
#include "model/vocab.h"
#include "testutil.h"
#include "wav.h"
#include "whisperkv.h"

#include <stdlib.h>
#include <string.h>

#define MAX_TOK 4096

typedef struct {
    int ftok[MAX_TOK], n_ftok; /* the finals' tokens, in order */
    /* the first run on audio after a commit: its samples, the finals' tokens before it,
     * its hypothesis */
    int64_t base, n;
    int prompt_n, tok[256], ntok, caught;
} log_t;

static void on_run(const wkv_stream_run *r, void *user)
{
    log_t *l = user;
    if (l->caught || r->at_end || l->n_ftok == 0 || r->silent)
        return;
    int n = 0;
    for (int i = 0; i < r->n_pieces; i++)
        n += r->pieces[i].n_tokens;
    if (n == 0 || n > 256)
        return;
    l->caught = 1;
    l->base = r->base;
    l->n = r->n;
    l->prompt_n = l->n_ftok;
    l->ntok = 0;
    for (int i = 0; i < r->n_pieces; i++)
        for (int k = 0; k < r->pieces[i].n_tokens; k++)
            l->tok[l->ntok++] = r->pieces[i].tokens[k];
}

static void on_seg(const wkv_stream_segment *s, void *user)
{
    log_t *l = user;
    for (int i = 0; s->final && i < s->n_tokens && l->n_ftok < MAX_TOK; i++)
        l->ftok[l->n_ftok++] = s->tokens[i];
}

static void run_clip(wkv_context *ctx, const wkv_options *o, const wav_data *w, log_t *l)
{
    memset(l, 0, sizeof *l);
    wkv_stream_options so;
    wkv_stream_options_default(&so);
    so.commit_policy = WKV_COMMIT_AGREEMENT; /* it drops committed audio: runs after a commit */
    so.step_ms = 1000;
    so.latency_ms = 2500; /* the random model rarely agrees: forced commits early */
    so.clock_ms = tu_still_clock;
    so.on_run = on_run;
    so.run_user = l;
    char *err = NULL;
    wkv_stream *st = wkv_stream_new(ctx, o, &so, on_seg, l, &err);
    CHECK(st != NULL, "wkv_stream_new: %s", err ? err : "?");
    free(err);
    if (!st)
        return;
    const size_t chunk = WKV_SAMPLE_RATE / 4;
    for (size_t i = 0; i < w->n && !l->caught; i += chunk) {
        size_t c = w->n - i < chunk ? w->n - i : chunk;
        err = NULL;
        CHECK(wkv_stream_push(st, w->samples + i, c, (double)(i + c) / WKV_SAMPLE_RATE, &err) >= 0,
              "push: %s", err ? err : "?");
        free(err);
    }
    wkv_stream_free(st);
}

/* the caught run's audio decoded by hand with this prompt: equal to the run's tokens? */
static int same_as_run(wkv_context *ctx, const wkv_options *o, const wav_data *w,
                       const log_t *l, const int *prompt, int n_prompt)
{
    const wkv_model *m = wkv_context_model(ctx);
    const int size = (int)(l->n / WKV_HOP);
    float *win = malloc((size_t)wkv_model_hparams(m)->n_mels * WKV_N_FRAMES * sizeof *win);
    wkv_mel *mel = wkv_mel_compute_range(m, w->samples + l->base, (size_t)l->n, 0, l->n, 0,
                                         size, 1, NULL);
    wkv_mel_window(mel, 0, size, WKV_MEL_WINDOW, win);
    wkv_mel_free(mel);
    wkv_window_result r;
    int same = 0;
    if (wkv_encode(ctx, win) == 0 &&
        wkv__decode_window_prefix(ctx, prompt, n_prompt, NULL, 0, NULL, 0, o, &r, NULL) == 0) {
        /* the pieces hold the hypothesis without its end-of-text */
        int n = r.n_tokens;
        while (n > 0 && r.tokens[n - 1] == wkv_model_specials(m)->eot)
            n--;
        same = n == l->ntok && !memcmp(r.tokens, l->tok, (size_t)n * sizeof(int));
        wkv_window_result_clear(&r);
    } else {
        CHECK(0, "decode by hand");
    }
    free(win);
    return same;
}

static void test_case(wkv_context *ctx, wkv_options o, const wav_data *w, int cond,
                      const char *initial)
{
    o.condition_on_previous_text = cond;
    o.initial_prompt = initial;
    log_t l;
    run_clip(ctx, &o, w, &l);
    CHECK(l.caught && l.base > 0, "cond %d: no run after a commit on the audio after it", cond);
    if (!l.caught)
        return;
    int *seed = NULL;
    int n_seed = wkv__initial_prompt_tokens(wkv_context_model(ctx), initial, &seed, NULL);
    /* the committed text: the initial prompt and every final's tokens */
    int *all = malloc((size_t)(n_seed + l.prompt_n + 1) * sizeof *all);
    if (n_seed > 0) /* no initial prompt: seed is NULL */
        memcpy(all, seed, (size_t)n_seed * sizeof *all);
    memcpy(all + n_seed, l.ftok, (size_t)l.prompt_n * sizeof *all);
    const int with_text = same_as_run(ctx, &o, w, &l, all, n_seed + l.prompt_n);
    const int seed_only = same_as_run(ctx, &o, w, &l, seed, n_seed);
    CHECK(with_text == cond && seed_only == !cond,
          "cond %d, initial prompt '%s': the run after %d committed tokens is %sthe decoding "
          "with them as prompt and %sthe decoding with the initial prompt alone",
          cond, initial ? initial : "", l.prompt_n, with_text ? "" : "not ", seed_only ? "" : "not ");
    free(all);
    free(seed);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_stream_prompt MODEL\n");
        return 2;
    }
    wav_data w;
    wkv_model *model;
    wkv_context *ctx;
    if (tu_open_clip_model("speech/jfk/jfk.wav", argv[1], 1, &w, &model, &ctx) != 0)
        return 1;
    wkv_options o;
    wkv_options_default(&o);
    o.sample_len = 32; /* the generated model never says end-of-text */
    o.word_timestamps = 1; /* the committed text is the finals' words' tokens */
    test_case(ctx, o, &w, 1, NULL);
    test_case(ctx, o, &w, 0, NULL);
    test_case(ctx, o, &w, 0, "And so my fellow Americans");
    test_case(ctx, o, &w, 1, "And so my fellow Americans");
    wav_free(&w);
    wkv_context_free(ctx);
    wkv_model_free(model);
    return tu_finish("stream-prompt");
}
