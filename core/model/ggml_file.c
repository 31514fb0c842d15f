/* The whisper.cpp ggml file (little-endian, no padding, as whisper.cpp's
 * models/convert-pt-to-ggml.py writes it and whisper_model_load reads it) as the
 * loader reads it: the file read through a window (never mapped: ggml_file.h says why),
 * bounds-checked reads whose messages name the byte offset of anything wrong, and the parts before the tensors (magic,
 * hyper-parameters, mel filter bank, vocabulary), each checked against the limits
 * below before it is used.  Only regular files are opened (a FIFO would block).  The
 * tensors are ggml_tensors.c's, the model built from them model.c's. */
#include "model/ggml_file.h"
#include "base/util.h"
#include "model/quant.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define GGML_MAGIC 0x67676d6cu
#define GGUF_MAGIC 0x46554747u /* "GGUF" */
#define MAX_TOKEN_LEN 1024u
#define MAX_STATE 8192
#define MAX_LAYERS 64
#define MEL_BINS 201 /* n_fft / 2 + 1 */
#define WINDOW (16u << 10) /* bytes read at a time for the small reads */
#define MAX_QNT_VERSION 99 /* "a small version": f32/f16 files may carry any */

/* ---------------------------------------------------------------- byte access */

/* Index of the first value that is not below `limit` in magnitude (NaN included),
 * or n.  Branch-free blocks so the common all-good case vectorizes. */
size_t wkv__first_out_of_range(const float *x, size_t n, float limit)
{
    for (size_t b = 0; b < n; b += 256) {
        size_t e = n - b < 256 ? n : b + 256;
        int bad = 0;
        for (size_t i = b; i < e; i++)
            bad |= !(fabsf(x[i]) < limit);
        if (bad)
            for (size_t i = b; i < e; i++)
                if (!(fabsf(x[i]) < limit))
                    return i;
    }
    return n;
}

/* ---------------------------------------------------------------- reader */

/* "<path>: offset <N>: <message>" */
void wkv__fail(wkv__reader *r, uint64_t off, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    wkv__set_error(r->error, "%s: offset %" PRIu64 ": %s", r->path, off, msg);
}

/* Checks that n more bytes are in the file. */
int wkv__need(wkv__reader *r, uint64_t n, const char *what)
{
    if (wkv__left(r) >= n)
        return 0;
    wkv__fail(r, r->off, "unexpected end of file in %s: needs %" PRIu64 " bytes, %" PRIu64
                        " left (truncated file?)",
             what, n, wkv__left(r));
    return -1;
}

/* The file ended before `want` bytes at `off` (it shrank since it was opened), or
 * an I/O error (err). */
static void changed(wkv__reader *r, uint64_t off, uint64_t want, int err)
{
    if (err)
        wkv__fail(r, off, "read error: %s", strerror(err));
    else
        wkv__fail(r, off, "the file ends before the %" PRIu64 " bytes it had when opened "
                          "(truncated or replaced while loading?)", want);
}

/* pread until n bytes are in or the file ends; the count read, or -1 (errno). */
static int64_t pread_full(int fd, void *dst, size_t n, uint64_t off)
{
    size_t got = 0;
    while (got < n) {
        ssize_t k = pread(fd, (uint8_t *)dst + got, n - got, (off_t)(off + got));
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return -1;
        if (k == 0)
            break;
        got += (size_t)k;
    }
    return (int64_t)got;
}

const uint8_t *wkv__at(wkv__reader *r, uint64_t off, size_t n)
{
    if (r->p)
        return r->p + off;
    if (off >= r->win_off && off + n <= r->win_off + r->win_len)
        return r->win + (off - r->win_off);
    /* a window from off: at least n bytes, WINDOW for the many small reads */
    uint64_t left = r->size > off ? r->size - off : 0;
    size_t want = left < WINDOW ? (size_t)left : WINDOW;
    if (want < n)
        want = n;
    if (want > r->win_cap) {
        uint8_t *w = wkv__realloc(r->win, want);
        if (!w) {
            wkv__fail(r, off, "out of memory reading %zu bytes", want);
            return NULL;
        }
        r->win = w;
        r->win_cap = want;
    }
    r->win_len = 0;
    int64_t got = pread_full(r->fd, r->win, want, off);
    if (got < (int64_t)n) {
        changed(r, off, r->size, got < 0 ? errno : 0);
        return NULL;
    }
    r->win_off = off;
    r->win_len = (size_t)got;
    return r->win;
}

