/* whisperkv-vad-bench: the Silero VAD's speed on one thread (core/vad/vad.c).
 *
 *   whisperkv-vad-bench VAD_MODEL WAV [REPS]
 *
 * Runs wkv_vad_probs + wkv_vad_segments over the whole recording REPS times (default
 * 10) and prints, per run and as the minimum and median, the wall and thread CPU
 * time and the real-time factor (audio seconds per second of compute).  CPU time is
 * the steadier figure on a shared machine: another process's load stretches the wall
 * clock, not this thread's CPU time. */
#include "wav.h"
#include "whisperkv.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(clockid_t clk)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: whisperkv-vad-bench VAD_MODEL WAV [REPS]\n");
        return 2;
    }
    int reps = argc > 3 ? atoi(argv[3]) : 10;
    if (reps < 1 || reps > 1000)
        reps = 10;
    char *err = NULL, wav_err[256];
    wkv_vad_model *m = wkv_vad_model_load(argv[1], &err);
    wav_data w;
    if (!m || wav_read(argv[2], &w, wav_err, sizeof wav_err)) {
        fprintf(stderr, "whisperkv-vad-bench: %s\n", m ? wav_err : err);
        return 1;
    }
    double secs = (double)w.n / WKV_SAMPLE_RATE;
    double *wall = calloc((size_t)reps, sizeof *wall), *cpu = calloc((size_t)reps, sizeof *cpu);
    wkv_vad_params p;
    wkv_vad_params_default(&p);
    int n_segs = 0;
    int64_t n_probs = 0;
    for (int r = 0; r < reps; r++) {
        double w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_THREAD_CPUTIME_ID);
        float *probs;
        wkv_vad_segment *segs;
        n_probs = wkv_vad_probs(m, w.samples, w.n, &probs, NULL);
        n_segs = wkv_vad_segments(probs, n_probs, &p, &segs, NULL);
        wall[r] = now(CLOCK_MONOTONIC) - w0;
        cpu[r] = now(CLOCK_THREAD_CPUTIME_ID) - c0;
        free(probs);
        free(segs);
        printf("run %d: wall %.1f ms, cpu %.1f ms: %.0fx real time (cpu)\n", r + 1, wall[r], cpu[r],
               secs * 1e3 / cpu[r]);
    }
    qsort(wall, (size_t)reps, sizeof *wall, cmp);
    qsort(cpu, (size_t)reps, sizeof *cpu, cmp);
    printf("%s: %.2f s, %lld chunks, %d segments, 1 thread\n", argv[2], secs, (long long)n_probs,
           n_segs);
    printf("wall ms: min %.1f, median %.1f -> %.0fx / %.0fx real time\n", wall[0],
           wall[reps / 2], secs * 1e3 / wall[0], secs * 1e3 / wall[reps / 2]);
    printf("cpu ms:  min %.1f, median %.1f -> %.0fx / %.0fx real time, %.1f us per chunk\n",
           cpu[0], cpu[reps / 2], secs * 1e3 / cpu[0], secs * 1e3 / cpu[reps / 2],
           cpu[0] * 1e3 / (double)n_probs);
    free(wall);
    free(cpu);
    wav_free(&w);
    wkv_vad_model_free(m);
    return 0;
}
