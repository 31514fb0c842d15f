/* The log-mel front end (core/net/mel.c) against the facts of openai/whisper's
 * audio.py log_mel_spectrogram: frame counts, reflect padding and the power spectrum
 * on hand-computed and naive-DFT cases, non-finite samples, threads, both
 * normalizations, the reference's mel.f32 for the two test-vector clips, and the
 * speed. */
#include "base/util.h"
#include "net/mel.h"
#include "testutil.h"
#include "wav.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NBINS 201

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static double urand(void) /* [0, 1) */
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

/* The filter bank of a ggml file: u32 magic, 11 i32 hparams, i32 n_mel, i32 n_fft,
 * then n_mel x n_fft f32. */
static float *read_filters(const char *path, int *n_mels)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    uint32_t magic = 0;
    int32_t hp[11], nm = 0, nf = 0;
    float *filters = NULL;
    if (fread(&magic, 4, 1, f) == 1 && magic == 0x67676d6c && fread(hp, 4, 11, f) == 11 &&
        fread(&nm, 4, 1, f) == 1 && fread(&nf, 4, 1, f) == 1 && nm > 0 && nm <= 512 &&
        nf == NBINS && nm == hp[9]) {
        filters = malloc(sizeof(float) * (size_t)nm * NBINS);
        if (filters && fread(filters, sizeof(float), (size_t)nm * NBINS, f) != (size_t)nm * NBINS) {
            free(filters);
            filters = NULL;
        }
    }
    fclose(f);
    *n_mels = nm;
    return filters;
}

/* A made-up triangular bank (n x 201) for the tests that need no shared data. */
static float *synthetic_filters(int n)
{
    float *f = calloc((size_t)n * NBINS, sizeof(float));
    for (int m = 0; m < n; m++) {
        double lo = 2.0 * m, c = 2.0 * m + 2.0, hi = 2.0 * m + 4.0 + m * 0.3;
        for (int k = 0; k < NBINS; k++) {
            double v = 0;
            if (k > lo && k <= c)
                v = (k - lo) / (c - lo);
            else if (k > c && k < hi)
                v = (hi - k) / (hi - c);
            f[(size_t)m * NBINS + k] = (float)(v * 0.01);
        }
    }
    return f;
}

/* Identity bank: L is then log10 of the power spectrum itself. */
static float *identity_filters(void)
{
    float *f = calloc((size_t)NBINS * NBINS, sizeof(float));
    for (int k = 0; k < NBINS; k++)
        f[(size_t)k * NBINS + k] = 1.0f;
    return f;
}

static float L_of(const wkv_mel *mel, int band, int64_t frame)
{
    return mel->data[(size_t)band * (size_t)mel->n_frames + (size_t)frame];
}

static double hann(int i)
{
    return 0.5 - 0.5 * cos(2.0 * M_PI * i / 400.0);
}

/* Frame `frame` of the reference STFT done the slow, obvious way: build the whole
 * reflect-padded signal, then a direct double DFT. */
static void naive_power(const float *pcm, size_t n, int64_t frame, double *power)
{
    int64_t T = (int64_t)n + 480000;
    double x[400];
    for (int i = 0; i < 400; i++) {
        int64_t j = frame * 160 + i; /* index into the padded signal (T + 400 long) */
        int64_t src;
        if (j < 200)
            src = 200 - j;            /* padded[200 - k] = P[k] */
        else if (j < 200 + T)
            src = j - 200;
        else
            src = (T - 1) - (j - (T - 1 + 200)); /* padded[T-1+200+k] = P[T-1-k] */
        x[i] = (src < (int64_t)n ? (double)pcm[src] : 0.0) * hann(i);
    }
    for (int k = 0; k < NBINS; k++) {
        double re = 0, im = 0;
        for (int i = 0; i < 400; i++) {
            double a = -2.0 * M_PI * (double)((k * i) % 400) / 400.0;
            re += x[i] * cos(a);
            im += x[i] * sin(a);
        }
        power[k] = re * re + im * im;
    }
}

static double log_floor(double p)
{
    return log10(p > 1e-10 ? p : 1e-10);
}