int wkv__read_into(wkv__reader *r, uint64_t off, void *dst, size_t n)
{
    if (r->p) {
        memcpy(dst, r->p + off, n);
        return 0;
    }
    int64_t got = pread_full(r->fd, dst, n, off);
    if (got == (int64_t)n)
        return 0;
    changed(r, off, r->size, got < 0 ? errno : 0);
    return -1;
}

int wkv__rd_u32(wkv__reader *r, uint32_t *v, const char *what)
{
    if (wkv__need(r, 4, what))
        return -1;
    const uint8_t *q = wkv__at(r, r->off, 4);
    if (!q)
        return -1;
    *v = wkv__ld_u32(q);
    r->off += 4;
    return 0;
}

int wkv__rd_i32(wkv__reader *r, int32_t *v, const char *what)
{
    uint32_t u;
    if (wkv__rd_u32(r, &u, what))
        return -1;
    *v = (int32_t)u;
    return 0;
}

/* ---------------------------------------------------------------- the file */

void wkv__reader_memory(wkv__reader *r, const void *data, uint64_t size, const char *name,
                        char **error)
{
    memset(r, 0, sizeof *r);
    r->p = data;
    r->size = size;
    r->path = name;
    r->error = error;
    r->fd = -1;
}

void wkv__reader_close(wkv__reader *r)
{
    if (r->fd >= 0)
        close(r->fd);
    wkv__free(r->win);
    r->fd = -1;
    r->win = NULL;
    r->win_len = r->win_cap = 0;
}

int wkv__reader_open(wkv__reader *r, const char *path, char **error)
{
    memset(r, 0, sizeof *r);
    r->fd = -1;
    r->path = path;
    r->error = error;
    /* O_NONBLOCK: opening a FIFO with no writer would otherwise wait forever; the
     * fstat below then refuses anything but a regular file (for which the flag has
     * no effect) */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        wkv__set_error(error, "%s: offset 0: cannot open the model file: %s", path,
                      strerror(errno));
        return -1;
    }
    struct stat st;
    const char *why = NULL;
    const int stat_failed = fstat(fd, &st) != 0;
    if (stat_failed)
        why = strerror(errno);
    else if (S_ISDIR(st.st_mode))
        why = "is a directory, not a model file";
    else if (!S_ISREG(st.st_mode))
        why = "not a regular file";
    else if (st.st_size <= 0)
        why = "the file is empty";
    else if ((uint64_t)st.st_size > (uint64_t)SIZE_MAX / 2)
        why = "the file is too large";
    if (why) {
        wkv__set_error(error, "%s: offset 0: %s%s", path,
                      stat_failed ? "cannot stat the model file: " : "", why);
        close(fd);
        return -1;
    }
#ifdef POSIX_FADV_SEQUENTIAL
    posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL); /* a hint: read ahead */
#endif
    r->fd = fd;
    r->size = (uint64_t)st.st_size;
    return 0;
}

/* ---------------------------------------------------------------- header */

/* The magic number: a ggml file, or a message saying what the file is. */
int wkv__read_magic(wkv__reader *r)
{
    uint32_t magic;
    if (wkv__rd_u32(r, &magic, "the magic number"))
        return -1;
    if (magic != GGML_MAGIC) {
        if (magic == GGUF_MAGIC)
            wkv__fail(r, 0, "this is a GGUF file; only the whisper.cpp ggml format "
                           "(magic 0x67676d6c) is supported");
        else
            wkv__fail(r, 0, "bad magic 0x%08" PRIx32 ", expected 0x67676d6c: not a "
                           "whisper.cpp ggml model file", magic);
        return -1;
    }
    return 0;
}

