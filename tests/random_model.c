#include "random_model.h"

#include "genlib.h"
#include "testutil.h"

#include <stdlib.h>
#include <unistd.h>

wkv_model *tu_random_model(const char *size)
{
    gen_params p;
    if (gen_params_preset(&p, size) != 0)
        return NULL;
    char path[] = "/tmp/wkv-test-model-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "mkstemp");
    if (fd < 0)
        return NULL;
    close(fd);
    char *err = NULL;
    CHECK(gen_model_write(path, &p, &err) == 0, "%s", err ? err : "");
    wkv_model *model = err ? NULL : wkv_model_load(path, &err);
    unlink(path);
    CHECK(model != NULL, "%s", err ? err : "");
    free(err);
    return model;
}

float *tu_random_mel(const wkv_hparams *hp, uint32_t seed)
{
    size_t n = (size_t)hp->n_mels * WKV_N_FRAMES;
    float *mel = malloc(n * sizeof *mel);
    for (size_t i = 0; mel && i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        mel[i] = (float)(seed >> 8) / 16777216.0f * 2.0f - 1.0f;
    }
    return mel;
}
