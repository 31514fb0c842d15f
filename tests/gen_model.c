/* gen_model: writes a random-weight Whisper model in the ggml format (genlib.h).
 *
 *   gen_model --out PATH [--size micro|tiny|base|small|large-v3-turbo] [--n-state N]
 *             [--n-head N] [--n-layer N] [--n-audio-layer N] [--n-text-layer N]
 *             [--n-mels 80|128] [--n-vocab 51864|51865|51866] [--n-audio-ctx N]
 *             [--ftype f32|f16|q4_0|q4_1|q8_0|q5_0|q5_1] [--seed N]
 *             [--vocab-from FILE]
 */
#include "genlib.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    char types[128];
    fprintf(f,
            "usage: gen_model --out PATH [options]\n"
            "  --size NAME             preset (default micro): micro = 64 state, 2 heads,\n"
            "                          2+2 layers; tiny = 384, 6, 4+4; base = 512, 8, 6+6;\n"
            "                          small = 768, 12, 12+12; large-v3-turbo = 1280, 20,\n"
            "                          32+4, 128 mels, 51866 tokens\n"
            "  --n-state N             state size (overrides the preset)\n"
            "  --n-head N              attention heads\n"
            "  --n-layer N             encoder and decoder layers\n"
            "  --n-audio-layer N       encoder layers (after --n-layer)\n"
            "  --n-text-layer N        decoder layers (after --n-layer)\n"
            "  --n-mels 80|128         mel bands (default 80, or the vocabulary file's)\n"
            "  --n-audio-ctx N         encoder positions (default 1500; fewer: the encoder\n"
            "                          reads the first 2N frames of a window)\n"
            "  --n-vocab 51864|51865|51866\n"
            "                          English-only, multilingual, large-v3 (default\n"
            "                          51864, or the vocabulary file's)\n"
            "  --ftype %s\n"
            "                          weight type (default f16); the quantized ones as\n"
            "                          whisper.cpp's quantizer writes them (2-D matrices\n"
            "                          quantized, conv weights f16, the rest f32)\n"
            "  --seed N                PRNG seed (default 1)\n"
            "  --vocab-from FILE       copy the mel filters and the vocabulary from this\n"
            "                          ggml file (default: synthetic vocabulary and\n"
            "                          computed Slaney mel filters)\n",
            gen_ftype_list(types, sizeof types, "|", 0, 0));
}

static int parse_int(const char *opt, const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) {
        fprintf(stderr, "gen_model: %s: bad value '%s' (expected %ld..%ld)\n", opt, s, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

int main(int argc, char **argv)
{
    const char *out = NULL, *size = "micro", *vocab_from = NULL, *ftype = "f16";
    long n_state = 0, n_head = 0, n_layer = 0, n_audio_layer = 0, n_text_layer = 0;
    long n_mels = 0, n_vocab = 0, n_audio_ctx = 0;
    unsigned long long seed = 1;
    int have_seed = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "gen_model: %s needs a value (or unknown option)\n", a);
            usage(stderr);
            return 2;
        }
        const char *v = argv[++i];
        int rc = 0;
        if (strcmp(a, "--out") == 0)
            out = v;
        else if (strcmp(a, "--size") == 0)
            size = v;
        else if (strcmp(a, "--n-state") == 0)
            rc = parse_int(a, v, 4, 8192, &n_state);
        else if (strcmp(a, "--n-head") == 0)
            rc = parse_int(a, v, 1, 8192, &n_head);
        else if (strcmp(a, "--n-layer") == 0)
            rc = parse_int(a, v, 1, 64, &n_layer);
        else if (strcmp(a, "--n-audio-layer") == 0)
            rc = parse_int(a, v, 1, 64, &n_audio_layer);
        else if (strcmp(a, "--n-text-layer") == 0)
            rc = parse_int(a, v, 1, 64, &n_text_layer);
        else if (strcmp(a, "--n-mels") == 0)
            rc = parse_int(a, v, 80, 128, &n_mels);
        else if (strcmp(a, "--n-audio-ctx") == 0)
            rc = parse_int(a, v, 1, 1500, &n_audio_ctx);
        else if (strcmp(a, "--n-vocab") == 0)
            rc = parse_int(a, v, 51864, 51866, &n_vocab);
        else if (strcmp(a, "--ftype") == 0)
            ftype = v;
        else if (strcmp(a, "--seed") == 0) {
            char *end;
            errno = 0;
            seed = strtoull(v, &end, 0);
            if (errno || end == v || *end) {
                fprintf(stderr, "gen_model: --seed: bad value '%s'\n", v);
                return 2;
            }
            have_seed = 1;
        } else if (strcmp(a, "--vocab-from") == 0)
            vocab_from = v;
        else {
            fprintf(stderr, "gen_model: unknown option %s\n", a);
            usage(stderr);
            return 2;
        }
        if (rc)
            return 2;
    }
    if (!out) {
        fprintf(stderr, "gen_model: --out PATH is required\n");
        usage(stderr);
        return 2;
    }
    gen_params p;
    if (gen_params_preset(&p, size)) {
        fprintf(stderr, "gen_model: unknown --size '%s' (micro, tiny, base, small or "
                        "large-v3-turbo)\n", size);
        return 2;
    }
    p.ftype = gen_ftype_parse(ftype);
    if (p.ftype < 0) {
        char types[128];
        fprintf(stderr, "gen_model: --ftype must be one of %s\n",
                gen_ftype_list(types, sizeof types, ", ", 0, 0));
        return 2;
    }
    if (n_state)
        p.n_state = (int)n_state;
    if (n_head)
        p.n_head = (int)n_head;
    if (n_layer)
        p.n_audio_layer = p.n_text_layer = (int)n_layer;
    if (n_audio_layer)
        p.n_audio_layer = (int)n_audio_layer;
    if (n_text_layer)
        p.n_text_layer = (int)n_text_layer;
    if (n_mels)
        p.n_mels = (int)n_mels;
    if (n_vocab)
        p.n_vocab = (int)n_vocab;
    if (n_audio_ctx)
        p.n_audio_ctx = (int)n_audio_ctx;
    if (have_seed)
        p.seed = seed;
    p.vocab_from = vocab_from;
    char *err = NULL;
    if (gen_model_write(out, &p, &err)) {
        fprintf(stderr, "gen_model: %s\n", err ? err : "failed");
        free(err);
        return 1;
    }
    printf("wrote %s: n_state %d, %d heads, %d+%d layers, %s, seed %llu, %s\n", out,
           p.n_state, p.n_head, p.n_audio_layer, p.n_text_layer, gen_ftype_name(p.ftype),
           (unsigned long long)p.seed, vocab_from ? vocab_from : "synthetic vocabulary");
    return 0;
}
