/* rules: the reference's logit filters (core/decode/rules.c; openai/whisper's
 * decoding.py SuppressBlank, SuppressTokens, ApplyTimestampRules) on crafted logits.
 * Each case states, token by token, which ids must stay finite; the filters are
 * configured by wkv__rules_init from wkv_options exactly as the search does, so a rule
 * switched off there fails here too.  Random-weight models almost never put
 * the mass where these rules bite (a leading " ", a first timestamp past 1 s), so the
 * reference vectors alone cannot tell.
 *
 * Usage: test_rules MODEL (the generated micro model: English-only, 51864 ids). */
#include "model/model.h"
#include "model/vocab.h"
#include "kernels/ops.h"
#include "decode/rules.h"
#include "decode/pieces.h"
#include "testutil.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const wkv_model *m;
    int n_vocab, tb, eot, space;
    unsigned char *suppressed; /* the SuppressTokens list as a set */
    float *logits;
} fixture;

/* The ids a case expects to survive, before SuppressTokens and notimestamps (which
 * every case with timestamps removes too). */
typedef int (*allowed_fn)(const fixture *f, int id, const void *arg);

/* Applies the rules to f->logits and checks, for every id, finite == expected. */
static void expect(const fixture *f, const wkv_options *o, const int *sampled, int n,
                   allowed_fn allowed, const void *arg, const char *what)
{
    wkv__rules r;
    wkv__rules_init(&r, o, 3);
    wkv__rules_apply(f->m, &r, sampled, n, f->logits);
    int wrong = 0, first = -1, kept = 0;
    for (int id = 0; id < f->n_vocab; id++) {
        int want = allowed(f, id, arg) && !f->suppressed[id] &&
                   !(o->timestamps && id == f->m->sp.notimestamps);
        int got = isfinite(f->logits[id]);
        kept += got;
        if (want != got) {
            if (first < 0)
                first = id;
            wrong++;
        }
    }
    CHECK(wrong == 0, "%s: %d ids wrong, the first %d (tb %d, eot %d; %d kept)", what, wrong,
          first, f->tb, f->eot, kept);
}

/* Logits: every id at 0 except one text token at `text_logit`. */
static void fill(fixture *f, float text_logit)
{
    for (int i = 0; i < f->n_vocab; i++)
        f->logits[i] = 0.0f;
    f->logits[1000] = text_logit;
}

static int all_but_blank(const fixture *f, int id, const void *arg)
{
    (void)arg;
    return id != f->space && id != f->eot;
}

static int everything(const fixture *f, int id, const void *arg)
{
    (void)f, (void)id, (void)arg;
    return 1;
}

/* first step with timestamps: only <|0.00|> ... <|limit * 0.02|> */
static int initial_timestamps(const fixture *f, int id, const void *arg)
{
    int limit = *(const int *)arg;
    return id >= f->tb && (limit < 0 || id <= f->tb + limit);
}

/* a segment is open after the timestamp `last`: eot, the tokens between eot and the
 * timestamps (language ids) and timestamps from `last` on */
static int open_segment(const fixture *f, int id, const void *arg)
{
    int last = *(const int *)arg;
    return (id >= f->eot && id < f->tb) || id >= last;
}

/* a pair just closed: text (anything below the timestamps), no timestamp */
static int text_only(const fixture *f, int id, const void *arg)
{
    (void)arg;
    return id < f->tb;
}

/* text follows the timestamp `last`: text, or a timestamp after `last` */
static int after_text(const fixture *f, int id, const void *arg)
{
    int last = *(const int *)arg;
    return id < f->tb || id > last;
}

static int timestamps_after(const fixture *f, int id, const void *arg)
{
    int last = *(const int *)arg;
    return id > last && id >= f->tb;
}

