/* The tensor types a model file may store, one row each in wkv__qtype_of's table below:
 * f32, f16 and ggml's block quantization as whisper.cpp writes it (quantization
 * version 2: f16 block scales).  Everything that depends on the type (the loader's
 * checks and messages, byte sizes, widening to f32, the quantized kernels' block
 * layout) reads this table, so the types are listed once.
 *
 * Adding a quantization type touches:
 *   - model/quant.h: its WKV_TYPE_* number (and WKV_TYPE_MAX if it is the largest), its
 *     table row, its wkv__to_f32_<name> declaration;
 *   - model/quant.c: wkv__to_f32_<name>, one line calling blocks_to_f32 if its block is
 *     of the q4/q5/q8 kind (f16 scale first; 4-, 5- or 8-bit codes; an optional f16
 *     minimum and u32 of fifth bits), else a decoder of its own;
 *   - kernels/gemv_q.c: its case in BY_TYPE (the kernels are instantiated per type so
 *     that the layout folds), and kernel code if its block is not of that kind;
 *   - tests/genlib.c: its row in the generator's own FTYPES table and its quantizer in
 *     gen_quantize_block (kept apart from the core's on purpose: test_quant checks that
 *     the two tables agree);
 *   - tests/test_quant.c: its case with a measured tolerance, and check_tables' list
 *     of names;
 *   - the places that cannot read this table and spell the types out (check_tables'
 *     list tells when): the element's "model" blurb (gst-plugin/gstwhisperprops.c),
 *     tools/outputs.sh, the docs (README.md, docs/element.md, wkv_model_load's comment
 *     in include/whisperkv.h).
 * The rest follows the tables: the loader's checks and messages (model/ggml_file.c,
 * ggml_tensors.c), byte sizes, conversion to f32 (wkv__row_to_f32: the loader, widen.c,
 * weights.c, decoder.c, compute.c, vad_model.c), test_gemv_q (every block type of the
 * table), test_loader; from genlib's: the generator's usage lines, the fuzz corpus
 * (fuzz/gen_corpus.c) and the bench's bytes per weight.
 *
 * The block types pack 32 consecutive elements along ne[0] into one block:
 *   q4_0 (type 2): f16 d, 16 bytes of nibbles            x = (q - 8) * d      18 bytes
 *   q4_1 (type 3): f16 d, f16 m, 16 bytes of nibbles     x = q * d + m        20 bytes
 *   q5_0 (type 6): f16 d, u32 high bits, 16 bytes         x = (q - 16) * d     22 bytes
 *   q5_1 (type 7): f16 d, f16 m, u32 high bits, 16 bytes  x = q * d + m        24 bytes
 *   q8_0 (type 8): f16 d, 32 signed bytes                 x = q * d            34 bytes
 * The low nibble of byte j is element j, the high nibble element j + 16; for the 5-bit
 * types bit j of the (little-endian) u32 is the fifth bit of element j (j < 32). */
#ifndef WKV_QUANT_H
#define WKV_QUANT_H

#include <stddef.h>
#include <stdint.h>

#define WKV_QK 32 /* elements per block of the block types */

/* ggml tensor type numbers (the `type` field of a tensor header); 4 and 5 were
 * ggml's q4_2 and q4_3, long gone. */
enum {
    WKV_TYPE_F32 = 0,
    WKV_TYPE_F16 = 1,
    WKV_TYPE_Q4_0 = 2,
    WKV_TYPE_Q4_1 = 3,
    WKV_TYPE_Q5_0 = 6,
    WKV_TYPE_Q5_1 = 7,
    WKV_TYPE_Q8_0 = 8,
    WKV_TYPE_MAX = 8 /* the largest number in the table */
};

/* The quantization version (ftype / 1000) whose block layout this file decodes. */
#define WKV_QNT_VERSION 2

/* n elements (whole blocks) stored at src, any alignment, to floats. */
typedef void wkv__to_f32_fn(const uint8_t *src, float *dst, size_t n);

typedef struct {
    int type;              /* ggml tensor type number */
    const char *name;      /* "q4_0": in messages */
    int ftype;             /* the file ftype (ftype % 1000) of a model of this type */
    int block_elems;       /* elements per block: WKV_QK, or 1 (f32, f16) */
    int block_bytes;
    wkv__to_f32_fn *to_f32; /* through wkv__row_to_f32, which checks the call */
    /* The block's layout, for blocks_to_f32 and kernels/gemv_q.c: the f16 scale d at
     * byte 0, codes of code_bits bits (0: f32/f16, no block; 4 or 5: nibbles, 8: signed
     * bytes) at qs, the u32 of fifth bits at qh and the f16 minimum m at m (-1: none);
     * x = (q + off) * d (+ m). */
    int code_bits, qs, qh, m, off;
} wkv__qtype;

