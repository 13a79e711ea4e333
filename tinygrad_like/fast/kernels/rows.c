/* The one-pass kernels in C, for the ops whose cost is exp, tanh or erf: the compiler turns each loop
 * over a row into vector code calling glibc's vector math library (libmvec), as fast as numpy's
 * own vectorised exp and tanh (and the erf numpy lacks), where numba calls the scalar ones (softmax's exp: exp.h, see below).
 *
 * The same formulas as numba_rows.py, on rows lo..hi of C-contiguous (rows, n) arrays or elements
 * lo..hi of flat ones; each function twice, for float (_f32) and double (_f64), from one macro.
 * Compiled by c_build.py with -O3 -march=native -fno-math-errno -fopenmp-simd: no fast-math, so
 * infinities and NaN behave as in numpy; only the loops marked `omp simd` with a reduction may sum
 * in a regrouped order. Called through ctypes, which lets go of the GIL: the engine's pool shares
 * the rows out. */
#include <math.h>

#include "exp.h"   /* exp_f32, exp_f64: no scalar fallback on −inf, for softmax's masked scores */

#pragma omp declare simd notinbranch
float expf(float);
#pragma omp declare simd notinbranch
double exp(double);
#pragma omp declare simd notinbranch
float tanhf(float);
#pragma omp declare simd notinbranch
double tanh(double);
#pragma omp declare simd notinbranch
float erff(float);
#pragma omp declare simd notinbranch
double erf(double);
#pragma omp declare simd notinbranch
float logf(float);
#pragma omp declare simd notinbranch
double log(double);

/* EXP is glibc's vector exp, MASKED_EXP exp.h's: softmax's inputs are often masked with −inf (attention
 * written by hand: masked_fill, then softmax), on which glibc's goes lane by lane; on finite inputs
 * glibc's is the faster, so the other kernels keep it (benchmarks/bench_kernels.py: the softmax,
 * masked_softmax and silu rows). */
#define SHORT_ROW 16
#define KERNELS(T, S, EXP, MASKED_EXP, TANH, ERF, LOG)                                                    \
/* softmax of rows shorter than a vector (attention over a few positions): x − max row by row, the exps of  \
 * the whole block in one loop the compiler vectorises across rows, then each row's sum and scale */     \