static void test_frame_counts(const float *filters, int n_mels)
{
    static const size_t ns[] = {0, 1, 159, 160, 480000, 480001};
    static const int64_t frames[] = {3000, 3000, 3000, 3001, 6000, 6000};
    float *pcm = calloc(480001, sizeof(float));
    for (size_t i = 0; i < 480001; i++)
        pcm[i] = (float)(0.3 * sin(0.05 * (double)i));
    for (int t = 0; t < 6; t++) {
        char *err = NULL;
        wkv_mel *mel = wkv__mel_compute_filters(filters, n_mels, ns[t] ? pcm : NULL, ns[t], 2, &err);
        CHECK(mel != NULL, "n=%zu: %s", ns[t], err ? err : "?");
        free(err);
        if (!mel)
            continue;
        CHECK(mel->n_frames == frames[t], "n=%zu: n_frames %lld, want %lld", ns[t],
              (long long)mel->n_frames, (long long)frames[t]);
        CHECK(mel->content_frames == frames[t] - 3000, "n=%zu: content_frames %lld", ns[t],
              (long long)mel->content_frames);
        CHECK(mel->n_mels == n_mels, "n_mels %d", mel->n_mels);
        int finite = 1;
        for (size_t i = 0; i < (size_t)n_mels * (size_t)mel->n_frames; i++)
            finite &= isfinite(mel->data[i]) && mel->data[i] >= -10.0f;
        CHECK(finite, "n=%zu: non-finite or < -10 values", ns[t]);
        if (ns[t] == 0)
            CHECK(mel->max == -10.0f, "silence: max %g, want -10", mel->max);
        wkv_mel_free(mel);
    }
    char *err = NULL;
    CHECK(wkv__mel_compute_filters(NULL, 80, pcm, 10, 1, &err) == NULL && err, "NULL filters");
    free(err);
    err = NULL;
    CHECK(wkv_mel_compute(NULL, pcm, 10, 1, &err) == NULL && err, "NULL model");
    free(err);
    free(pcm);
}

/* Hand-computed impulses through the identity bank. */
static void test_hand_cases(const float *ident)
{
    /* pcm = {1}: frame 0 is centred on the impulse (window value w[200] = 1, reflect
     * gives x[-k] = x[k] = 0), so |X[k]|^2 = 1 in every bin.  Frame 1 starts 40
     * samples before it: |X[k]|^2 = w[40]^2. */
    float one = 1.0f;
    wkv_mel *mel = wkv__mel_compute_filters(ident, NBINS, &one, 1, 1, NULL);
    CHECK(mel != NULL, "impulse");
    if (mel) {
        double w40 = 0.5 - 0.5 * cos(2.0 * M_PI * 40.0 / 400.0); /* 0.0954915 */
        double e0 = 0, e1 = 0;
        for (int k = 0; k < NBINS; k++) {
            e0 = fmax(e0, fabs(L_of(mel, k, 0) - 0.0));
            e1 = fmax(e1, fabs(L_of(mel, k, 1) - log10(w40 * w40)));
        }
        CHECK(e0 < 1e-6, "impulse frame 0: max |L| %g", e0);
        CHECK(e1 < 1e-6, "impulse frame 1: err %g", e1);
        CHECK(fabs(mel->max) < 1e-6, "impulse max %g", mel->max);
        for (int k = 0; k < NBINS; k++)
            CHECK(L_of(mel, k, 2) == -10.0f, "impulse frame 2 bin %d: %g", k, L_of(mel, k, 2));
        wkv_mel_free(mel);
    }
    /* pcm = {0, 1}: reflect padding makes x[-1] = x[1] = 1, so frame 0 holds two
     * impulses at window positions 199 and 201 (equal window values w):
     * X[k] = 2 w (-1)^k cos(pi k / 200), power 4 w^2 cos^2(pi k / 200), which is 0 at
     * k = 100.  Repeating the edge sample instead would give w^2 in every bin. */
    float two[2] = {0.0f, 1.0f};
    mel = wkv__mel_compute_filters(ident, NBINS, two, 2, 1, NULL);
    CHECK(mel != NULL, "two samples");
    if (mel) {
        double w = hann(199), e = 0;
        for (int k = 0; k < NBINS; k++) {
            double c = cos(M_PI * k / 200.0);
            e = fmax(e, fabs(L_of(mel, k, 0) - log_floor(4.0 * w * w * c * c)));
        }
        CHECK(e < 1e-5, "reflect {0,1} frame 0: err %g", e);
        CHECK(L_of(mel, 100, 0) == -10.0f, "reflect {0,1}: bin 100 is %g, want -10",
              L_of(mel, 100, 0));
        wkv_mel_free(mel);
    }
}

