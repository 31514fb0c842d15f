#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int tu_failures;
int tu_checks;

const char *tu_shared_dir(void)
{
    const char *d = getenv("WHISPERKV_SHARED");
    if (!d || !*d)
        d = WKV_SHARED_DIR;
    struct stat st;
    if (stat(d, &st) != 0 || !S_ISDIR(st.st_mode))
        return NULL;
    return d;
}

const char *tu_require_shared(const char *what)
{
    const char *d = tu_shared_dir();
    if (d)
        return d;
    const char *ci = getenv("CI");
    fprintf(stderr, "shared test data not found (set WHISPERKV_SHARED or put shared/ next "
                    "to the checkout); needed for: %s\n", what);
    if (ci && *ci && strcmp(ci, "false") != 0)
        exit(1);
    exit(TU_SKIP);
}

int tu_open_clip_model(const char *rel, const char *model_path, int threads, wav_data *w,
                       wkv_model **model, wkv_context **ctx)
{
    tu_require_shared("a recording for the live stream");
    char werr[256];
    if (wav_read(tu_shared_path(rel), w, werr, sizeof werr) != 0) {
        fprintf(stderr, "%s: %s\n", rel, werr);
        return -1;
    }
    char *err = NULL;
    *model = wkv_model_load(model_path, &err);
    *ctx = *model ? wkv_context_new(*model, threads, &err) : NULL;
    if (!*ctx) {
        fprintf(stderr, "%s\n", err ? err : "cannot load the model");
        free(err);
        wkv_model_free(*model);
        wav_free(w);
        return -1;
    }
    return 0;
}

char *tu_shared_path(const char *rel)
{
    static char buf[4096];
    const char *d = tu_shared_dir();
    snprintf(buf, sizeof buf, "%s/%s", d ? d : ".", rel);
    return buf;
}

void *tu_read_file(const char *path, size_t *bytes)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *p = malloc(sz > 0 ? (size_t)sz : 1);
    if (p && fread(p, 1, (size_t)sz, f) != (size_t)sz) {
        free(p);
        p = NULL;
    }
    fclose(f);
    if (p)
        *bytes = (size_t)sz;
    return p;
}

float *tu_read_f32(const char *path, size_t *n)
{
    size_t bytes = 0;
    float *p = tu_read_file(path, &bytes);
    if (p)
        *n = bytes / sizeof(float);
    return p;
}

double tu_max_abs_err(const float *a, const float *b, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - b[i]);
        if (!(d <= m))
            m = d; /* NaN propagates as a failure */
    }
    return m;
}

double tu_rel_err(const float *a, const float *b, size_t n)
{
    double scale = 1e-6;
    for (size_t i = 0; i < n; i++)
        if (fabs(b[i]) > scale)
            scale = fabs(b[i]);
    return tu_max_abs_err(a, b, n) / scale;
}

int tu_compute_here(wkv_context *ctx, wkv_compute_type t, const char *what)
{
    char *err = NULL;
    const wkv_compute_type before = ctx ? wkv_context_compute_type(ctx) : WKV_COMPUTE_F32;
    const int rc = ctx ? wkv_context_set_compute_type(ctx, t, &err) : -1;
    /* refused by the CPU, or by a build without oneDNN (compute_none.c) */
    const int cpu = rc != 0 && err && (strstr(err, "on this CPU") || strstr(err, "needs oneDNN"));
    if (cpu) {
        printf("%s: %s left out: %s\n", what, wkv_compute_type_name(t), err);
        CHECK(wkv_context_compute_type(ctx) == before, "%s: a refused %s changed the type",
              what, wkv_compute_type_name(t));
    } else
        CHECK(rc == 0, "%s: compute type %s: %s", what, wkv_compute_type_name(t),
              err ? err : "no context");
    free(err);
    return rc == 0;
}

int tu_finish(const char *name)
{
    printf("%s: %d checks, %d failed\n", name, tu_checks, tu_failures);
    return tu_failures ? 1 : 0;
}

float tu_frand(uint32_t *seed)
{
    *seed = *seed * 1664525u + 1013904223u;
    return (float)(*seed >> 8) / 16777216.0f * 2.0f - 1.0f;
}

float *tu_wandering_tone(uint32_t *seed, size_t n)
{
    float *x = malloc(n * sizeof *x);
    double f = 150 + 500 * (tu_frand(seed) + 1);
    for (size_t i = 0; x && i < n; i++)
        x[i] = 0.3f * (float)sin(2 * M_PI * f * (double)i / 16000 * (1 + 0.3 * sin(i / 8000.0))) +
               0.05f * tu_frand(seed);
    return x;
}

void tu_seglog_add(const wkv_stream_segment *s, void *user)
{
    tu_seglog *l = user;
    int k = snprintf(l->buf + l->len, sizeof l->buf - l->len, "%d %.2f %.2f %d|%s\n", s->final,
                     s->start, s->end, s->n_tokens, s->text);
    if (k > 0 && l->len + (size_t)k < sizeof l->buf)
        l->len += (size_t)k;
}

int tu_emulated(void)
{
    return getenv("WHISPERKV_TEST_EMULATED") != NULL;
}

double tu_still_clock(void *user)
{
    (void)user;
    return 0.0;
}