int wkv__read_hparams(wkv__reader *r, wkv_hparams *hp)
{
    static const char *const names[11] = {
        "n_vocab", "n_audio_ctx", "n_audio_state", "n_audio_head", "n_audio_layer",
        "n_text_ctx", "n_text_state", "n_text_head", "n_text_layer", "n_mels", "ftype",
    };
    int32_t v[11];
    for (int i = 0; i < 11; i++) {
        uint64_t at = r->off;
        char what[64];
        snprintf(what, sizeof what, "the header (%s)", names[i]);
        if (wkv__rd_i32(r, &v[i], what))
            return -1;
        int32_t x = v[i];
        switch (i) {
        case 0:
            if (x != 51864 && x != 51865 && x != 51866) {
                wkv__fail(r, at, "n_vocab is %" PRId32 ", expected 51864 (English-only), "
                                "51865 (multilingual) or 51866 (large-v3)", x);
                return -1;
            }
            break;
        case 1:
            if (x < 1 || x > 1500) {
                wkv__fail(r, at, "n_audio_ctx is %" PRId32 ", expected 1..1500", x);
                return -1;
            }
            break;
        case 2:
            if (x < 1 || x > MAX_STATE) {
                wkv__fail(r, at, "n_audio_state is %" PRId32 ", expected 1..%d", x, MAX_STATE);
                return -1;
            }
            break;
        case 3:
        case 7:
            if (x < 1 || x > v[2] || v[2] % x != 0) {
                wkv__fail(r, at, "%s is %" PRId32 ", expected a positive divisor of the state "
                                "size %" PRId32, names[i], x, v[2]);
                return -1;
            }
            break;
        case 4:
        case 8:
            if (x < 1 || x > MAX_LAYERS) {
                wkv__fail(r, at, "%s is %" PRId32 ", expected 1..%d", names[i], x, MAX_LAYERS);
                return -1;
            }
            break;
        case 5:
            if (x < 1 || x > 448) {
                wkv__fail(r, at, "n_text_ctx is %" PRId32 ", expected 1..448", x);
                return -1;
            }
            break;
        case 6:
            if (x != v[2]) {
                wkv__fail(r, at, "n_text_state is %" PRId32 ", expected n_audio_state (%" PRId32
                                ")", x, v[2]);
                return -1;
            }
            break;
        case 9:
            if (x != 80 && x != 128) {
                wkv__fail(r, at, "n_mels is %" PRId32 ", expected 80 or 128", x);
                return -1;
            }
            break;
        case 10: {
            /* ftype % 1000 is the weight type, ftype / 1000 the quantization version
             * (whisper.cpp writes 2000 + type since the f16-scale block layout) */
            int t = x >= 0 ? x % 1000 : -1, ver = x >= 0 ? x / 1000 : -1;
            const wkv__qtype *q = t >= 0 ? wkv__qtype_of_ftype(t) : NULL;
            char types[160];
            if (t < 0 || ver > MAX_QNT_VERSION) {
                wkv__fail(r, at, "unknown ftype %" PRId32 " (expected version * 1000 + type, "
                                "type %s)", x,
                         wkv__qtype_list(types, sizeof types, WKV_QLIST_FTYPES));
                return -1;
            }
            if (!q) {
                wkv__fail(r, at, "unknown ftype %" PRId32 " (type %d; expected %s)", x, t,
                         wkv__qtype_list(types, sizeof types, WKV_QLIST_FTYPES));
                return -1;
            }
            if (q->block_elems == 1) /* f32, f16: no blocks, any version */
                break;
            if (ver != WKV_QNT_VERSION) {
                wkv__fail(r, at, "ftype %" PRId32 ": a %s model of quantization version %d; only "
                                "version %d (f16 block scales, whisper.cpp since May 2023) is "
                                "supported: quantize the f16 model again with a current "
                                "whisper.cpp", x, q->name, ver, WKV_QNT_VERSION);
                return -1;
            }
            break;
        }
        }
    }
    hp->n_vocab = v[0];
    hp->n_audio_ctx = v[1];
    hp->n_audio_state = v[2];
    hp->n_audio_head = v[3];
    hp->n_audio_layer = v[4];
    hp->n_text_ctx = v[5];
    hp->n_text_state = v[6];
    hp->n_text_head = v[7];
    hp->n_text_layer = v[8];
    hp->n_mels = v[9];
    hp->ftype = v[10];
    return 0;
}