static void suppress_blank(fixture *f)
{
    wkv_options o;
    wkv_options_default(&o);
    o.timestamps = 0; /* with timestamps the first step forbids all text anyway */
    fill(f, 5.0f);
    expect(f, &o, NULL, 0, all_but_blank, NULL, "SuppressBlank at the first step");
    int text = 1000;
    fill(f, 5.0f);
    expect(f, &o, &text, 1, everything, NULL, "no SuppressBlank after the first step");
    CHECK(!f->suppressed[f->space] && !f->suppressed[f->eot],
          "\" \" (%d) and eot are not in the SuppressTokens list", f->space);
}

static void initial_timestamp(fixture *f)
{
    wkv_options o;
    wkv_options_default(&o); /* max_initial_timestamp 1.0 s: index 50 */
    int limit = 50;
    fill(f, 5.0f);
    expect(f, &o, NULL, 0, initial_timestamps, &limit, "first step, max 1.00 s");
    o.max_initial_timestamp = 0.3f;
    limit = 15;
    fill(f, 5.0f);
    expect(f, &o, NULL, 0, initial_timestamps, &limit, "first step, max 0.30 s");
    o.max_initial_timestamp = 0.0f;
    limit = 0;
    fill(f, 5.0f);
    expect(f, &o, NULL, 0, initial_timestamps, &limit, "first step, max 0.00 s");
    o.max_initial_timestamp = -1.0f; /* negative: no limit */
    limit = -1;
    fill(f, 5.0f);
    expect(f, &o, NULL, 0, initial_timestamps, &limit, "first step, no limit");
}

static void timestamp_pairs(fixture *f)
{
    wkv_options o;
    wkv_options_default(&o);
    const int tb = f->tb, t = 1000;
    /* the text logit is far above log(#timestamps): the last rule stays out of it */
    {
        int seq[] = {tb + 10};
        fill(f, 20.0f);
        expect(f, &o, seq, 1, text_only, NULL, "after the first timestamp: text");
    }
    {
        int seq[] = {tb + 10, t};
        int last = tb + 10;
        fill(f, 20.0f);
        expect(f, &o, seq, 2, after_text, &last, "text after <|0.20|>: text or a later timestamp");
    }
    {
        int seq[] = {tb + 10, t, tb + 20};
        int last = tb + 20;
        fill(f, 20.0f);
        f->logits[f->eot] = 20.0f; /* text is forbidden here: eot is the best non-timestamp */
        expect(f, &o, seq, 3, open_segment, &last,
               "single closing timestamp: eot or a timestamp >= it");
    }
    {
        int seq[] = {tb + 10, t, tb + 20, tb + 20};
        fill(f, 20.0f);
        expect(f, &o, seq, 4, text_only, NULL, "pair closed: text");
    }
    {
        int seq[] = {tb + 10, t, tb + 20, tb + 20, t, t};
        int last = tb + 20;
        fill(f, 20.0f);
        expect(f, &o, seq, 6, after_text, &last, "text of the second segment");
    }
}

/* "if the timestamps together are more probable than any text token, sample one":
 * every allowed timestamp at 0, one text token at log(count) -/+ a little. */
static void timestamps_more_probable(fixture *f)
{
    wkv_options o;
    wkv_options_default(&o);
    int seq[] = {f->tb + 10, 1000};
    int last = f->tb + 10;
    int n_ts = f->n_vocab - (last + 1);
    float edge = (float)log((double)n_ts);
    fill(f, edge - 0.01f);
    expect(f, &o, seq, 2, timestamps_after, &last, "timestamps' sum above the best text");
    fill(f, edge + 0.01f);
    expect(f, &o, seq, 2, after_text, &last, "timestamps' sum below the best text");
    /* negative logits everywhere: the comparison is of log-probabilities */
    for (int i = 0; i < f->n_vocab; i++)
        f->logits[i] = i >= f->tb ? -30.0f : -60.0f;
    expect(f, &o, seq, 2, timestamps_after, &last, "timestamps far likelier, all negative");
}

