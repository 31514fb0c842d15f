/* The reference's logit filters and scores (decoding.py): SuppressBlank,
 * SuppressTokens, ApplyTimestampRules, log-probabilities, no-speech probability,
 * compression ratio. */
#ifndef WKV_RULES_H
#define WKV_RULES_H

#include "whisperkv_debug.h"

typedef struct {
    int sample_begin;          /* for the caller: where sampling started */
    int timestamps;            /* apply the timestamp rules */
    int max_initial_ts_index;  /* latest allowed first timestamp, in 0.02-s steps; <0: none */
    int suppress_blank;
    int max_ts_index;          /* the latest timestamp, in 0.02-s steps: the encoded frames'
                                * end under wkv_options.audio_ctx; <0: none (set by the
                                * caller after init, from the window's cross cache) */
} wkv__rules;

/* The filters a window's search applies, from its options: SuppressBlank always,
 * the timestamp rules unless opts->timestamps is 0, the first timestamp at most
 * round(max_initial_timestamp / 0.02) steps (the reference's max_initial_timestamp_index). */
void wkv__rules_init(wkv__rules *r, const wkv_options *opts, int sample_begin);
/* Filters logits (n_vocab) in place given the tokens sampled so far in this window
 * (after sample_begin). */
void wkv__rules_apply(const wkv_model *m, const wkv__rules *r, const int *sampled,
                     int n_sampled, float *logits);
/* The index of the largest of logits[0..n) (n >= 1; the first of equal maxima; NaN
 * skipped; 0 if none is above -inf) and in *margin its excess over the largest of
 * the others: what one scan with > finds. */
int wkv__argmax2(const float *x, int n, float *margin);
/* log_softmax(logits)[token], computed in double. */
double wkv__logprob(const float *logits, int n, int token);
/* softmax(logits)[token]. */
double wkv__prob(const float *logits, int n, int token);
/* len(utf8) / len(zlib.compress(utf8)); 0 for empty text. */
double wkv__compression_ratio(const char *text);

#endif
