/* transcribe-wav: the library in a few dozen lines.  Loads a whisper.cpp ggml model,
 * reads a 16-kHz mono 16-bit WAV file and prints each segment with its times.
 *
 *   cc transcribe-wav.c -o transcribe-wav $(pkg-config --cflags --libs whisperkv)
 *   ./transcribe-wav ggml-base.en.bin recording.wav
 *
 * Other audio: ffmpeg -i in.mp3 -ar 16000 -ac 1 -c:a pcm_s16le out.wav */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <whisperkv.h>

static uint32_t le(const unsigned char *p, int bytes)
{
    uint32_t v = 0;
    for (int i = bytes - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* The samples of a 16-kHz mono 16-bit PCM WAV file as floats, or NULL. */
static float *read_wav(const char *path, size_t *n)
{
    unsigned char head[12], chunk[8], fmt[16] = {0};
    float *pcm = NULL;
    FILE *f = fopen(path, "rb");
    if (!f || fread(head, 1, 12, f) != 12 || memcmp(head, "RIFF", 4) || memcmp(head + 8, "WAVE", 4))
        goto done;
    while (fread(chunk, 1, 8, f) == 8) {
        uint32_t size = le(chunk + 4, 4);
        if (!memcmp(chunk, "fmt ", 4) && size >= 16) {
            if (fread(fmt, 1, 16, f) != 16 || fseek(f, size - 16 + (size & 1), SEEK_CUR))
                goto done;
        } else if (!memcmp(chunk, "data", 4)) {
            if (le(fmt, 2) != 1 || le(fmt + 2, 2) != 1 || le(fmt + 4, 4) != WKV_SAMPLE_RATE ||
                le(fmt + 14, 2) != 16)
                goto done; /* not 16-bit PCM, mono, 16 kHz */
            unsigned char s[2];
            pcm = malloc((size / 2 + 1) * sizeof *pcm);
            for (*n = 0; pcm && *n < size / 2 && fread(s, 1, 2, f) == 2; ++*n)
                pcm[*n] = (int16_t)le(s, 2) / 32768.0f;
            goto done;
        } else if (fseek(f, size + (size & 1), SEEK_CUR)) {
            goto done;
        }
    }
done:
    if (f)
        fclose(f);
    return pcm;
}

static int print_segment(const wkv_segment *seg, void *user)
{
    (void)user;
    printf("[%7.2f --> %7.2f] %s\n", seg->start, seg->end, seg->text);
    return 0; /* non-zero would stop the transcription */
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s MODEL.bin AUDIO.wav\n", argv[0]);
        return 2;
    }
    char *error = NULL;
    size_t n = 0;
    float *pcm = read_wav(argv[2], &n);
    if (!pcm) {
        fprintf(stderr, "%s: not a 16-kHz mono 16-bit WAV file\n", argv[2]);
        return 1;
    }
    wkv_model *model = wkv_model_load(argv[1], &error);
    wkv_context *ctx = model ? wkv_context_new(model, 2, &error) : NULL;
    wkv_options opts;
    wkv_options_default(&opts); /* English, greedy, timestamps: as openai/whisper */
    int segments = ctx ? wkv_transcribe(ctx, pcm, n, &opts, print_segment, NULL, NULL, &error) : -1;
    if (segments < 0)
        fprintf(stderr, "error: %s\n", error ? error : "failed");
    free(error);
    wkv_context_free(ctx);
    wkv_model_free(model);
    free(pcm);
    return segments < 0;
}
