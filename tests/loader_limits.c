/* loader limits: what the loader does at the edges of what a file can be (see
 * docs/reliability.md, "Limits"): a directory or a FIFO instead of a file, a header
 * whose tensors are larger than the file or than memory (sparse files: nothing is
 * written or allocated for their data), NaN / infinite / f16-overflowing weights, and
 * loading from memory. */
#include "loader_limits.h"

#include "genlib.h"
#include "model/model.h"
#include "model/quant.h"
#include "testutil.h"
#include "weight_lookup.h"

#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *g_dir;

static void put_u32(uint8_t *b, uint64_t off, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        b[off + (uint64_t)i] = (uint8_t)(v >> (8 * i));
}

/* Loading path must fail with a message holding path, "offset" and want; the call
 * must return within 20 s (SIGALRM ends the test otherwise). */
static char *expect_refusal(const char *path, const char *want, const char *label)
{
    char *err = NULL;
    alarm(20);
    wkv_model *m = wkv_model_load(path, &err);
    alarm(0);
    CHECK(m == NULL, "%s: loaded", label);
    CHECK(err && strstr(err, path) && strstr(err, "offset") && strstr(err, want),
          "%s: message lacks the path, the offset or '%s': %s", label, want, err ? err : "-");
    if (err)
        printf("  %-30s -> %s\n", label, err);
    wkv_model_free(m);
    return err;
}

static long max_rss_kib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

/* ---------------------------------------------------------------- not files */

static void check_not_files(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/a-directory", g_dir);
    CHECK(mkdir(path, 0700) == 0, "mkdir %s", path);
    free(expect_refusal(path, "is a directory", "directory"));
    rmdir(path);

    /* a FIFO with no writer: a blocking open() would wait forever */
    snprintf(path, sizeof path, "%s/a-fifo", g_dir);
    CHECK(mkfifo(path, 0600) == 0, "mkfifo %s", path);
    free(expect_refusal(path, "not a regular file", "FIFO without a writer"));
    /* with a writer holding it open, still refused, and nothing is read from it */
    int wfd = open(path, O_RDWR | O_NONBLOCK); /* O_RDWR: Linux opens a FIFO for both */
    CHECK(wfd >= 0, "open the FIFO for writing");
    if (wfd >= 0) {
        CHECK(write(wfd, "lmgg", 4) == 4, "write to the FIFO");
        free(expect_refusal(path, "not a regular file", "FIFO with a writer"));
        char b[8];
        CHECK(read(wfd, b, sizeof b) == 4, "the loader consumed bytes of the FIFO");
        close(wfd);
    }
    unlink(path);

    free(expect_refusal("/dev/null", "not a regular file", "character device"));
}

/* ---------------------------------------------------------------- huge headers */

/* Writes a sparse f32 model of n_state d and `layers` layers each side: the header,
 * mel filters (zeros) and a one-token vocabulary, then every tensor header at its
 * place with holes for the data, the file then cut (or extended) to `size` bytes
 * (0: its full size).  The tensor list comes from a generated micro model of the same
 * layer count (64 state, whose 64 / 256 dims become d / 4d).  *full gets the full
 * size.  Returns 0, or -1 when the file system cannot hold such a file. */
