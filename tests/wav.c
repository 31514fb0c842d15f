#include "wav.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t rd32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint16_t rd16(const unsigned char *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static int fail(char *err, size_t errlen, const char *path, const char *what)
{
    if (err && errlen)
        snprintf(err, errlen, "%s: %s", path, what);
    return -1;
}

int wav_read(const char *path, wav_data *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f)
        return fail(err, errlen, path, "cannot open");
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = sz > 0 ? malloc((size_t)sz) : NULL;
    if (!buf || fread(buf, 1, (size_t)sz, f) != (size_t)sz) {
        fclose(f);
        free(buf);
        return fail(err, errlen, path, "cannot read");
    }
    fclose(f);
    size_t len = (size_t)sz;
    if (len < 12 || memcmp(buf, "RIFF", 4) || memcmp(buf + 8, "WAVE", 4)) {
        free(buf);
        return fail(err, errlen, path, "not a RIFF/WAVE file");
    }
    int have_fmt = 0, channels = 0, rate = 0, bits = 0;
    const unsigned char *data = NULL;
    size_t data_len = 0;
    size_t pos = 12;
    while (pos + 8 <= len) {
        const unsigned char *ck = buf + pos;
        size_t cklen = rd32(ck + 4);
        size_t avail = len - pos - 8;
        if (cklen > avail)
            cklen = avail; /* truncated file or streaming writer's size */
        const unsigned char *body = ck + 8;
        if (!memcmp(ck, "fmt ", 4)) {
            if (cklen < 16) {
                free(buf);
                return fail(err, errlen, path, "fmt chunk too short");
            }
            unsigned tag = rd16(body);
            channels = rd16(body + 2);
            rate = (int)rd32(body + 4);
            bits = rd16(body + 14);
            if (tag == 0xFFFE && cklen >= 40)
                tag = rd16(body + 24); /* sub-format GUID starts with the format tag */
            if (tag != 1) {
                free(buf);
                return fail(err, errlen, path, "not PCM");
            }
            have_fmt = 1;
        } else if (!memcmp(ck, "data", 4)) {
            data = body;
            data_len = cklen;
        }
        pos += 8 + cklen + (cklen & 1);
    }
    if (!have_fmt || !data) {
        free(buf);
        return fail(err, errlen, path, have_fmt ? "no data chunk" : "no fmt chunk");
    }
    if (bits != 16 || channels < 1) {
        free(buf);
        return fail(err, errlen, path, "only 16-bit PCM is supported");
    }
    size_t frames = data_len / (2 * (size_t)channels);
    float *s = malloc(sizeof(float) * (frames ? frames : 1));
    if (!s) {
        free(buf);
        return fail(err, errlen, path, "out of memory");
    }
    for (size_t i = 0; i < frames; i++) {
        const unsigned char *p = data + i * 2 * (size_t)channels;
        if (channels == 1) {
            s[i] = (float)(int16_t)rd16(p) / 32768.0f;
        } else {
            double acc = 0;
            for (int c = 0; c < channels; c++)
                acc += (int16_t)rd16(p + 2 * c);
            s[i] = (float)(acc / channels / 32768.0);
        }
    }
    free(buf);
    out->samples = s;
    out->n = frames;
    out->rate = rate;
    out->channels = channels;
    return 0;
}

void wav_free(wav_data *w)
{
    if (!w)
        return;
    free(w->samples);
    w->samples = NULL;
    w->n = 0;
}
