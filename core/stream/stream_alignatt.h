/* The live stream's AlignAtt stop rule (stream_alignatt.c).  Not installed. */
#ifndef WKV_STREAM_ALIGNATT_H
#define WKV_STREAM_ALIGNATT_H

typedef struct {
    int stop;       /* the first text token at the threshold (n_text: none) */
    int rewind;     /* the attention jumped back more than 4 s: stop is skip */
} wkv__alignatt;

/* The stop rule over an alignment pass's matrix (align.c's, at least n_text rows of
 * `frames` columns, row i the attention of the step that chose text token i; the word
 * pass's, wkv__run_words.attn): the first token from `skip` on (the forced prefix is
 * not looked at) whose most attended frame f has frames - f <= threshold stops; a
 * frame more than 200 (4 s) before the previous token's is a rewind. */
void wkv__alignatt_scan(const float *a, int n_text, int frames, int skip, int threshold,
                        wkv__alignatt *out);

/* The words to commit: those before the word holding the stop token (words k's tokens
 * are [tok_off[k], tok_off[k + 1]), counted from the first token after the prefix; at
 * the end the stop's word too; none after a rewind.  When nothing stops before the
 * last word (the decoder ended the text), that word waits unless `last_seen` (the
 * previous run left the same words uncommitted, through it) or at the end. */
int wkv__alignatt_words(const int *tok_off, int n_words, const wkv__alignatt *aa, int at_end,
                        int last_seen);

#endif
