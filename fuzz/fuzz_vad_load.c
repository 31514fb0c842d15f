/* libFuzzer target: the Silero VAD loader (core/vad/vad_model.c) on any bytes, through
 * wkv_vad_model_load_memory.
 *
 * Beyond the sanitizers' checks it asserts the loader's contract: a file it refuses
 * gets a "(memory): offset N: ..." message with N inside the input, and a file it
 * accepts runs: two chunks of fixed noise give probabilities in [0, 1] (or NaN when
 * finite but huge weights overflow), and their segments compute. */
#include "fuzz_refusal.h"
#include "whisperkv.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check_model(const wkv_vad_model *m)
{
    enum { N = 2 * WKV_VAD_CHUNK + 100 };
    static float pcm[N];
    uint32_t x = 1;
    for (int i = 0; i < N; i++) {
        x = x * 1664525u + 1013904223u;
        pcm[i] = (float)((int32_t)x >> 8) / 8388608.0f * 0.3f;
    }
    float *probs = NULL;
    char *err = NULL;
    int64_t n = wkv_vad_probs(m, pcm, N, &probs, &err);
    if (n != 3) {
        fprintf(stderr, "%lld probabilities for 3 chunks: %s\n", (long long)n, err ? err : "");
        abort();
    }
    for (int i = 0; i < n; i++)
        if (probs[i] < 0.0f || probs[i] > 1.0f)
            abort();
    wkv_vad_params p;
    wkv_vad_params_default(&p);
    wkv_vad_segment *segs = NULL;
    if (wkv_vad_segments(probs, n, &p, &segs, &err) < 0)
        abort();
    free(segs);
    free(probs);
    free(err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *err = NULL;
    wkv_vad_model *m = wkv_vad_model_load_memory(data, size, &err);
    if (m)
        check_model(m);
    else
        wkv_fuzz_check_refusal(err, size);
    wkv_vad_model_free(m);
    free(err);
    return 0;
}