/* log-probabilities and the compression ratio the fallback reads */
static void scores(fixture *f)
{
    fill(f, 0.0f);
    f->logits[7] = logf(3.0f);
    double lp = wkv__logprob(f->logits, f->n_vocab, 7);
    double x = (double)f->logits[7];
    double want = x - log(exp(x) + (f->n_vocab - 1));
    CHECK(fabs(lp - want) < 1e-9, "logprob %.12f, want %.12f", lp, want);
    CHECK(fabs(wkv__prob(f->logits, f->n_vocab, 7) - exp(want)) < 1e-12, "prob");
    /* spread logits (-100 .. 0 below the best, a third suppressed): the vectorized
     * exp against a long double sum of libm's expl */
    uint32_t r = 12345;
    for (int i = 0; i < f->n_vocab; i++) {
        r = r * 1664525u + 1013904223u;
        f->logits[i] = i % 3 == 1 ? -INFINITY : (float)(r >> 8) / 167772.16f - 100.0f;
    }
    float mx = -INFINITY;
    for (int i = 0; i < f->n_vocab; i++)
        mx = f->logits[i] > mx ? f->logits[i] : mx;
    long double sum = 0.0L;
    for (int i = 0; i < f->n_vocab; i++)
        sum += expl((long double)f->logits[i] - mx);
    const double want2 = (double)((long double)f->logits[5] - mx - logl(sum));
    const double lp2 = wkv__logprob(f->logits, f->n_vocab, 5);
    CHECK(fabs(lp2 - want2) < 1e-12, "spread logits: logprob %.15f, want %.15f", lp2, want2);
    CHECK(wkv__compression_ratio("") == 0.0, "empty text");
    char rep[401];
    memset(rep, 'a', 400);
    rep[400] = 0;
    CHECK(wkv__compression_ratio(rep) > 2.4, "400 x 'a' compresses: %.2f",
          wkv__compression_ratio(rep));
    CHECK(wkv__compression_ratio("The quick brown fox") < 2.4, "a short sentence: %.2f",
          wkv__compression_ratio("The quick brown fox"));
}

/* wkv__argmax2 (blocks' maxima, then one block scanned) against one scan with >, the
 * greedy step's choice and margin: sizes around a block's and the blocks' count,
 * duplicated maxima (the first one wins, margin 0), NaN and -inf among the logits, the
 * maximum first or last, +-0 as the maximum, all -inf, all NaN. */
static int scan_argmax2(const float *x, int n, float *margin)
{
    int best = 0;
    float b1 = -INFINITY, b2 = -INFINITY;
    for (int i = 0; i < n; i++) {
        if (x[i] > b1) {
            b2 = b1;
            b1 = x[i];
            best = i;
        } else if (x[i] > b2) {
            b2 = x[i];
        }
    }
    *margin = b1 - b2;
    return best;
}

