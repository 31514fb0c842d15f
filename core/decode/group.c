/* A decoder group: contexts on one model (live streams, elements) share their
 * greedy steps.  A step is queued; a thread whose step is still queued, when fewer
 * than max_passes passes are running, becomes the pass's runner and takes the queue
 * (its own step first, up to max_rows) into one decoder pass on its own context's
 * buffers, each row over its own context's caches (wkv__decoder_rows).  No one waits
 * for company: steps batch only when they meet, while another pass runs (flat
 * combining), so a lone stream pays one lock a step.
 *
 * A step that runs alone goes through wkv_decode on its own context, the path every
 * context without a group takes.  A shared pass reads the weights once for all its
 * rows; up to 8 rows the decoder's products read them through the same single-row
 * kernels (decoder.c), so max_rows is at most 8. */
#include "decode/group.h"
#include "base/util.h"

#include <pthread.h>
#include <string.h>
#include <unistd.h>

enum { QUEUED, TAKEN, DONE };

typedef struct step {
    wkv_context *ctx;
    int token, state, rc;
    float *logits;
    struct step *next;
} step;

struct wkv_decoder_group {
    const wkv_model *model;
    int max_rows, max_passes;
    pthread_mutex_t lock;
    pthread_cond_t done;
    step *queue;    /* queued steps, oldest first */
    int running;    /* passes running now */
    float *logits;  /* max_passes x max_rows x n_vocab: each running pass's rows */
    int *buf_busy;  /* max_passes: logits blocks in use */
    wkv_decoder_group_stats stats;
};

wkv_decoder_group *wkv_decoder_group_new(const wkv_model *model, int max_rows, int max_passes,
                                         char **error)
{
    if (!model || max_rows < 0 || max_rows > 8 || max_passes < 0 || max_passes > 64) {
        wkv__set_error(error, "decoder group: no model, or max_rows not in 0..8 or "
                              "max_passes not in 0..64");
        return NULL;
    }
    if (max_passes == 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        max_passes = n < 1 ? 1 : n > 64 ? 64 : (int)n;
    }
    wkv_decoder_group *g = wkv__calloc(1, sizeof *g);
    if (!g) {
        wkv__set_error(error, "out of memory");
        return NULL;
    }
    g->model = model;
    g->max_rows = max_rows ? max_rows : 8;
    g->max_passes = max_passes;
    g->logits = wkv__malloc((size_t)max_passes * g->max_rows * (size_t)model->hp.n_vocab *
                            sizeof *g->logits);
    g->buf_busy = wkv__calloc((size_t)max_passes, sizeof *g->buf_busy);
    if (!g->logits || !g->buf_busy) {
        wkv__free(g->logits);
        wkv__free(g->buf_busy);
        wkv__free(g);
        wkv__set_error(error, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&g->lock, NULL);
    pthread_cond_init(&g->done, NULL);
    return g;
}

void wkv_decoder_group_free(wkv_decoder_group *g)
{
    if (!g)
        return;
    pthread_mutex_destroy(&g->lock);
    pthread_cond_destroy(&g->done);
    wkv__free(g->logits);
    wkv__free(g->buf_busy);
    wkv__free(g);
}

void wkv_decoder_group_get_stats(wkv_decoder_group *g, wkv_decoder_group_stats *out)
{
    pthread_mutex_lock(&g->lock);
    *out = g->stats;
    pthread_mutex_unlock(&g->lock);
}

int wkv_context_set_decoder_group(wkv_context *ctx, wkv_decoder_group *g, char **error)
{
    if (g && g->model != ctx->model) {
        wkv__set_error(error, "decoder group: the context is on another model");
        return -1;
    }
    ctx->group = g; /* the group keeps no list: a context is in it only while stepping */
    return 0;
}

/* Runs the taken steps (own first) as one pass on own's context; called unlocked.
 * Decoder time is each step's wall time, counted by wkv__decoder_step, not here. */
static int run_pass(wkv_decoder_group *g, step **taken, int n, float *buf)
{
    wkv_context *own = taken[0]->ctx;
    const wkv_stats before = own->stats;
    if (n == 1) {
        int rc = wkv_decode(own, &taken[0]->token, 1, taken[0]->logits);
        own->stats.decode_ms = before.decode_ms;
        return rc;
    }
    wkv__dec_row rows[8];
    for (int i = 0; i < n; i++)
        rows[i] = (wkv__dec_row){&taken[i]->ctx->cross, &taken[i]->ctx->self, 0,
                                 taken[i]->token};
    if (wkv__decoder_rows(own, rows, n, buf) != 0)
        return -1;
    /* the pass counts as one step of each context (wkv_decode's bookkeeping) */
    own->stats.tokens_decoded = before.tokens_decoded + 1;
    own->stats.decode_ms = before.decode_ms;
    const size_t V = (size_t)g->model->hp.n_vocab;
    for (int i = 0; i < n; i++) {
        memcpy(taken[i]->logits, buf + i * V, V * sizeof *buf);
        if (i > 0) {
            taken[i]->ctx->stats.decoder_passes++;
            taken[i]->ctx->stats.tokens_decoded++;
        }
    }
    return 0;
}

int wkv__decoder_step(wkv_context *ctx, int token, float *logits)
{
    wkv_decoder_group *g = ctx->group;
    /* alignment passes watch the cross-attention through the hook: never shared */
    if (!g || ctx->cross_hook)
        return wkv_decode(ctx, &token, 1, logits);
    if (!ctx->cross.valid || token < 0 || token >= ctx->model->hp.n_vocab ||
        ctx->self.n[0] >= ctx->model->hp.n_text_ctx)
        return -1; /* what wkv_decode refuses, refused before it could fail a pass */
    const double t0 = wkv__now_ms();
    step me = {ctx, token, QUEUED, 0, logits, NULL};
    pthread_mutex_lock(&g->lock);
    step **end = &g->queue;
    while (*end)
        end = &(*end)->next;
    *end = &me;
    while (me.state != DONE) {
        if (me.state != QUEUED || g->running >= g->max_passes) {
            pthread_cond_wait(&g->done, &g->lock);
            continue;
        }
        /* run a pass: this step first, then the oldest queued, up to max_rows */
        step *taken[8] = {&me};
        int n = 1;
        for (step **p = &g->queue; *p;) {
            step *s = *p;
            if (s == &me || n < g->max_rows) {
                *p = s->next; /* off the queue */
                if (s != &me)
                    taken[n++] = s;
                s->state = TAKEN;
            } else {
                p = &s->next;
            }
        }
        int b = 0;
        while (g->buf_busy[b])
            b++; /* running < max_passes: one is free */
        g->buf_busy[b] = 1;
        g->running++;
        pthread_mutex_unlock(&g->lock);

        const size_t V = (size_t)ctx->model->hp.n_vocab;
        const int rc = run_pass(g, taken, n, g->logits + (size_t)b * g->max_rows * V);

        pthread_mutex_lock(&g->lock);
        g->buf_busy[b] = 0;
        g->running--;
        g->stats.passes++;
        g->stats.steps += n;
        if (n > 1)
            g->stats.shared_passes++;
        if (n > g->stats.max_rows)
            g->stats.max_rows = n;
        for (int i = 0; i < n; i++) {
            taken[i]->rc = rc;
            taken[i]->state = DONE;
        }
        pthread_cond_broadcast(&g->done);
    }
    pthread_mutex_unlock(&g->lock);
    ctx->stats.decode_ms += wkv__now_ms() - t0;
    return me.rc;
}