int wkv__read_mel_filters(wkv__reader *r, wkv_model *m)
{
    int32_t n_mel, n_fft;
    uint64_t at = r->off;
    if (wkv__rd_i32(r, &n_mel, "the mel filter header (n_mel)"))
        return -1;
    if (n_mel != m->hp.n_mels) {
        wkv__fail(r, at, "the mel filter bank has %" PRId32 " bands, expected n_mels = %" PRId32,
                 n_mel, m->hp.n_mels);
        return -1;
    }
    at = r->off;
    if (wkv__rd_i32(r, &n_fft, "the mel filter header (n_fft)"))
        return -1;
    if (n_fft != MEL_BINS) {
        wkv__fail(r, at, "the mel filter bank has %" PRId32 " frequency bins, expected %d", n_fft,
                 MEL_BINS);
        return -1;
    }
    size_t n = (size_t)n_mel * MEL_BINS;
    if (wkv__need(r, (uint64_t)n * 4, "the mel filter bank"))
        return -1;
    m->mel_filters = wkv__malloc(n * sizeof *m->mel_filters);
    if (!m->mel_filters) {
        wkv__fail(r, r->off, "out of memory");
        return -1;
    }
    const uint8_t *q = wkv__at(r, r->off, n * 4);
    if (!q)
        return -1;
    wkv__row_to_f32(WKV_TYPE_F32, q, m->mel_filters, n);
    size_t bad = wkv__first_out_of_range(m->mel_filters, n, INFINITY);
    if (bad < n) {
        wkv__fail(r, r->off + 4 * (uint64_t)bad, "mel filter value %zu is not finite", bad);
        return -1;
    }
    r->off += (uint64_t)n * 4;
    return 0;
}

int wkv__read_vocab(wkv__reader *r, wkv_model *m)
{
    int32_t n;
    uint64_t at = r->off;
    if (wkv__rd_i32(r, &n, "the vocabulary size"))
        return -1;
    if (n < 1 || n > m->hp.n_vocab) {
        wkv__fail(r, at, "the vocabulary has %" PRId32 " tokens, expected 1..n_vocab (%" PRId32
                        ")", n, m->hp.n_vocab);
        return -1;
    }
    /* first pass: bounds and the total size */
    uint64_t start = r->off, total = 0;
    char what[64];
    for (int32_t i = 0; i < n; i++) {
        uint32_t len;
        at = r->off;
        if (wkv__left(r) < 4) { /* the message is only formatted when needed */
            snprintf(what, sizeof what, "the length of token %" PRId32, i);
            return wkv__need(r, 4, what);
        }
        const uint8_t *q = wkv__at(r, r->off, 4);
        if (!q)
            return -1;
        len = wkv__ld_u32(q);
        r->off += 4;
        if (len > MAX_TOKEN_LEN) {
            wkv__fail(r, at, "token %" PRId32 " has length %" PRIu32 " (at most %u)", i, len,
                     MAX_TOKEN_LEN);
            return -1;
        }
        if (wkv__left(r) < len) {
            snprintf(what, sizeof what, "the bytes of token %" PRId32, i);
            return wkv__need(r, len, what);
        }
        r->off += len;
        total += (uint64_t)len + 1;
    }
    /* second pass: copy; every token is followed by a NUL that tok_len excludes */
    m->tok_off = wkv__malloc((size_t)n * sizeof *m->tok_off);
    m->tok_len = wkv__malloc((size_t)n * sizeof *m->tok_len);
    m->tok_bytes = wkv__malloc((size_t)total);
    if (!m->tok_off || !m->tok_len || !m->tok_bytes) {
        wkv__fail(r, start, "out of memory for the vocabulary");
        return -1;
    }
    uint64_t p = start;
    uint32_t pos = 0;
    for (int32_t i = 0; i < n; i++) {
        const uint8_t *q = wkv__at(r, p, 4);
        uint32_t len = q ? wkv__ld_u32(q) : 0;
        /* the file may have changed since the first pass: what it holds now must still
         * fit what was counted */
        if (!q || len > MAX_TOKEN_LEN || pos + (uint64_t)len + 1 > total ||
            !(q = wkv__at(r, p + 4, len))) {
            if (q)
                wkv__fail(r, p, "the vocabulary changed while being read");
            return -1;
        }
        p += 4;
        m->tok_off[i] = pos;
        m->tok_len[i] = len;
        memcpy(m->tok_bytes + pos, q, len);
        m->tok_bytes[pos + len] = 0;
        pos += len + 1;
        p += len;
    }
    m->n_tokens = n;
    return 0;
}