static void argmax(void)
{
    static const int sizes[] = {1, 2, 15, 16, 17, 63, 64, 65, 1023, 1024, 1025, 4111, 51864, 51865, 51866};
    enum { N_MAX = 51866 };
    static float x[N_MAX];
    unsigned seed = 4242;
    int cases = 0, wrong = 0;
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
        for (int kind = 0; kind < 12; kind++, cases++) {
            const int n = sizes[si];
            for (int i = 0; i < n; i++) {
                seed = seed * 1103515245u + 12345u;
                x[i] = (float)((seed >> 8) / 16777216.0 * 20.0 - 10.0);
            }
            seed = seed * 1103515245u + 12345u;
            const int at = (int)((seed >> 8) % (unsigned)n), at2 = (int)((seed >> 3) % (unsigned)n);
            switch (kind) {
            case 1: x[at] = x[at2] = 50.0f; break;                 /* a tie */
            case 2: x[0] = 50.0f; break;                           /* first */
            case 3: x[n - 1] = 50.0f; break;                       /* last */
            case 4: x[at] = NAN; x[n - 1] = NAN; break;            /* NaN skipped */
            case 5: for (int i = 0; i < n; i += 3) x[i] = -INFINITY; break;
            case 6: for (int i = 0; i < n; i++) x[i] = x[i] > 0 ? -x[i] : x[i];
                    x[at] = -0.0f; x[at2] = 0.0f; break;           /* +-0 the maximum */
            case 7: for (int i = 0; i < n; i++) x[i] = -INFINITY; break;
            case 8: for (int i = 0; i < n; i++) x[i] = NAN; break;
            case 9: for (int i = 0; i < n; i++) x[i] = -INFINITY;
                    x[at] = NAN; x[at2] = -3.0f; break;            /* one finite */
            case 10: x[at] = INFINITY; break;
            case 11: for (int i = 0; i < n; i++) x[i] = 1.0f; break; /* all equal */
            default: break;
            }
            float m1, m2;
            const int want = scan_argmax2(x, n, &m1), got = wkv__argmax2(x, n, &m2);
            const int ok = got == want && (m1 == m2 || (isnan(m1) && isnan(m2)));
            if (!ok && wrong++ < 3)
                fprintf(stderr, "argmax2: n %d, case %d: %d margin %g, the scan %d margin %g\n", n,
                        kind, got, m2, want, m1);
        }
    CHECK(wrong == 0, "argmax2: %d of %d cases differ from the scan", wrong, cases);
    printf("argmax2: %d cases, %d differ from the scan\n", cases, wrong);
}

/* Sampling at temperature (wkv__sample_softmax) against a long double walk of expl's
 * weights: for u over [0, 1) the same token, unless u * total lies within 1e-12 of the
 * total from a boundary between the two answers; never a token of weight 0. */
static void sampling(void)
{
    /* 1001: spans of one block and a tail; 51865 (a vocabulary): spans of 64 tokens
     * over 811 spans, the last one short */
    static const int sizes[] = {1001, 51865};
    enum { N_MAX = 51865 };
    static float x[N_MAX];
    static long double cum[N_MAX];
    static const double temps[] = {0.2, 0.5, 1.0};
    unsigned seed = 777;
    int mismatches = 0, near = 0, draws = 0;
    /* under qemu (the isa setups) every 10th u: the same kernels and branches, and the
     * 4001 draws a case were most of the test's 190 s there */
    const int u_step = tu_emulated() ? 10 : 1;
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
    for (size_t ti = 0; ti < sizeof temps / sizeof *temps; ti++) {
        const int N = sizes[si];
        const double T = temps[ti];
        for (int i = 0; i < N; i++) {
            seed = seed * 1103515245u + 12345u;
            x[i] = (float)((seed >> 8) / 16777216.0 * 12.0 - 6.0);
        }
        for (int i = 0; i < N; i += 7) /* suppressed tokens among them */
            x[i] = -INFINITY;
        float mx = -INFINITY;
        for (int i = 0; i < N; i++)
            mx = x[i] > mx ? x[i] : mx;
        long double total = 0.0L;
        for (int i = 0; i < N; i++) {
            total += expl(((long double)x[i] - mx) / T);
            cum[i] = total;
        }
        for (int k = 0; k <= 4000; k += u_step, draws++) { /* 4000 % u_step == 0 */
            double u = k < 4000 ? k / 4000.0 : 1.0 - 0x1p-53;
            long double target = u * total;
            int lo = 0, hi = N - 1; /* the first cum[i] > target, by bisection */
            while (lo < hi) {
                int mid = (lo + hi) / 2;
                if (cum[mid] > target)
                    hi = mid;
                else
                    lo = mid + 1;
            }
            const int want = lo;
            int got = wkv__sample_softmax(x, N, T, u);
            int ok = got == want;
            if (!ok && got >= 0 && got < N && isfinite(x[got])) {
                int a = got < want ? got : want, b = got < want ? want : got;
                ok = 1;
                for (int c = a; c < b; c++)
                    ok = ok && fabsl(cum[c] - target) <= 1e-12L * total;
                near += ok;
            }
            mismatches += !ok;
            if (!ok && mismatches <= 3)
                fprintf(stderr, "n %d, T %.1f, u %.6f: token %d, long double walk %d\n", N, T, u,
                        got, want);
        }
    }
    CHECK(mismatches == 0, "sampling: %d draws differ from the long double walk", mismatches);
    printf("sampling: %d of %d draws differ from the long double walk; %d others differ "
           "only at a boundary within 1e-12\n", mismatches, draws, near);
    for (int i = 0; i < 40; i++)
        x[i] = -INFINITY;
    x[33] = 1.0f;
    CHECK(wkv__sample_softmax(x, 40, 0.7, 0.0) == 33 && wkv__sample_softmax(x, 40, 0.7, 0.999) == 33,
          "sampling: the one finite token");
    x[33] = -INFINITY;
    CHECK(wkv__sample_softmax(x, 40, 0.7, 0.5) == 0, "sampling: all -inf gives 0");
}