static int write_sparse(const char *path, int d, int layers, uint64_t size, uint64_t *full)
{
    gen_params p;
    gen_params_preset(&p, "micro");
    p.n_audio_layer = p.n_text_layer = layers;
    p.ftype = 0;
    p.n_tokens = 1;
    uint8_t *data;
    size_t n;
    gen_layout lay;
    char *err = NULL;
    if (gen_model_build(&p, &data, &n, &lay, &err)) {
        CHECK(0, "generator: %s", err);
        free(err);
        return -1;
    }
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    int rc = fd < 0 ? -1 : 0;
    /* header, mel filters, vocabulary: as generated, with the new sizes */
    put_u32(data, lay.hparams_off + 8, (uint32_t)d);
    put_u32(data, lay.hparams_off + 12, 64);
    put_u32(data, lay.hparams_off + 24, (uint32_t)d);
    put_u32(data, lay.hparams_off + 28, 64);
    if (rc == 0 && pwrite(fd, data, lay.vocab_end, 0) != (ssize_t)lay.vocab_end)
        rc = -1;
    uint64_t off = lay.vocab_end;
    for (int k = 0; rc == 0 && k < lay.n_tensors; k++) {
        const gen_tensor_info *t = &lay.tensors[k];
        uint8_t hdr[512];
        size_t name_len = strlen(t->name), h = 0;
        put_u32(hdr, h, (uint32_t)t->n_dims);
        put_u32(hdr, h + 4, (uint32_t)name_len);
        put_u32(hdr, h + 8, 0);
        h += 12;
        uint64_t count = 1;
        for (int i = 0; i < t->n_dims; i++) {
            int64_t ne = t->ne[i] == 64 ? d : t->ne[i] == 256 ? 4 * (int64_t)d : t->ne[i];
            put_u32(hdr, h, (uint32_t)ne);
            h += 4;
            count *= (uint64_t)ne;
        }
        memcpy(hdr + h, t->name, name_len);
        h += name_len;
        if (size == 0 || off + h <= size)
            if (pwrite(fd, hdr, h, (off_t)off) != (ssize_t)h)
                rc = -1;
        off += h + 4 * count;
    }
    *full = off;
    if (rc == 0 && ftruncate(fd, (off_t)(size ? size : off)) != 0)
        rc = -1;
    if (fd >= 0)
        close(fd);
    free(data);
    gen_layout_free(&lay);
    return rc;
}

static void check_huge(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/huge.bin", g_dir);
    uint64_t full = 0;
    long rss0 = max_rss_kib();

    /* 64 GiB of file, but a header (8192 state, 64 + 64 layers) that needs ~480 GB */
    const uint64_t gib64 = (uint64_t)64 << 30;
    if (write_sparse(path, 8192, 64, gib64, &full) == 0) {
        CHECK(full > gib64, "the big header needs only %llu bytes", (unsigned long long)full);
        free(expect_refusal(path, "truncated", "header larger than the file"));
    } else {
        printf("  SKIP header larger than the file: no 64-GiB sparse file here\n");
    }
    unlink(path);

    /* a complete (sparse) file whose weights need more than this machine's memory:
     * layers are added until the f32 arena is 1.25x the physical memory */
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    uint64_t ram = (uint64_t)pages * (uint64_t)psize;
    int layers = 1;
    while (layers < 64 && (uint64_t)layers * 28 * 8192 * 8192 * 4 < ram + ram / 4)
        layers++;
    if ((uint64_t)layers * 28 * 8192 * 8192 * 4 >= ram + ram / 4 &&
        write_sparse(path, 8192, layers, 0, &full) == 0) {
        printf("  (a %llu-GiB sparse f32 file, %d + %d layers of 8192, %llu GiB of memory)\n",
               (unsigned long long)(full >> 30), layers, layers,
               (unsigned long long)(ram >> 30));
        free(expect_refusal(path, "MiB of memory this process may use",
                            "weights larger than memory"));
    } else {
        printf("  SKIP weights larger than memory: no sparse file of 1.25x memory here\n");
    }
    unlink(path);
    long grown = max_rss_kib() - rss0;
    CHECK(grown < 64 * 1024, "refusing the huge files grew the peak RSS by %ld KiB", grown);
}

/* ---------------------------------------------------------------- bad weights */

static int build(int ftype, uint8_t **data, size_t *size, gen_layout *lay)
{
    gen_params p;
    gen_params_preset(&p, "micro");
    p.ftype = ftype;
    p.n_audio_ctx = 16;
    p.n_text_ctx = 16;
    char *err = NULL;
    if (gen_model_build(&p, data, size, lay, &err)) {
        CHECK(0, "generator: %s", err);
        free(err);
        return -1;
    }
    return 0;
}

/* Writes data with `bytes` (n of them) at tensor `name`'s element offset `at` and
 * expects a refusal whose message names the tensor, says `want` and gives `off`. */
