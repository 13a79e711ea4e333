/* exp for attention.c's kernels and rows.c's softmax, without a special path. glibc's vector exp (libmvec)
 * hands every vector holding an input it treats apart, such as −inf (a masked key in attention, a
 * masked logit before a softmax), to its scalar exp, lane by lane, which costs a masked row several
 * times what the rest of the kernel does. Here x is clamped to [LO, HI], beyond which exp is 0 or inf
 * in the type anyway (NaN passes through), split as x = k·ln2 + r, |r| ≤ ln2/2 (k rounded by adding
 * 1.5·2^(mantissa bits), ln2 in a high part whose product with k is exact and a low part), exp(r) by its
 * Taylor series, within an ulp (to r^7/7! for float, r^13/13! for double), and 2^k made from exponent
 * bits as two factors 2^(k/2)·2^(k − k/2), each a normal number, so that the product rounds to
 * subnormals, 0 and inf as exp does. */
#ifndef TINYGRAD_LIKE_EXP_H
#define TINYGRAD_LIKE_EXP_H
#include <stdint.h>

#define EXP_FUNCTION(T, S, I, LO, HI, SHIFT, LN2_HI, LN2_LO, BIAS, MANTISSA, TAYLOR)                    \
static inline T exp_##S(T x) {                                                                         \
    x = x < LO ? LO : x;                                                                               \
    x = x > HI ? HI : x;                                                                               \
    T t = x * (T)1.4426950408889634074 + SHIFT;                    /* k = round(x / ln2), in t's bits */ \
    T k = t - SHIFT, r = (x - k * LN2_HI) - k * LN2_LO;                                                \
    const T inverse_factorial[] = TAYLOR;                          /* 1/d!, highest d first */         \
    T p = inverse_factorial[0];                                                                        \
    for (unsigned d = 1; d < sizeof inverse_factorial / sizeof(T); d++) p = p * r + inverse_factorial[d]; \
    union { T f; I i; } u = {t}, shift = {SHIFT}, a, b;                                                \
    I n = u.i - shift.i, n1 = n >> 1;                                                                  \
    a.i = (n1 + BIAS) << MANTISSA; b.i = (n - n1 + BIAS) << MANTISSA;                                  \
    return p * a.f * b.f;                                                                              \
}

#define LIST(...) {__VA_ARGS__}
EXP_FUNCTION(float, f32, int32_t, -110.0f, 89.0f, 12582912.0f, 0.693145751953125f, 1.428606820309417e-06f,
             127, 23, LIST(1 / 5040.f, 1 / 720.f, 1 / 120.f, 1 / 24.f, 1 / 6.f, 0.5f, 1.f, 1.f))
EXP_FUNCTION(double, f64, int64_t, -746.0, 710.0, 6755399441055744.0, 0.693147180369123816490,
             1.90821492927058770002e-10, 1023, 52,
             LIST(1 / 6227020800., 1 / 479001600., 1 / 39916800., 1 / 3628800., 1 / 362880., 1 / 40320.,
                  1 / 5040., 1 / 720., 1 / 120., 1 / 24., 1 / 6., 0.5, 1., 1.))

#endif
