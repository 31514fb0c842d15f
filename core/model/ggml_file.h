/* The whisper.cpp ggml file as the loader sees it (ggml_file.c, ggml_tensors.c):
 * a reader whose every read is bounds-checked and whose messages name the byte
 * offset, the parts before the tensors, and the record of each tensor a model needs.
 * model.c builds the model from them.
 *
 * Files are read (pread), never mapped: a mapped page past a new end of file is a
 * SIGBUS, so a model file truncated while it loads killed the process; read, it is an
 * error.  The weights go from the file straight into their arenas, a chunk at a time,
 * so the load's peak stays the arenas (the page cache is not the process's). */
#ifndef WKV_GGML_FILE_H
#define WKV_GGML_FILE_H

#include "model/model.h"

#include <stddef.h>
#include <stdint.h>

#define WKV_MAX_NAME_LEN 255 /* of a tensor name */

/* ---------------------------------------------------------------- reading */

/* A model file (or a memory image) being parsed; `path` heads every message. */
typedef struct {
    const uint8_t *p;  /* a memory image (wkv_model_load_memory), or NULL: read fd */
    uint64_t size;     /* at open */
    uint64_t off;
    const char *path;
    char **error;
    int fd;            /* the file, or -1 */
    uint8_t *win;      /* fd: bytes [win_off, win_off + win_len) of the file */
    uint64_t win_off;
    size_t win_len, win_cap;
} wkv__reader;

/* Opens a regular file (a FIFO, a directory, an empty or huge file are refused with
 * a message) into r; 0 or -1.  wkv__reader_memory: a reader over bytes in memory.
 * wkv__reader_close frees what either holds (not the memory image). */
int wkv__reader_open(wkv__reader *r, const char *path, char **error);
void wkv__reader_memory(wkv__reader *r, const void *data, uint64_t size, const char *name,
                        char **error);
void wkv__reader_close(wkv__reader *r);
/* Bytes [off, off + n) of the file, which the caller bounds-checked (wkv__need):
 * valid until the reader's next call.  NULL with a message when the file no longer
 * holds them (it shrank, or an I/O error). */
const uint8_t *wkv__at(wkv__reader *r, uint64_t off, size_t n);
/* Copies bytes [off, off + n) into dst (a file's straight from the file); 0 or -1. */
int wkv__read_into(wkv__reader *r, uint64_t off, void *dst, size_t n);

/* "<path>: offset <N>: <message>" into *r->error. */
void wkv__fail(wkv__reader *r, uint64_t off, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Checks that n more bytes are in the file (else fails, naming `what`). */
int wkv__need(wkv__reader *r, uint64_t n, const char *what);
/* Little-endian 32-bit values at r->off, which they advance; 0 or -1. */
int wkv__rd_u32(wkv__reader *r, uint32_t *v, const char *what);
int wkv__rd_i32(wkv__reader *r, int32_t *v, const char *what);

static inline uint64_t wkv__left(const wkv__reader *r)
{
    return r->size - r->off;
}

static inline uint32_t wkv__ld_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

static inline uint16_t wkv__ld_u16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

/* Index of the first value that is not below `limit` in magnitude (NaN included),
 * or n. */
size_t wkv__first_out_of_range(const float *x, size_t n, float limit);

/* ---------------------------------------------------------------- before the tensors */

/* Each reads its part at r->off, checks it and fails with a message; 0 or -1. */
int wkv__read_magic(wkv__reader *r);
int wkv__read_hparams(wkv__reader *r, wkv_hparams *hp);
int wkv__read_mel_filters(wkv__reader *r, wkv_model *m);   /* into m->mel_filters */
int wkv__read_vocab(wkv__reader *r, wkv_model *m);         /* into m->tok_* */

/* ---------------------------------------------------------------- tensors */

typedef struct wkv__tensor_def wkv__tensor_def; /* name and shape (ggml_tensors.c) */

/* One expected tensor and what the first pass found about it. */
typedef struct {
    const wkv__tensor_def *def;
    size_t slot;        /* offsetof in wkv__weights (globals) or wkv__layer (blocks) */
    size_t mat;         /* offsetof its typed view (decoder matrices), or 0 */
    int layer;          /* -1 for globals */
    int is_dec;         /* block of the decoder */
    int nd;             /* expected PyTorch dims */
    int64_t dims[3];
    size_t count;       /* elements */
    int seen;
    int type;           /* a WKV_TYPE_* of quant.h's table */
    uint64_t hdr_off, data_off;
} wkv__tensor_rec;

typedef struct {
    wkv__tensor_rec *e;
    int n;
    int n_audio_layer, n_text_layer;
    int qnt_version;    /* ftype / 1000 of the file */
} wkv__tensor_set;

/* The records of every tensor a model of these hyper-parameters needs, in arena
 * order (ts->e is malloc'd); 0, or -1 when out of memory. */
int wkv__tensor_set_init(wkv__tensor_set *ts, const wkv_hparams *hp);
/* "decoder.blocks.3.attn.query.weight" */
void wkv__tensor_name(const wkv__tensor_rec *x, char *buf, size_t cap);
/* First pass: every tensor header until the end of the file, checked and recorded
 * in ts; fails on anything wrong or missing.  0 or -1. */
int wkv__scan_tensors(wkv__reader *r, wkv__tensor_set *ts);

#endif
