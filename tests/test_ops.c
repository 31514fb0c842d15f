/* ops: wkv__softmax_exp (core/kernels/ops.c) against a double reference, in the
 * clone the CPU picks (suite isa runs it again under an AVX2 and an SSE CPU).  Its
 * maximum comes from wkv__max_row, written in GCC's vector extension, which compiles
 * differently per clone (a 64-byte compare was scalar code in the AVX2 clone): a
 * maximum taken over some lanes only still gives a softmax that looks right (e^(x - m)
 * just exceeds 1), so the maximum it returns is checked exactly, at every length
 * around the vector and unroll widths and with the maximum in every position.
 *
 * Usage: test_ops */
#include "kernels/ops.h"
#include "testutil.h"

#include <math.h>
#include <stdlib.h>

/* a reproducible value in [-20, 20) */
static float value(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return (float)((*s >> 8) & 0xffff) / 65536.0f * 40.0f - 20.0f;
}

static void check(const float *x0, int n, const char *what)
{
    float *x = malloc((size_t)(n ? n : 1) * sizeof *x);
    float m_ref = -INFINITY;
    for (int i = 0; i < n; i++) {
        x[i] = x0[i];
        m_ref = x0[i] > m_ref ? x0[i] : m_ref;
    }
    double sum_ref = 0;
    for (int i = 0; i < n; i++)
        sum_ref += exp((double)x0[i] - m_ref);
    float m = NAN;
    float sum = wkv__softmax_exp(x, n, &m);
    CHECK(m == m_ref || (isinf(m) && isinf(m_ref)), "%s, n %d: max %g, expected %g", what, n,
          m, m_ref);
    CHECK(fabs(sum - sum_ref) <= 1e-6 * sum_ref, "%s, n %d: sum %.9g, expected %.9g", what, n,
          sum, sum_ref);
    double worst = 0;
    for (int i = 0; i < n && m_ref > -INFINITY; i++) {
        double e = exp((double)x0[i] - m_ref), err = fabs(x[i] - e) / (e > 1e-30 ? e : 1e-30);
        worst = err > worst ? err : worst;
    }
    CHECK(worst <= 4e-7, "%s, n %d: e^(x - max) off by %.3g relative", what, n, worst);
    free(x);
}

int main(void)
{
    enum { N = 1600 };
    float *x = malloc(N * sizeof *x);
    unsigned s = 12345;
    int lengths[] = {0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 1500};
    for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++) {
        int n = lengths[l];
        for (int i = 0; i < n; i++)
            x[i] = value(&s);
        check(x, n, "random");
        /* the maximum at every position, the rest below it */
        for (int at = 0; at < n && n <= 100; at++) {
            for (int i = 0; i < n; i++)
                x[i] = -fabsf(value(&s)) - 1.0f;
            x[at] = 3.0f;
            check(x, n, "one peak");
        }
    }
    /* -inf entries (masked scores) are skipped by the maximum; all -inf sums to 0 */
    for (int i = 0; i < 40; i++)
        x[i] = i % 3 ? -INFINITY : value(&s);
    check(x, 40, "masked");
    for (int i = 0; i < 40; i++)
        x[i] = -INFINITY;
    float m = 0;
    CHECK(wkv__softmax_exp(x, 40, &m) == 0.0f && m == -INFINITY, "all -inf: max %g", m);
    free(x);
    return tu_finish("ops");
}
