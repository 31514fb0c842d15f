/* The element-wise and matrix helpers every network stage uses. */
#ifndef WKV_OPS_H
#define WKV_OPS_H

#include <stddef.h>

/* y[r] = LayerNorm(x[r]) * w + b for `rows` rows of `n` (eps 1e-5). y may be x. */
void wkv_layer_norm(const float *x, float *y, int rows, int n, const float *w,
                    const float *b);
/* Exact erf GELU, in place. */
void wkv_gelu(float *x, size_t n);
/* Numerically stable softmax of one row, in place. */
void wkv_softmax(float *x, int n);
/* y (rows x out) = x (rows x in) . W^T (W is out x in, PyTorch layout) [+ bias]. */
void wkv_linear(const float *x, int rows, int in, const float *w, const float *bias,
                int out, float *y);
/* Same, accumulating: y += x . W^T [+ bias]. */
void wkv_linear_add(const float *x, int rows, int in, const float *w, const float *bias,
                    int out, float *y);

#endif