/* Random signals against the naive STFT, on frames that reach into the reflect
 * padding at both ends and the zero padding. */
static void test_naive_dft(const float *ident)
{
    static const size_t ns[] = {150, 5000};
    for (int t = 0; t < 2; t++) {
        size_t n = ns[t];
        float *pcm = malloc(sizeof(float) * n);
        for (size_t i = 0; i < n; i++)
            pcm[i] = (float)(urand() - 0.5);
        wkv_mel *mel = wkv__mel_compute_filters(ident, NBINS, pcm, n, 1, NULL);
        CHECK(mel != NULL, "naive n=%zu", n);
        if (!mel) {
            free(pcm);
            continue;
        }
        int64_t fr[] = {0, 1, 2, 3, 10, 30, 31, 32, 33, mel->n_frames - 2, mel->n_frames - 1};
        double worst = 0, power[NBINS];
        for (size_t j = 0; j < sizeof fr / sizeof fr[0]; j++) {
            naive_power(pcm, n, fr[j], power);
            for (int k = 0; k < NBINS; k++)
                worst = fmax(worst, fabs(L_of(mel, k, fr[j]) - log_floor(power[k])));
        }
        printf("mel: naive DFT n=%zu: max |L - L_naive| = %.3g\n", n, worst);
        CHECK(worst < 1e-5, "naive DFT n=%zu: err %g", n, worst);
        wkv_mel_free(mel);
        free(pcm);
    }
}

static void test_nonfinite(const float *filters, int n_mels)
{
    size_t n = 20000;
    float *a = malloc(sizeof(float) * n), *b = malloc(sizeof(float) * n);
    for (size_t i = 0; i < n; i++)
        a[i] = b[i] = (float)(0.5 * sin(0.01 * (double)i) + 0.1 * (urand() - 0.5));
    a[100] = NAN;
    a[5000] = INFINITY;
    a[12345] = -INFINITY;
    a[n - 1] = NAN;
    b[100] = b[5000] = b[12345] = b[n - 1] = 0.0f;
    wkv_mel *ma = wkv__mel_compute_filters(filters, n_mels, a, n, 2, NULL);
    wkv_mel *mb = wkv__mel_compute_filters(filters, n_mels, b, n, 2, NULL);
    CHECK(ma && mb, "non-finite input");
    if (ma && mb) {
        size_t cnt = (size_t)n_mels * (size_t)ma->n_frames;
        int finite = isfinite(ma->max);
        for (size_t i = 0; i < cnt; i++)
            finite &= isfinite(ma->data[i]);
        CHECK(finite, "NaN/Inf samples gave non-finite output");
        CHECK(memcmp(ma->data, mb->data, cnt * sizeof(float)) == 0 && ma->max == mb->max,
              "NaN/Inf samples are not read as 0");
    }
    wkv_mel_free(ma);
    wkv_mel_free(mb);
    free(a);
    free(b);
}

static void test_threads(const float *filters, int n_mels)
{
    size_t n = 100 * 16000 + 77;
    float *pcm = malloc(sizeof(float) * n);
    for (size_t i = 0; i < n; i++)
        pcm[i] = (float)(0.3 * sin(0.002 * (double)i * (1.0 + (double)i / n)) +
                         0.05 * (urand() - 0.5));
    wkv_mel *m1 = wkv__mel_compute_filters(filters, n_mels, pcm, n, 1, NULL);
    for (int t = 2; t <= 5; t += 3) {
        wkv_mel *mt = wkv__mel_compute_filters(filters, n_mels, pcm, n, t, NULL);
        CHECK(m1 && mt, "threads");
        if (m1 && mt)
            CHECK(mt->n_frames == m1->n_frames && mt->max == m1->max &&
                      !memcmp(mt->data, m1->data,
                              sizeof(float) * (size_t)n_mels * (size_t)m1->n_frames),
                  "%d threads differ from 1", t);
        wkv_mel_free(mt);
    }
    wkv_mel_free(m1);
    free(pcm);
}

