/* libFuzzer target: the model loader (core/model/model.c, ggml_file.c, ggml_tensors.c,
 * quant.c, weights.c, vocab.c) on any bytes, through wkv_model_load_memory.
 *
 * Beyond the sanitizers' checks it asserts the loader's contract: a file it refuses
 * gets a "(memory): offset N: ..." message with N inside the input, and a file it
 * accepts has sane hyper-parameters and a vocabulary whose tokens all decode. */
#include "fuzz_refusal.h"
#include "whisperkv.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check_model(const wkv_model *m)
{
    const wkv_hparams *hp = wkv_model_hparams(m);
    const wkv_specials *sp = wkv_model_specials(m);
    if (!hp || !sp || hp->n_vocab < 51864 || hp->n_vocab > 51866 || !wkv_model_mel_filters(m))
        abort();
    /* the first ids, the specials and the last timestamps, as the decoder shows them */
    int ids[64];
    int n = 0;
    for (int i = 0; i < 24; i++)
        ids[n++] = i * 37;
    for (int id = sp->eot; id < sp->eot + 16; id++)
        ids[n++] = id;
    for (int id = hp->n_vocab - 24; id < hp->n_vocab; id++)
        ids[n++] = id;
    for (int i = 0; i < n; i++) {
        size_t len;
        if (!wkv_token_bytes(m, ids[i], &len))
            abort();
    }
    char *text = wkv_tokens_to_text(m, ids, n, 0);
    if (!text)
        abort();
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *err = NULL;
    wkv_model *m = wkv_model_load_memory(data, size, &err);
    if (m)
        check_model(m);
    else
        wkv_fuzz_check_refusal(err, size);
    wkv_model_free(m);
    free(err);
    return 0;
}
