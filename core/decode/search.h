/* What a window's searches (search.c) share with the batched one (batch.c). */
#ifndef WKV_SEARCH_H
#define WKV_SEARCH_H

#include "whisperkv.h"

/* A window's initial tokens into out (room for n_text_ctx): [startofprev, the last
 * n_text_ctx/2 - 1 prompt tokens,] sot [, language, task] [, notimestamps].  Returns
 * their number with sot's position in *sot_index, or -1 with a message. */
int wkv__initial_tokens(const wkv_model *m, const int *prompt, int n_prompt,
                        const wkv_options *o, int *out, int *sot_index, char **error);

/* wkv_decode_window with a draft (greedy only; sampling and beam search ignore it): the
 * tokens the window is expected to give, checked in one pass (search.c greedy()); the
 * result is wkv_decode_window's.  Off when the context's drafts are
 * (wkv_debug_set_drafts). */
int wkv__decode_window_draft(wkv_context *ctx, const int *prompt, int n_prompt,
                             const int *draft, int n_draft, const wkv_options *o,
                             wkv_window_result *res, char **error);

/* wkv__decode_window_draft with a forced prefix (the reference decoder's `prefix`):
 * tokens that follow the start sequence as given, the sampling after them (the
 * result holds only the sampled tokens).  An error when it does not fit. */
int wkv__decode_window_prefix(wkv_context *ctx, const int *prompt, int n_prompt,
                              const int *prefix, int n_prefix, const int *draft, int n_draft,
                              const wkv_options *o, wkv_window_result *res, char **error);

#endif