/* out must equal (max(L, M - 8) + 4) / 4 on frames [seek, seek+size), 0 after. */
static double window_err(const wkv_mel *mel, int64_t seek, int size, float M, const float *out)
{
    double e = 0;
    for (int b = 0; b < mel->n_mels; b++)
        for (int i = 0; i < 3000; i++) {
            double want = 0.0;
            if (i < size) {
                float L = L_of(mel, b, seek + i);
                float x = L > M - 8.0f ? L : M - 8.0f;
                want = (x + 4.0f) / 4.0f;
            }
            double d = fabs(out[(size_t)b * 3000 + i] - want);
            if (!(d <= e))
                e = d;
        }
    return e;
}

static void test_window_norm(const float *filters, int n_mels)
{
    /* 70 s: a loud first 29 s, then quiet, so the second window (frames 3000..5999,
     * from 30 s on) has its own maximum far below the global one. */
    size_t n = 70 * 16000;
    float *pcm = malloc(sizeof(float) * n);
    for (size_t i = 0; i < n; i++) {
        double t = (double)i / 16000.0;
        pcm[i] = i < 29 * 16000 ? (float)(0.6 * sin(2 * M_PI * 440 * t) + 0.2 * (urand() - 0.5))
                            : (float)(2e-3 * sin(2 * M_PI * 1000 * t) + 1e-4 * (urand() - 0.5));
    }
    wkv_mel *mel = wkv__mel_compute_filters(filters, n_mels, pcm, n, 2, NULL);
    CHECK(mel != NULL, "70 s");
    free(pcm);
    if (!mel)
        return;
    CHECK(mel->content_frames == 7000, "content_frames %lld", (long long)mel->content_frames);
    float *g = malloc(sizeof(float) * (size_t)n_mels * 3000);
    float *w = malloc(sizeof(float) * (size_t)n_mels * 3000);

    float gmax = -INFINITY;
    for (size_t i = 0; i < (size_t)n_mels * (size_t)mel->n_frames; i++)
        gmax = fmaxf(gmax, mel->data[i]);
    CHECK(gmax == mel->max, "max %g, over the data %g", mel->max, gmax);

    int64_t seek = 3000;
    int size = 3000;
    float wmax = -INFINITY;
    for (int b = 0; b < n_mels; b++)
        for (int i = 0; i < size; i++)
            wmax = fmaxf(wmax, L_of(mel, b, seek + i));
    wkv_mel_window(mel, seek, size, WKV_MEL_GLOBAL, g);
    wkv_mel_window(mel, seek, size, WKV_MEL_WINDOW, w);
    printf("mel: 70-s case: global max %.4f, second window's max %.4f\n", mel->max, wmax);
    CHECK(wmax < mel->max - 1.0f, "the quiet window's max %g is not below the global %g", wmax,
          mel->max);
    double eg = window_err(mel, seek, size, mel->max, g);
    double ew = window_err(mel, seek, size, wmax, w);
    CHECK(eg == 0.0, "GLOBAL formula err %g", eg);
    CHECK(ew == 0.0, "WINDOW formula err %g", ew);
    size_t differ = 0;
    float wout_max = -INFINITY;
    for (size_t i = 0; i < (size_t)n_mels * 3000; i++) {
        differ += g[i] != w[i];
        wout_max = fmaxf(wout_max, w[i]);
    }
    CHECK(differ > 0, "WINDOW and GLOBAL agree on the quiet window");
    CHECK(fabsf(wout_max - (wmax + 4.0f) / 4.0f) < 1e-6f, "WINDOW peak %g", wout_max);

    /* The last, partial window: size = content_frames - seek = 1000, then 0.0. */
    seek = 6000;
    size = (int)(mel->content_frames - seek);
    wmax = -INFINITY;
    for (int b = 0; b < n_mels; b++)
        for (int i = 0; i < size; i++)
            wmax = fmaxf(wmax, L_of(mel, b, seek + i));
    wkv_mel_window(mel, seek, size, WKV_MEL_WINDOW, w);
    CHECK(window_err(mel, seek, size, wmax, w) == 0.0, "partial WINDOW window");
    wkv_mel_window(mel, seek, size, WKV_MEL_GLOBAL, g);
    CHECK(window_err(mel, seek, size, mel->max, g) == 0.0, "partial GLOBAL window");

    /* The first window under WINDOW holds the global maximum: same as GLOBAL. */
    wkv_mel_window(mel, 0, 3000, WKV_MEL_WINDOW, w);
    wkv_mel_window(mel, 0, 3000, WKV_MEL_GLOBAL, g);
    CHECK(!memcmp(w, g, sizeof(float) * (size_t)n_mels * 3000), "loud window: WINDOW != GLOBAL");

    /* Clamping: size > 3000, size past the end, negative size, seek out of range. */
    wkv_mel_window(mel, 100, 5000, WKV_MEL_GLOBAL, g);
    CHECK(window_err(mel, 100, 3000, mel->max, g) == 0.0, "size 5000 not clamped to 3000");
    int64_t last = mel->n_frames - 10;
    wkv_mel_window(mel, last, 3000, WKV_MEL_GLOBAL, g);
    CHECK(window_err(mel, last, 10, mel->max, g) == 0.0, "size not clamped to the frames left");
    int64_t seeks[] = {-1, mel->n_frames, mel->n_frames + 5000, 10};
    int sizes[] = {3000, 3000, 3000, -3};
    for (int t = 0; t < 4; t++)
        for (int nm = 0; nm < 2; nm++) {
            for (size_t i = 0; i < (size_t)n_mels * 3000; i++)
                g[i] = 123.0f;
            wkv_mel_window(mel, seeks[t], sizes[t], (wkv_mel_norm)nm, g);
            CHECK(window_err(mel, 0, 0, 0.0f, g) == 0.0, "seek %lld size %d: not all 0.0",
                  (long long)seeks[t], sizes[t]);
        }
    free(g);
    free(w);
    wkv_mel_free(mel);
}

