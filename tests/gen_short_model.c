/* gen_short_model: the generated micro model with short contexts, for the element's
 * tests under valgrind (where a full micro window costs two minutes):
 *
 *   gen_short_model OUT [N_VOCAB]
 *
 * n_audio_ctx 150 (the encoder reads the first 300 of a window's 3000 frames, as
 * whisper.cpp's audio_ctx option does) and n_text_ctx 64 (at most 32 tokens a window),
 * otherwise micro (64 state, 2 heads, 2+2 layers, f16, seed 7).  The element's stream
 * handling does not depend on the model's size; only the decoding gets cheaper. */
#include "genlib.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: %s OUT [N_VOCAB]\n", argv[0]);
        return 2;
    }
    gen_params p;
    if (gen_params_preset(&p, "micro") != 0)
        return 1;
    p.n_audio_ctx = 150;
    p.n_text_ctx = 64;
    p.seed = 7;
    if (argc == 3)
        p.n_vocab = atoi(argv[2]);
    char *err = NULL;
    if (gen_model_write(argv[1], &p, &err) != 0) {
        fprintf(stderr, "%s: %s\n", argv[0], err ? err : "cannot write the model");
        free(err);
        return 1;
    }
    return 0;
}