/* Pieces of a window's tokens (segments.c): cut after every two consecutive
 * timestamps, as the reference slices them, so a run of timestamps (the decoder may
 * emit them with timestamps off: --no-timestamps crashed on one, the array sized for a
 * piece per two tokens) makes a piece per token; the pieces cover the tokens in order. */
static void pieces(int tb)
{
    const int runs[][8] = {
        {tb, tb + 1, tb + 2, tb + 3, tb + 4, tb + 5, tb + 6, tb + 7}, /* only timestamps */
        {tb, 100, tb + 5, tb + 5, 200, tb + 9, tb + 9, tb + 10},      /* pairs, a run of 3 */
        {100, 101, 102, 103, 104, 105, 106, tb + 3},                  /* text, closed tail */
    };
    const int want[] = {8, 4, 1};
    for (int r = 0; r < 3; r++) {
        for (int n = 1; n <= 8; n++) {
            /* a copy of exactly n tokens, so that a tool sees any read past them */
            int *t = malloc((size_t)n * sizeof *t);
            memcpy(t, runs[r], (size_t)n * sizeof *t);
            wkv__piece *p = NULL;
            int np = wkv__split_pieces(t, n, tb, &p);
            CHECK(np >= 1 && np <= n, "run %d, %d tokens: %d pieces", r, n, np);
            int at = 0;
            for (int i = 0; i < np; i++) {
                CHECK(p[i].tok0 == at && p[i].tok1 > p[i].tok0, "run %d: piece %d [%d, %d)",
                      r, i, p[i].tok0, p[i].tok1);
                at = p[i].tok1;
            }
            CHECK(at == n, "run %d: the pieces end at %d of %d", r, at, n);
            if (n == 8)
                CHECK(np == want[r], "run %d: %d pieces, want %d", r, np, want[r]);
            free(p);
            free(t);
        }
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s MODEL\n", argv[0]);
        return 2;
    }
    char *err = NULL;
    wkv_model *m = wkv_model_load(argv[1], &err);
    if (!m) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    fixture f = {.m = m, .n_vocab = m->hp.n_vocab, .tb = m->sp.timestamp_begin,
                 .eot = m->sp.eot, .space = wkv__vocab_find(m, " ", 1)};
    f.suppressed = calloc((size_t)f.n_vocab, 1);
    f.logits = malloc((size_t)f.n_vocab * sizeof *f.logits);
    CHECK(f.space == 220, "\" \" is id %d", f.space);
    CHECK(m->n_suppress > 80, "SuppressTokens has %d ids", m->n_suppress);
    for (int i = 0; i < m->n_suppress; i++)
        f.suppressed[m->suppress[i]] = 1;
    CHECK(!f.suppressed[1000] && f.tb + 60 < f.n_vocab, "id 1000 is plain text");

    suppress_blank(&f);
    initial_timestamp(&f);
    timestamp_pairs(&f);
    timestamps_more_probable(&f);
    scores(&f);
    argmax();
    sampling();
    pieces(f.tb);

    free(f.suppressed);
    free(f.logits);
    wkv_model_free(m);
    return tu_finish("rules");
}
