/* Small helpers shared by the core tests: checks that count, the shared data
 * folder, reading raw f32 files. */
#ifndef WKV_TESTUTIL_H
#define WKV_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "wav.h"
#include "whisperkv.h"

extern int tu_failures;
extern int tu_checks;

#define CHECK(cond, ...)                                                          \
    do {                                                                          \
        tu_checks++;                                                              \
        if (!(cond)) {                                                            \
            tu_failures++;                                                        \
            fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                         \
            fputc('\n', stderr);                                                  \
        }                                                                         \
    } while (0)

/* Exit code meson treats as "skipped". */
#define TU_SKIP 77

/* The shared data folder (WHISPERKV_SHARED, else the build-time default), or NULL
 * when it is missing.  When missing: outside CI the test should print `what` and
 * return TU_SKIP; under CI (CI=true) tu_require_shared exits with failure instead,
 * because CI must run these tests. */
const char *tu_shared_dir(void);
const char *tu_require_shared(const char *what);
/* "<shared>/<rel>" in a static buffer (one at a time). */
char *tu_shared_path(const char *rel);

/* A stream test's start: the recording shared/<rel> (skipped or failed as
 * tu_require_shared says when shared/ is missing) and the model at model_path on a
 * context of `threads` threads.  0, or -1 with the reason on stderr (nothing left to
 * free). */
int tu_open_clip_model(const char *rel, const char *model_path, int threads, wav_data *w,
                       wkv_model **model, wkv_context **ctx);

/* Reads a whole file; *bytes gets its size.  NULL if missing. */
void *tu_read_file(const char *path, size_t *bytes);
/* Reads a whole file; *n gets the number of floats.  NULL if missing. */
float *tu_read_f32(const char *path, size_t *n);
/* max |a-b| / max(max |b|, 1e-6) */
double tu_rel_err(const float *a, const float *b, size_t n);
double tu_max_abs_err(const float *a, const float *b, size_t n);

/* Test audio: a uniform value in [-1, 1) from a linear congruential generator, and n
 * samples at 16 kHz of a noisy tone whose pitch wanders, different per call (both
 * advance *seed).  The tone is malloc'd. */
float tu_frand(uint32_t *seed);
float *tu_wandering_tone(uint32_t *seed, size_t n);

/* A live stream's segments as text, a line each ("final start end tokens|text"):
 * tu_seglog_add is a wkv_stream_cb with a tu_seglog as its user data. */
typedef struct {
    char buf[1 << 16];
    size_t len;
} tu_seglog;
void tu_seglog_add(const wkv_stream_segment *s, void *user);
/* A wkv_stream clock that never moves: runs take no time, so forcing depends on the
 * audio alone. */
double tu_still_clock(void *user);

/* Whether the test runs on a CPU qemu-user emulates (WHISPERKV_TEST_EMULATED, set by the
 * isa setups of tests/meson.build): there a test runs only what the native run cannot
 * check, 30 to 90 times slower. */
int tu_emulated(void);

/* Sets ctx's compute type t: 1 when it took it.  When this CPU cannot run t (the
 * core's refusal names "on this CPU": bf16 without AVX512_BF16/AMX, int8 without
 * VNNI) or the build has no oneDNN ("needs oneDNN"), it prints that, checks that the
 * context kept its type, and returns 0: the caller leaves out what needs t.  Any
 * other failure is a failed check (returns 0). */
int tu_compute_here(wkv_context *ctx, wkv_compute_type t, const char *what);

/* Final report: prints "name: N checks, N failed" and returns the exit code. */
int tu_finish(const char *name);

#endif