static void test_speed(const float *filters, int n_mels)
{
    size_t n = 600 * 16000; /* 10 minutes */
    float *pcm = malloc(sizeof(float) * n);
    for (size_t i = 0; i < n; i++)
        pcm[i] = (float)(0.3 * sin(0.003 * (double)i) + 0.1 * (urand() - 0.5));
    double windows = (double)(n + 480000) / 480000.0; /* the 30 s of padding costs too */
    for (int t = 1; t <= 2; t++) {
        double best = 1e30;
        for (int rep = 0; rep < 3; rep++) {
            double t0 = wkv__now_ms();
            wkv_mel *mel = wkv__mel_compute_filters(filters, n_mels, pcm, n, t, NULL);
            double dt = wkv__now_ms() - t0;
            CHECK(mel != NULL, "speed");
            wkv_mel_free(mel);
            if (dt < best)
                best = dt;
        }
        printf("mel: %d thread(s): %.1f ms for %.0f s of audio (+30 s padding) = %.2f ms per "
               "30 s\n", t, best, n / 16000.0, best / windows);
    }
    free(pcm);
}

static void test_reference(const char *dir, const char *wav_rel)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/testvectors/%s/model.bin", tu_shared_dir(), dir);
    int n_mels = 0;
    float *filters = read_filters(path, &n_mels);
    CHECK(filters != NULL, "%s: cannot read the filters", path);
    snprintf(path, sizeof path, "%s/testvectors/%s/%s", tu_shared_dir(), dir, wav_rel);
    wav_data wav;
    char err[512];
    int rc = wav_read(path, &wav, err, sizeof err);
    CHECK(rc == 0, "%s", err);
    CHECK(rc != 0 || (wav.rate == 16000 && wav.channels == 1), "%s: %d Hz, %d channels", path,
          wav.rate, wav.channels);
    snprintf(path, sizeof path, "%s/testvectors/%s/mel.f32", tu_shared_dir(), dir);
    size_t nref = 0;
    float *ref = tu_read_f32(path, &nref);
    CHECK(ref && nref == (size_t)n_mels * 3000, "%s: %zu floats", path, nref);
    if (filters && rc == 0 && ref && nref == (size_t)n_mels * 3000) {
        char *e = NULL;
        wkv_mel *mel = wkv__mel_compute_filters(filters, n_mels, wav.samples, wav.n, 2, &e);
        CHECK(mel != NULL, "%s", e ? e : "?");
        free(e);
        if (mel) {
            float *out = malloc(sizeof(float) * (size_t)n_mels * 3000);
            int size = mel->content_frames < 3000 ? (int)mel->content_frames : 3000;
            wkv_mel_window(mel, 0, size, WKV_MEL_GLOBAL, out);
            double err_abs = tu_max_abs_err(out, ref, nref);
            printf("mel: %s (%zu samples, %d content frames): max abs error vs mel.f32 = %.3g\n",
                   dir, wav.n, size, err_abs);
            CHECK(err_abs <= 1e-4, "%s: max abs error %g > 1e-4", dir, err_abs);
            /* The public entry point takes the same filters from the loaded model. */
            snprintf(path, sizeof path, "%s/testvectors/%s/model.bin", tu_shared_dir(), dir);
            wkv_model *model = wkv_model_load(path, &e);
            CHECK(model != NULL, "%s", e ? e : "?");
            free(e);
            e = NULL;
            if (model) {
                wkv_mel *m2 = wkv_mel_compute(model, wav.samples, wav.n, 1, &e);
                CHECK(m2 && m2->n_frames == mel->n_frames && m2->max == mel->max &&
                          !memcmp(m2->data, mel->data,
                                  sizeof(float) * (size_t)n_mels * (size_t)mel->n_frames),
                      "%s: wkv_mel_compute differs from wkv__mel_compute_filters (%s)", dir,
                      e ? e : "");
                free(e);
                wkv_mel_free(m2);
                wkv_model_free(model);
            }
            free(out);
            wkv_mel_free(mel);
        }
    }
    free(ref);
    if (rc == 0)
        wav_free(&wav);
    free(filters);
}