static void bad_weight(uint8_t *data, size_t size, const gen_layout *lay, const char *name,
                       uint64_t at, const uint8_t *bytes, size_t n, const char *want,
                       const char *label)
{
    int t = gen_layout_find(lay, name);
    CHECK(t >= 0, "%s: no tensor %s", label, name);
    if (t < 0)
        return;
    uint64_t off = lay->tensors[t].data_off + at;
    uint8_t *copy = malloc(size);
    memcpy(copy, data, size);
    memcpy(copy + off, bytes, n);
    char path[512];
    snprintf(path, sizeof path, "%s/bad-weight.bin", g_dir);
    gen_write_file(path, copy, size);
    char *err = expect_refusal(path, want, label);
    char where[64];
    snprintf(where, sizeof where, "offset %llu:", (unsigned long long)off);
    CHECK(err && strstr(err, name) && strstr(err, where),
          "%s: the message names neither %s nor %s: %s", label, name, where, err ? err : "-");
    free(err);
    unlink(path);
    free(copy);
}

static void check_bad_weights(void)
{
    static const uint8_t nan32[4] = {0x00, 0x00, 0xc0, 0x7f}, inf32[4] = {0, 0, 0x80, 0xff};
    static const uint8_t inf16[2] = {0x00, 0x7c}, nan16[2] = {0x01, 0x7e};
    static const uint8_t big16[2] = {0xff, 0x7b}; /* 65504, the largest f16 */
    uint8_t *data;
    size_t size;
    gen_layout lay;
    if (build(0, &data, &size, &lay) == 0) {
        bad_weight(data, size, &lay, "encoder.blocks.1.attn.query.weight", 4 * 5, nan32, 4,
                   "element 5 is NaN", "f32 NaN weight");
        bad_weight(data, size, &lay, "decoder.ln.bias", 4 * 63, inf32, 4, "infinite",
                   "f32 -infinity");
        /* the mel filter bank is checked too */
        uint64_t mel = lay.mel_off + 8 + 4 * 300;
        memcpy(data + mel, nan32, 4);
        char path[512];
        snprintf(path, sizeof path, "%s/bad-mel.bin", g_dir);
        gen_write_file(path, data, size);
        free(expect_refusal(path, "mel filter value 300 is not finite", "NaN mel filter"));
        unlink(path);
        free(data);
        gen_layout_free(&lay);
    }
    if (build(1, &data, &size, &lay) == 0) {
        bad_weight(data, size, &lay, "decoder.token_embedding.weight", 2 * 1000, inf16, 2,
                   "infinite", "f16 infinity");
        bad_weight(data, size, &lay, "encoder.conv1.weight", 0, nan16, 2, "NaN", "f16 NaN");
        free(data);
        gen_layout_free(&lay);
    }
    /* q8_0 blocks: a scale of 65504 makes values up to 127 * 65504, finite in f32: a
     * legal, if odd, weight, kept in its blocks in an encoder matrix (dequantized a
     * layer at a time) and in a decoder matrix (computed in f32).  A NaN scale in a
     * kept decoder matrix is refused like any non-finite weight. */
    if (build(7, &data, &size, &lay) == 0) {
        bad_weight(data, size, &lay, "decoder.blocks.0.mlp.0.weight", 34 * 3, nan16, 2, "NaN",
                   "q8_0 NaN scale, kept blocks");
        int t = gen_layout_find(&lay, "encoder.blocks.0.mlp.0.weight");
        int td = gen_layout_find(&lay, "decoder.blocks.0.mlp.0.weight");
        if (t >= 0 && td >= 0) {
            uint64_t off = lay.tensors[t].data_off + 34 * 3;
            uint64_t offd = lay.tensors[td].data_off + 34 * 3;
            memcpy(data + off, big16, 2);
            memcpy(data + offd, big16, 2);
            int8_t q0 = (int8_t)data[off + 2];
            char path[512];
            snprintf(path, sizeof path, "%s/big-scale.bin", g_dir);
            gen_write_file(path, data, size);
            char *err = NULL;
            wkv_model *m = wkv_model_load(path, &err);
            CHECK(m != NULL, "q8_0 big scale: %s", err ? err : "?");
            const uint8_t *be = m ? blocks_for(m, "encoder.blocks.0.mlp.0.weight") : NULL;
            float w[32];
            if (be)
                wkv__row_to_f32(WKV_TYPE_Q8_0, be + 34 * 3, w, 32);
            CHECK(be && w[0] == (float)q0 * 65504.0f,
                  "q8_0 big scale: element %g, expected %g", be ? w[0] : 0.0,
                  (float)q0 * 65504.0f);
            const uint8_t *b = m ? blocks_for(m, "decoder.blocks.0.mlp.0.weight") : NULL;
            CHECK(b && memcmp(b, data + lay.tensors[td].data_off, lay.tensors[td].data_bytes) == 0,
                  "q8_0 big scale: the decoder matrix's blocks are not the file's");
            wkv_model_free(m);
            free(err);
            unlink(path);
        }
        free(data);
        gen_layout_free(&lay);
    }
}

