/* quantize_model: a quantized copy of an f32/f16 whisper.cpp ggml file, as
 * whisper.cpp's quantizer makes one: every 2-D matrix whose rows are whole 32-value
 * blocks is quantized from its f32 values (f16 widened), conv weights stay f16, the
 * conv biases, positional embeddings and 1-D tensors stay as they are; the header's
 * ftype becomes 2000 + type (quantization version 2).  The block quantizer is
 * genlib's (gen_quantize_block), written independently of the core's dequantizer.
 *
 *   quantize_model IN.bin OUT.bin q4_0|q4_1|q8_0|q5_0|q5_1
 *
 * Every size read from IN is checked against the bytes left before it is used. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "genlib.h"

typedef struct {
    const uint8_t *p;
    size_t n, off;
} reader;

static int take(reader *r, void *dst, size_t n)
{
    if (n > r->n - r->off)
        return -1;
    if (dst)
        memcpy(dst, r->p + r->off, n);
    r->off += n;
    return 0;
}

static int fail(const char *what, size_t off)
{
    fprintf(stderr, "quantize_model: %s at byte %zu\n", what, off);
    return 1;
}

static int quantize(const uint8_t *in, size_t n_in, FILE *out, int ftype)
{
    reader r = {in, n_in, 0};
    uint32_t magic;
    int32_t hp[11], n_mel, n_fft, n_tok;
    if (take(&r, &magic, 4) || magic != 0x67676d6c)
        return fail("not a ggml file", 0);
    if (take(&r, hp, sizeof hp))
        return fail("short header", r.off);
    if (hp[10] % 1000 > 1)
        return fail("the input is already quantized (ftype)", 4 + 40);
    size_t mel_off = r.off;
    if (take(&r, &n_mel, 4) || take(&r, &n_fft, 4) || n_mel <= 0 || n_mel > 512 ||
        n_fft <= 0 || n_fft > 4096 || take(&r, NULL, (size_t)n_mel * (size_t)n_fft * 4))
        return fail("bad mel filter section", mel_off);
    if (take(&r, &n_tok, 4) || n_tok < 0 || n_tok > 1000000)
        return fail("bad vocabulary size", r.off);
    for (int32_t i = 0; i < n_tok; i++) {
        uint32_t len;
        if (take(&r, &len, 4) || take(&r, NULL, len))
            return fail("vocabulary runs past the end", r.off);
    }
    int type = gen_quant_type(ftype);
    size_t bb = gen_quant_block_bytes(type);
    int32_t out_hp[11];
    memcpy(out_hp, hp, sizeof hp);
    out_hp[10] = 2000 + ftype;
    fwrite(&magic, 4, 1, out);
    fwrite(out_hp, sizeof out_hp, 1, out);
    fwrite(in + mel_off, 1, r.off - mel_off, out);
    int n_q = 0, n_t = 0;
    while (r.off < r.n) {
        size_t hdr = r.off;
        int32_t h[3], ne[4] = {1, 1, 1, 1};
        char name[256];
        if (take(&r, h, sizeof h) || h[0] < 1 || h[0] > 4 || h[1] <= 0 ||
            h[1] >= (int32_t)sizeof name || (h[2] != 0 && h[2] != 1))
            return fail("bad tensor header (or a tensor that is not f32/f16)", hdr);
        if (take(&r, ne, (size_t)h[0] * 4) || take(&r, name, (size_t)h[1]))
            return fail("tensor header runs past the end", hdr);
        name[h[1]] = 0;
        size_t count = 1;
        for (int d = 0; d < h[0]; d++) {
            if (ne[d] <= 0 || ne[d] > (1 << 24) || count > SIZE_MAX / (size_t)ne[d] / 4)
                return fail("bad tensor shape", hdr);
            count *= (size_t)ne[d];
        }
        size_t esz = h[2] == 0 ? 4 : 2;
        const uint8_t *data = r.p + r.off;
        if (take(&r, NULL, count * esz))
            return fail("tensor data runs past the end", hdr);
        int q = h[0] == 2 && ne[0] % 32 == 0 && !gen_tensor_keeps_f32(name);
        int32_t otype = q ? (int32_t)type : h[2];
        fwrite(h, 4, 2, out);
        fwrite(&otype, 4, 1, out);
        fwrite(ne, 4, (size_t)h[0], out);
        fwrite(name, 1, (size_t)h[1], out);
        n_t++;
        if (!q) {
            fwrite(data, esz, count, out);
            continue;
        }
        n_q++;
        float x[32];
        uint8_t blk[64];
        for (size_t b = 0; b < count / 32; b++) {
            for (int j = 0; j < 32; j++) {
                size_t i = b * 32 + (size_t)j;
                if (esz == 4) {
                    memcpy(&x[j], data + 4 * i, 4);
                } else {
                    uint16_t v;
                    memcpy(&v, data + 2 * i, 2);
                    x[j] = gen_f16_to_f32(v);
                }
            }
            gen_quantize_block(type, x, blk);
            fwrite(blk, 1, bb, out);
        }
    }
    fprintf(stderr, "quantize_model: %d of %d tensors quantized to %s\n", n_q, n_t,
            gen_ftype_name(ftype));
    return 0;
}

int main(int argc, char **argv)
{
    int ftype = argc == 4 ? gen_ftype_parse(argv[3]) : -1;
    if (argc != 4 || gen_quant_type(ftype) < 0) {
        char types[128];
        fprintf(stderr, "usage: quantize_model IN.bin OUT.bin %s\n",
                gen_ftype_list(types, sizeof types, "|", 1, 0));
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    if (fseek(f, 0, SEEK_END) != 0) {
        fclose(f);
        return fail("cannot seek", 0);
    }
    long sz = ftell(f);
    rewind(f);
    uint8_t *buf = sz > 0 ? malloc((size_t)sz) : NULL;
    if (!buf || fread(buf, 1, (size_t)sz, f) != (size_t)sz) {
        fclose(f);
        free(buf);
        return fail("cannot read the input", 0);
    }
    fclose(f);
    FILE *out = fopen(argv[2], "wb");
    if (!out) {
        perror(argv[2]);
        free(buf);
        return 1;
    }
    int rc = quantize(buf, (size_t)sz, out, ftype);
    if (fclose(out) != 0 && rc == 0)
        rc = fail("cannot write the output", 0);
    free(buf);
    if (rc)
        remove(argv[2]);
    return rc;
}