/* The test WAV reader on the odd shared files: a LIST chunk before data (gb0), an
 * 18-byte fmt chunk with 44.1 kHz stereo (harvard); then the mel of the 127-s file. */
static void test_wav_files(void)
{
    wav_data w;
    char err[512];
    int rc = wav_read(tu_shared_path("speech/harvard/harvard.wav"), &w, err, sizeof err);
    CHECK(rc == 0, "%s", err);
    if (rc == 0) {
        CHECK(w.rate == 44100 && w.channels == 2 && fabs(w.n / 44100.0 - 18.4) < 0.1,
              "harvard: %d Hz, %d channels, %zu samples", w.rate, w.channels, w.n);
        wav_free(&w);
    }
    rc = wav_read(tu_shared_path("speech/gb0/gb0.wav"), &w, err, sizeof err);
    CHECK(rc == 0, "%s", err);
    if (rc == 0) {
        CHECK(w.rate == 16000 && w.channels == 1 && fabs(w.n / 16000.0 - 127.4) < 0.1,
              "gb0: %d Hz, %d channels, %zu samples", w.rate, w.channels, w.n);
        float *filters = NULL;
        int n_mels = 0;
        filters = read_filters(tu_shared_path("testvectors/micro-en/model.bin"), &n_mels);
        if (filters) {
            double t0 = wkv__now_ms();
            wkv_mel *mel = wkv__mel_compute_filters(filters, n_mels, w.samples, w.n, 1, NULL);
            double dt = wkv__now_ms() - t0;
            CHECK(mel && mel->n_frames == (int64_t)(w.n + 480000) / 160, "gb0 mel");
            if (mel)
                printf("mel: gb0 (%.1f s, %lld frames), 1 thread: %.1f ms = %.2f ms per 30 s\n",
                       w.n / 16000.0, (long long)mel->n_frames, dt,
                       dt / ((double)(w.n + 480000) / 480000.0));
            wkv_mel_free(mel);
            free(filters);
        }
        wav_free(&w);
    }
}