/* ---------------------------------------------------------------- from memory */

/* memcmp of n bytes; an empty arena may be NULL (memcmp must not see NULL). */
static int same_bytes(const void *a, const void *b, size_t n)
{
    return n == 0 || (a && b && memcmp(a, b, n) == 0);
}

static void check_memory(void)
{
    uint8_t *data;
    size_t size;
    gen_layout lay;
    if (build(1, &data, &size, &lay))
        return;
    char path[512];
    snprintf(path, sizeof path, "%s/same.bin", g_dir);
    gen_write_file(path, data, size);
    char *err = NULL;
    wkv_model *a = wkv_model_load(path, &err);
    wkv_model *b = wkv_model_load_memory(data, size, &err);
    CHECK(a && b, "load from file / memory failed: %s", err ? err : "?");
    if (a && b) {
        CHECK(memcmp(wkv_model_hparams(a), wkv_model_hparams(b), sizeof(wkv_hparams)) == 0,
              "memory: hyper-parameters differ");
        CHECK(a->arena_floats == b->arena_floats && a->arena16_halves == b->arena16_halves &&
                  a->arenaq_bytes == b->arenaq_bytes &&
                  same_bytes(a->arena, b->arena, a->arena_floats * sizeof(float)) &&
                  same_bytes(a->arena16, b->arena16, a->arena16_halves * 2) &&
                  same_bytes(a->arenaq, b->arenaq, a->arenaq_bytes),
              "memory: weights differ from the file's");
        size_t la, lb;
        const char *ta = wkv_token_bytes(a, 50300, &la), *tb = wkv_token_bytes(b, 50300, &lb);
        CHECK(ta && tb && la == lb && memcmp(ta, tb, la) == 0, "memory: token 50300 differs");
    }
    wkv_model_free(a);
    wkv_model_free(b);
    free(err);
    err = NULL;
    /* the caller's buffer is not kept: a model loaded from a copy survives its free */
    uint8_t *copy = malloc(size);
    memcpy(copy, data, size);
    b = wkv_model_load_memory(copy, size, NULL);
    memset(copy, 0xa5, size);
    free(copy);
    size_t len;
    const char *t0 = b ? wkv_token_bytes(b, 0, &len) : NULL;
    CHECK(t0 && len == 1 && t0[0] == '!', "memory: token 0 after the buffer was freed");
    wkv_model_free(b);
    /* errors name "(memory)" and an offset */
    b = wkv_model_load_memory(data, size / 2, &err);
    CHECK(!b && err && strncmp(err, "(memory): offset ", 17) == 0, "memory: truncated: %s",
          err ? err : "-");
    free(err);
    err = NULL;
    b = wkv_model_load_memory(NULL, 0, &err);
    CHECK(!b && err && strstr(err, "(memory): offset 0:"), "memory: empty: %s", err ? err : "-");
    free(err);
    err = NULL;
    b = wkv_model_load_memory(NULL, 10, &err);
    CHECK(!b && err && strstr(err, "no data"), "memory: NULL data: %s", err ? err : "-");
    free(err);
    unlink(path);
    free(data);
    gen_layout_free(&lay);
}

void check_limits(const char *dir)
{
    g_dir = dir;
    check_not_files();
    check_huge();
    check_bad_weights();
    check_memory();
}