static void softmax_short_rows_##S(const T *x, T *y, long n, long lo, long hi) {                        \
    for (long r = lo; r < hi; r++) {                                                                   \
        const T *xr = x + r * n; T *yr = y + r * n; T m = xr[0];                                       \
        for (long j = 1; j < n; j++) m = xr[j] > m ? xr[j] : m;                                        \
        for (long j = 0; j < n; j++) yr[j] = xr[j] - m;                                                \
    }                                                                                                  \
    T *block = y + lo * n;                                                                             \
    _Pragma("omp simd") for (long i = 0; i < (hi - lo) * n; i++) block[i] = MASKED_EXP(block[i]);      \
    for (long r = lo; r < hi; r++) {                                                                   \
        T *yr = y + r * n, s = 0;                                                                      \
        for (long j = 0; j < n; j++) s += yr[j];                                                       \
        T inv = 1 / s;                                                                                 \
        for (long j = 0; j < n; j++) yr[j] *= inv;                                                     \
    }                                                                                                  \
}                                                                                                      \
/* y = exp(x − max) · (1 / Σ exp(x − max)) along each row */                                           \
void softmax_forward_##S(const T *x, T *y, long n, long lo, long hi) {                                 \
    if (n < SHORT_ROW) { softmax_short_rows_##S(x, y, n, lo, hi); return; }                           \
    for (long r = lo; r < hi; r++) {                                                                   \
        const T *xr = x + r * n; T *yr = y + r * n;                                                    \
        T m = xr[0], s = 0;                                                                            \
        _Pragma("omp simd reduction(max:m)") for (long j = 0; j < n; j++) m = xr[j] > m ? xr[j] : m;   \
        _Pragma("omp simd reduction(+:s)") for (long j = 0; j < n; j++) { T e = MASKED_EXP(xr[j] - m); yr[j] = e; s += e; } \
        T inv = 1 / s; /* one division a row, then products: a row's n divisions cost more */          \
        _Pragma("omp simd") for (long j = 0; j < n; j++) yr[j] *= inv;                                 \
    }                                                                                                  \
}                                                                                                      \
/* dx = y ⊙ (g − Σ g⊙y) */                                                                             \
void softmax_backward_##S(const T *g, const T *y, T *dx, long n, long lo, long hi) {                   \
    for (long r = lo; r < hi; r++) {                                                                   \
        const T *gr = g + r * n, *yr = y + r * n; T *dr = dx + r * n; T s = 0;                         \
        _Pragma("omp simd reduction(+:s)") for (long j = 0; j < n; j++) s += gr[j] * yr[j];            \
        _Pragma("omp simd") for (long j = 0; j < n; j++) dr[j] = (gr[j] - s) * yr[j];                   \
    }                                                                                                  \
}                                                                                                      \
/* y = (x − max) − log Σ exp(x − max) */                                                               \
void log_softmax_forward_##S(const T *x, T *y, long n, long lo, long hi) {                             \
    for (long r = lo; r < hi; r++) {                                                                   \
        const T *xr = x + r * n; T *yr = y + r * n;                                                    \
        T m = xr[0], s = 0;                                                                            \
        _Pragma("omp simd reduction(max:m)") for (long j = 0; j < n; j++) m = xr[j] > m ? xr[j] : m;   \
        _Pragma("omp simd reduction(+:s)") for (long j = 0; j < n; j++) s += EXP(xr[j] - m);           \
        T ls = LOG(s);                                                                                 \
        _Pragma("omp simd") for (long j = 0; j < n; j++) yr[j] = (xr[j] - m) - ls;                     \
    }                                                                                                  \
}                                                                                                      \
/* dx = g − exp(y)·Σ g */                                                                              \
void log_softmax_backward_##S(const T *g, const T *y, T *dx, long n, long lo, long hi) {               \
    for (long r = lo; r < hi; r++) {                                                                   \
        const T *gr = g + r * n, *yr = y + r * n; T *dr = dx + r * n; T s = 0;                         \
        _Pragma("omp simd reduction(+:s)") for (long j = 0; j < n; j++) s += gr[j];                    \
        _Pragma("omp simd") for (long j = 0; j < n; j++) dr[j] = gr[j] - EXP(yr[j]) * s;                \
    }                                                                                                  \
}                                                                                                      \
/* probs = softmax(x), losses = (1 − ε)(lse − x[t]) + ε(lse − mean x) */                               \
void cross_entropy_forward_##S(const T *x, const long *targets, T smoothing, T inv_n, T *probs,       \
                               T *losses, long n, long lo, long hi) {                                  \
    for (long r = lo; r < hi; r++) {                                                                   \
        const T *xr = x + r * n; T *pr = probs + r * n;                                                \
        T m = xr[0], s = 0, sx = 0;                                                                    \
        _Pragma("omp simd reduction(max:m)") for (long j = 0; j < n; j++) m = xr[j] > m ? xr[j] : m;   \
        _Pragma("omp simd reduction(+:s, sx)") for (long j = 0; j < n; j++) {                          \
            T c = xr[j] - m; T e = EXP(c); pr[j] = e; s += e; sx += c; }                               \
        T inv = 1 / s;                                                                                 \
        _Pragma("omp simd") for (long j = 0; j < n; j++) pr[j] *= inv;                                 \
        T ls = LOG(s), loss = ls - (xr[targets[r]] - m);                                               \
        if (smoothing != 0) loss = (1 - smoothing) * loss + smoothing * (ls - sx * inv_n);             \
        losses[r] = loss;                                                                              \
    }                                                                                                  \
}                                                                                                      \
/* dx = (probs − (1 − ε)·onehot(t) − ε/n) · scale[r] */                                                \
void cross_entropy_backward_##S(const T *probs, const long *targets, T smoothing, T inv_n,            \
                                const T *scale, T *dx, long n, long lo, long hi) {                     \
    T spread = smoothing * inv_n;                                                                      \
    for (long r = lo; r < hi; r++) {                                                                   \
        const T *pr = probs + r * n; T *dr = dx + r * n; T s = scale[r]; long t = targets[r];          \
        _Pragma("omp simd") for (long j = 0; j < n; j++) dr[j] = (pr[j] - spread) * s;                 \
        dr[t] = (pr[t] - ((1 - smoothing) + spread)) * s;                                              \
    }                                                                                                  \
}                                                                                                      \
/* y = ½x(1 + tanh u), u = x(c + c3·x²) */                                                             \
void gelu_forward_##S(const T *x, T c, T c3, T half, T *y, long lo, long hi) {                                 \
    _Pragma("omp simd") for (long i = lo; i < hi; i++) {                                               \
        T v = x[i]; y[i] = half * v * (1 + TANH(v * (c + c3 * v * v))); }                            \
}                                                                                                      \
/* dx = g·(1 + t)(½ + ½x(1 − t)(c + 3c3·x²)), t = tanh u */                                            \
void gelu_backward_##S(const T *g, const T *x, T c, T c3, T half, T *dx, long lo, long hi) {                   \
    _Pragma("omp simd") for (long i = lo; i < hi; i++) {                                               \
        T v = x[i], v2 = v * v, t = TANH(v * (c + c3 * v2));                                           \
        dx[i] = g[i] * ((1 + t) * (half + half * v * (1 - t) * (c + 3 * c3 * v2))); }              \
}                                                                                                      \
/* y = ½x(1 + erf(x·r)), r = 1/√2: the exact GELU */                                                 \
void gelu_erf_forward_##S(const T *x, T r, T half, T *y, long lo, long hi) {                          \
    _Pragma("omp simd") for (long i = lo; i < hi; i++) {                                               \
        T v = x[i]; y[i] = half * v * (1 + ERF(v * r)); }                                              \
}                                                                                                      \
/* dx = g·(½(1 + erf(x·r)) + x·c·e^(−x²/2)), c = 1/√(2π) */                                            \
void gelu_erf_backward_##S(const T *g, const T *x, T r, T half, T c, T *dx, long lo, long hi) {       \
    _Pragma("omp simd") for (long i = lo; i < hi; i++) {                                               \
        T v = x[i]; dx[i] = g[i] * (half * (1 + ERF(v * r)) + v * c * EXP(-half * v * v)); }           \
}                                                                                                      \
/* y = x·σ(x) */                                                                                       \
void silu_forward_##S(const T *x, T *y, long lo, long hi) {                                            \
    _Pragma("omp simd") for (long i = lo; i < hi; i++) y[i] = x[i] / (1 + EXP(-x[i]));                 \
}                                                                                                      \
/* dx = g·σ(x)(1 + x(1 − σ(x))) */                                                                     \
void silu_backward_##S(const T *g, const T *x, T *dx, long lo, long hi) {                              \
    _Pragma("omp simd") for (long i = lo; i < hi; i++) {                                               \
        T s = 1 / (1 + EXP(-x[i])); dx[i] = g[i] * s * (1 + x[i] * (1 - s)); }                         \
}                                                                                                      \
/* y = silu(a)·b for x = [a | b]: rows of x (r, 2n), the gate a and the up projection b side by side, as  \
 * the packed projection makes them (n2 = 2n, the row length of x); y (r, n) */                        \