/* wkv_mel_compute_range on pieces of a stream gives exactly the frames
 * wkv_mel_compute gives for the whole stream: at its start (reflection), in the
 * middle (real samples before the frame), and at its end (the appended zeros). */
static void test_range(const char *model_path)
{
    char *e = NULL;
    wkv_model *model = wkv_model_load(model_path, &e);
    CHECK(model != NULL, "%s: %s", model_path, e ? e : "");
    free(e);
    if (!model)
        return;
    const int n_mels = wkv_model_hparams(model)->n_mels;
    size_t n = 16000 * 70 + 123;
    float *pcm = malloc(n * sizeof *pcm);
    uint32_t r = 99;
    for (size_t i = 0; i < n; i++) {
        r = r * 1664525u + 1013904223u;
        pcm[i] = 0.4f * sinf((float)i * 0.05f) + (float)(r >> 8) / (float)(1u << 24) * 0.1f;
    }
    wkv_mel *whole = wkv_mel_compute(model, pcm, n, 2, NULL);
    const int64_t starts[] = {0, 1, 2970, 5999, (int64_t)(n / 160) - 100};
    for (int k = 0; k < 5 && whole; k++) {
        int64_t f0 = starts[k], nf = 3000;
        if (f0 + nf > whole->n_frames)
            nf = whole->n_frames - f0;
        int64_t lo = f0 * 160 - 200 > 0 ? f0 * 160 - 200 : 0;
        int64_t hi = (f0 + nf - 1) * 160 + 200 + 1;
        if (hi > (int64_t)n)
            hi = (int64_t)n;
        for (int ended = 0; ended < 2; ended++) {
            /* a live stream has not ended: give it the samples the frames need */
            if (!ended && (f0 + nf - 1) * 160 + 200 >= (int64_t)n)
                continue;
            wkv_mel *part = wkv_mel_compute_range(model, pcm + lo, (size_t)(hi - lo), lo,
                                                  ended ? (int64_t)n : -1, f0, nf, 1, &e);
            CHECK(part != NULL, "range at %lld: %s", (long long)f0, e ? e : "");
            free(e);
            e = NULL;
            int same = part != NULL;
            for (int mb = 0; part && mb < n_mels && same; mb++)
                same = !memcmp(part->data + (size_t)mb * (size_t)nf,
                               whole->data + (size_t)mb * (size_t)whole->n_frames + f0,
                               sizeof(float) * (size_t)nf);
            CHECK(same, "range frames %lld..%lld (ended %d) differ from the whole mel",
                  (long long)f0, (long long)(f0 + nf), ended);
            wkv_mel_free(part);
        }
        /* one sample short of what the frames need is an error, not a guess */
        if (f0 > 2) {
            wkv_mel *bad = wkv_mel_compute_range(model, pcm + lo + 1, (size_t)(hi - lo - 1),
                                                 lo + 1, (int64_t)n, f0, nf, 1, &e);
            CHECK(bad == NULL && e != NULL, "range with a missing first sample is refused");
            free(e);
            e = NULL;
        }
    }
    printf("mel: stream ranges equal the whole-input frames\n");
    wkv_mel_free(whole);
    free(pcm);
    wkv_model_free(model);
}

int main(int argc, char **argv)
{
    float *syn = synthetic_filters(80);
    float *ident = identity_filters();
    test_frame_counts(syn, 80);
    test_hand_cases(ident);
    test_naive_dft(ident);
    test_nonfinite(syn, 80);
    test_threads(syn, 80);
    test_window_norm(syn, 80);
    test_speed(syn, 80);
    if (argc > 1)
        test_range(argv[1]);
    free(syn);
    free(ident);
    if (!tu_shared_dir() && tu_failures)
        return tu_finish("mel");
    tu_require_shared("mel.f32 of the test vectors");
    test_reference("micro-en", "../../speech/ldc93s1/LDC93S1.wav");
    test_reference("micro-multi", "../../speech/jfk/jfk.wav");
    test_wav_files();
    return tu_finish("mel");
}
