/* A tiny RIFF/WAVE reader for the tests: PCM s16 (format 1, or WAVE_FORMAT_EXTENSIBLE
 * with a PCM sub-format), any number of channels, chunks in any order (LIST and other
 * chunks are skipped, odd-sized chunks padded), 16- 18- or 40-byte fmt chunks. */
#ifndef WKV_TEST_WAV_H
#define WKV_TEST_WAV_H

#include <stddef.h>

typedef struct {
    float *samples; /* n mono samples: s16 / 32768.0f, channels averaged */
    size_t n;
    int rate;
    int channels; /* in the file */
} wav_data;

/* Returns 0, or -1 with a message in err (errlen bytes). */
int wav_read(const char *path, wav_data *out, char *err, size_t errlen);
void wav_free(wav_data *w);

#endif