void swiglu_forward_##S(const T *x, T *y, long n2, long lo, long hi) {                                 \
    long n = n2 / 2;                                                                                   \
    for (long r = lo; r < hi; r++) {                                                                   \
        const T *a = x + r * n2, *b = a + n; T *yr = y + r * n;                                        \
        _Pragma("omp simd") for (long j = 0; j < n; j++) yr[j] = a[j] / (1 + EXP(-a[j])) * b[j];       \
    }                                                                                                  \
}                                                                                                      \
/* dx = [da | db]: da = g·b·σ(a)(1 + a(1 − σ(a))), db = g·silu(a); g (r, n), x and dx (r, 2n) */       \
void swiglu_backward_##S(const T *g, const T *x, T *dx, long n, long lo, long hi) {                    \
    for (long r = lo; r < hi; r++) {                                                                   \
        const T *gr = g + r * n, *a = x + 2 * r * n, *b = a + n; T *da = dx + 2 * r * n, *db = da + n;  \
        _Pragma("omp simd") for (long j = 0; j < n; j++) {                                             \
            T s = 1 / (1 + EXP(-a[j])); da[j] = gr[j] * b[j] * s * (1 + a[j] * (1 - s)); db[j] = gr[j] * a[j] * s; } \
    }                                                                                                  \
}

KERNELS(float, f32, expf, exp_f32, tanhf, erff, logf)
KERNELS(double, f64, exp, exp_f64, tanh, erf, log)
