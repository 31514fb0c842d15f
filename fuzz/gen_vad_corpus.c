/* gen_vad_corpus DIR: the VAD loader fuzzer's seeds, written without the shared data:
 * a valid Silero-shaped ggml VAD file with small random weights (the layout of
 * core/vad/vad_layout.h), and broken ones: truncated in the header, in a record and
 * in the data, a Whisper-like n_vocab where the model type goes, wrong header values,
 * a bad n_dims, name length, type and shape, an unknown name, NaN and infinite
 * weights, and the header alone. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "vad/vad_layout.h"

typedef struct {
    uint8_t *b;
    size_t n, cap;
} buf;

static void put_bytes(buf *o, const void *p, size_t n)
{
    if (o->n + n > o->cap) {
        o->cap = (o->n + n) * 2;
        o->b = realloc(o->b, o->cap);
        if (!o->b) {
            fprintf(stderr, "gen_vad_corpus: out of memory\n");
            exit(1);
        }
    }
    memcpy(o->b + o->n, p, n);
    o->n += n;
}

static void put_i32(buf *o, int32_t v)
{
    uint8_t b[4];
    for (int i = 0; i < 4; i++)
        b[i] = (uint8_t)((uint32_t)v >> (8 * i));
    put_bytes(o, b, 4);
}

static uint32_t rng = 7;

static float rnd(void)
{
    rng = rng * 1664525u + 1013904223u;
    return ((float)(rng >> 8) / 16777216.0f - 0.5f) * 0.2f;
}

/* f32 -> f16 for values well inside the half range (no rounding subtleties needed) */
static uint16_t to_f16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000, e = (x >> 23) & 0xff;
    if (e < 103)
        return (uint16_t)sign;
    if (e < 113) /* subnormal half */
        return (uint16_t)(sign | ((0x800000 | (x & 0x7fffff)) >> (126 - e)));
    return (uint16_t)(sign | ((e - 112) << 10) | ((x & 0x7fffff) >> 13));
}

#define defs wkv__vad_tensors

/* The whole valid file; *rec gets each record's offset. */
static buf make_file(size_t rec[15])
{
    buf o = {0};
    put_i32(&o, 0x67676d6c);
    put_i32(&o, (int32_t)strlen(WKV_VAD_MODEL_TYPE));
    put_bytes(&o, WKV_VAD_MODEL_TYPE, strlen(WKV_VAD_MODEL_TYPE));
    const int32_t version[] = {6, 2, 0};
    for (size_t i = 0; i < 3; i++)
        put_i32(&o, version[i]);
    for (size_t i = 0; i < WKV_VAD_N_HEADER; i++)
        put_i32(&o, wkv__vad_header[i]);
    for (int t = 0; t < 15; t++) {
        rec[t] = o.n;
        size_t count = 1;
        put_i32(&o, defs[t].n_dims);
        put_i32(&o, (int32_t)strlen(defs[t].name));
        put_i32(&o, defs[t].type);
        for (int d = 0; d < defs[t].n_dims; d++) {
            put_i32(&o, defs[t].ne[d]);
            count *= (size_t)defs[t].ne[d];
        }
        put_bytes(&o, defs[t].name, strlen(defs[t].name));
        for (size_t i = 0; i < count; i++) {
            if (defs[t].type) {
                uint16_t h = to_f16(rnd());
                uint8_t b[2] = {(uint8_t)h, (uint8_t)(h >> 8)};
                put_bytes(&o, b, 2);
            } else {
                float f = rnd();
                uint32_t u;
                memcpy(&u, &f, 4);
                put_i32(&o, (int32_t)u);
            }
        }
    }
    return o;
}

static const char *g_dir;
static int g_failed;

static void write_seed(const char *name, const uint8_t *p, size_t n)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n || fclose(f) != 0) {
        fprintf(stderr, "gen_vad_corpus: cannot write %s\n", path);
        g_failed = 1;
    }
}

/* the valid file with the i32 at off set to v */
static void write_patched(const char *name, const buf *f, size_t off, int32_t v)
{
    uint8_t *b = malloc(f->n);
    if (!b)
        exit(1);
    memcpy(b, f->b, f->n);
    for (int i = 0; i < 4; i++)
        b[off + (size_t)i] = (uint8_t)((uint32_t)v >> (8 * i));
    write_seed(name, b, f->n);
    free(b);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: gen_vad_corpus DIR\n");
        return 2;
    }
    g_dir = argv[1];
    if (mkdir(g_dir, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "gen_vad_corpus: cannot create %s\n", g_dir);
        return 1;
    }
    size_t rec[15];
    buf f = make_file(rec);
    write_seed("valid.bin", f.b, f.n);
    write_seed("cut-header.bin", f.b, 60);
    write_seed("header-only.bin", f.b, rec[0]);
    write_seed("cut-record.bin", f.b, rec[8] + 10);
    write_seed("cut-data.bin", f.b, rec[14] + 1000);
    write_seed("cut-last-byte.bin", f.b, f.n - 1);
    write_patched("whisper-vocab.bin", &f, 4, 51864);
    write_patched("n-window.bin", &f, 30, 1024);
    write_patched("layer-channels.bin", &f, 46, 32);
    write_patched("n-dims.bin", &f, rec[0], 7);
    write_patched("name-len.bin", &f, rec[0] + 4, 1 << 20);
    write_patched("type.bin", &f, rec[1] + 8, 1);
    write_patched("shape.bin", &f, rec[8] + 12, 64);
    write_patched("nan.bin", &f, rec[9] + 12 + 4 * 2 + 28, 0x7fc00000);
    write_patched("inf.bin", &f, rec[10] + 12 + 4 + 26, 0x7f800000);
    uint8_t *b = malloc(f.n);
    if (!b)
        return 1;
    memcpy(b, f.b, f.n);
    b[rec[3] + 12 + 4 + 3] = 'X';
    write_seed("unknown-name.bin", b, f.n);
    free(b);
    free(f.b);
    return g_failed;
}