wkv__to_f32_fn wkv__to_f32_f32, wkv__to_f32_f16, wkv__to_f32_q4_0, wkv__to_f32_q4_1,
    wkv__to_f32_q5_0, wkv__to_f32_q5_1, wkv__to_f32_q8_0;

/* The table row of ggml tensor type `type`, or NULL for a type the project does not
 * handle.  Inline, indexed by the type number: with a constant type the compiler folds
 * the row's fields, which the quantized kernels are instantiated on.  So each file has
 * its own copy of the table: compare rows by their type, never by address. */
/* one row: its WKV_TYPE_* number is its index and its type field */
#define WKV_QROW(T, ...) [WKV_TYPE_##T] = {WKV_TYPE_##T, __VA_ARGS__}
static inline const wkv__qtype *wkv__qtype_of(int type)
{
    static const wkv__qtype rows[WKV_TYPE_MAX + 1] = {
        /*       type  name    ftype  elems   bytes to_f32           bits qs  qh  m   off */
        WKV_QROW(F32,  "f32",  0,     1,      4,   wkv__to_f32_f32,   0,  -1, -1, -1,   0),
        WKV_QROW(F16,  "f16",  1,     1,      2,   wkv__to_f32_f16,   0,  -1, -1, -1,   0),
        WKV_QROW(Q4_0, "q4_0", 2,     WKV_QK, 18,  wkv__to_f32_q4_0,  4,  2,  -1, -1,  -8),
        WKV_QROW(Q4_1, "q4_1", 3,     WKV_QK, 20,  wkv__to_f32_q4_1,  4,  4,  -1, 2,    0),
        WKV_QROW(Q5_0, "q5_0", 8,     WKV_QK, 22,  wkv__to_f32_q5_0,  5,  6,  2,  -1, -16),
        WKV_QROW(Q5_1, "q5_1", 9,     WKV_QK, 24,  wkv__to_f32_q5_1,  5,  8,  4,  2,    0),
        WKV_QROW(Q8_0, "q8_0", 7,     WKV_QK, 34,  wkv__to_f32_q8_0,  8,  2,  -1, -1,   0),
    };
    if (type < 0 || type > WKV_TYPE_MAX || !rows[type].name)
        return NULL;
    return &rows[type];
}
#undef WKV_QROW

/* The row of `type`; a type outside the table aborts with a message naming `who`.
 * For paths past the loader, which refuses such files: reaching one is a bug. */
const wkv__qtype *wkv__qtype_must(int type, const char *who);
/* The row whose file ftype (ftype % 1000) is `ftype`, or NULL. */
const wkv__qtype *wkv__qtype_of_ftype(int ftype);

/* Bytes of one block of a block (quantized) type; 0 for f32, f16 and unknown types. */
size_t wkv__quant_block_bytes(int type);
/* "q4_0", "f16", ...; NULL for an unknown type. */
const char *wkv__quant_type_name(int type);
/* Bytes of the first n elements of a tensor of `type`: n rounded down to whole blocks,
 * so also the offset of element n's block.  `type` must be in the table. */
size_t wkv__type_bytes(int type, size_t n);

/* Stored data to f32, for every stored type: n elements (whole blocks) at src, any
 * alignment (the file's bytes, little-endian), into dst.  f16 goes through the CPU's
 * conversion instructions (wkv__f16_to_f32_row).  An unknown type or a partial block
 * aborts. */
void wkv__row_to_f32(int type, const void *src, float *dst, size_t n);

/* The table's types for messages, into buf (returned), truncated to cap: */
enum {
    WKV_QLIST_NAMES,  /* "f32, f16, q4_0, q4_1, q5_0, q5_1 or q8_0" */
    WKV_QLIST_TYPES,  /* "0 = f32, 1 = f16, 2 = q4_0, ... or 8 = q8_0" (type numbers) */
    WKV_QLIST_FTYPES, /* "0 = f32, 1 = f16, 2 = q4_0, 3 = q4_1, 7 = q8_0, ..." (ftypes) */
};
char *wkv__qtype_list(char *buf, size_t cap, int how);

#endif
