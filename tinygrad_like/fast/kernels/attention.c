/* Attention's kernels in C, for tinygrad_like/fast/flash.py, whose numpy bodies they stand in for: the
 * tile's softmax, the elementwise steps between the products, in one pass over a tile of scores where
 * numpy makes five (tile_softmax_forward, tile_softmax_backward), and the transposing copy that makes
 * kᵀ·scale and vᵀ out of the packed projection (transpose_copy).
 *
 * A tile is R rows of n scores, s = q·(kᵀ·scale), C-contiguous. The mask, when there is one, is one
 * block of `period` rows (the tile's query rows) with a row stride of ldm elements (0 for a padding mask
 * broadcast over the rows), and row r of the tile reads its row r % period: the batch entries and heads
 * of a tile share the mask. lse and D hold one number per row.
 * Built with rows.c by c_build.py (-O3 -march=native -fno-math-errno -fopenmp-simd, no fast-math:
 * infinities and NaN behave as in numpy; only the `omp simd` loops with a reduction may regroup a
 * sum). Called through ctypes, which lets go of the GIL, from the pool's thread that runs the tile. */
#include <math.h>

#include "exp.h"

#pragma omp declare simd notinbranch
float logf(float);
#pragma omp declare simd notinbranch
double log(double);

#define BLOCK 64                                                  /* rows whose lse is taken at once */

#define TILE_KERNELS(T, S, EXP, LOG)                                                                   \
/* s ← softmax(s + mask) along each row, lse[r] = m + log Σ exp(s + mask − m), m = max(row max, lowest);\
 * a row whose keys are all masked (Σ = 0) gets weights 0 and lse = +inf. The logs of a block of rows \
 * are taken in one vector loop at its end. */                                                        \
void tile_softmax_forward_##S(T *restrict s, const T *restrict mask, long ldm, long period, T lowest,  \
                              T *restrict lse, long n, long lo, long hi) {                             \
    T shift[BLOCK], total[BLOCK];                                                                      \
    long i = lo % period;                                                 /* the row's mask row */     \
    for (long r0 = lo; r0 < hi; r0 += BLOCK) {                                                         \
        long r1 = r0 + BLOCK < hi ? r0 + BLOCK : hi;                                                   \
        for (long r = r0; r < r1; r++, i = i + 1 < period ? i + 1 : 0) {                               \
            T *sr = s + r * n; T m = lowest, sum = 0;                                                  \
            if (mask) {                                                                                \
                const T *mr = mask + i * ldm;                                                          \
                _Pragma("omp simd reduction(max:m)") for (long j = 0; j < n; j++) {                    \
                    T x = sr[j] + mr[j]; sr[j] = x; m = x > m ? x : m; }                               \
            } else {                                                                                   \
                _Pragma("omp simd reduction(max:m)") for (long j = 0; j < n; j++) m = sr[j] > m ? sr[j] : m; \
            }                                                                                          \
            _Pragma("omp simd reduction(+:sum)") for (long j = 0; j < n; j++) {                        \
                T e = EXP(sr[j] - m); sr[j] = e; sum += e; }                                           \
            T inv = sum > 0 ? 1 / sum : 0;                              /* every key masked: p = 0 */  \
            _Pragma("omp simd") for (long j = 0; j < n; j++) sr[j] *= inv;                             \
            shift[r - r0] = m; total[r - r0] = sum;                                                    \
        }                                                                                              \
        _Pragma("omp simd") for (long r = r0; r < r1; r++)                                             \
            lse[r] = total[r - r0] > 0 ? shift[r - r0] + LOG(total[r - r0]) : INFINITY;                \
    }                                                                                                  \
}                                                                                                      \
/* s ← p = exp(s + mask − lse), dp ← ds = p ⊙ (dp − D), each row r with its lse[r] and D[r] */         \
void tile_softmax_backward_##S(T *restrict s, const T *restrict mask, long ldm, long period,           \
                               const T *restrict lse, T *restrict dp, const T *restrict D,             \
                               long n, long lo, long hi) {                                             \
    long i = lo % period;                                                                              \
    for (long r = lo; r < hi; r++, i = i + 1 < period ? i + 1 : 0) {                                   \
        T *sr = s + r * n, *dr = dp + r * n; T l = lse[r], d = D[r];                                   \
        if (mask) {                                                                                    \
            const T *mr = mask + i * ldm;                                                              \
            _Pragma("omp simd") for (long j = 0; j < n; j++) {                                         \
                T p = EXP(sr[j] + mr[j] - l); sr[j] = p; dr[j] = p * (dr[j] - d); }                    \
        } else {                                                                                       \
            _Pragma("omp simd") for (long j = 0; j < n; j++) {                                         \
                T p = EXP(sr[j] - l); sr[j] = p; dr[j] = p * (dr[j] - d); }                            \
        }                                                                                              \
    }                                                                                                  \
}

/* dst (blocks, d, n) = srcᵀ·scale for src (blocks, n, d) with unit stride along d: kᵀ·scale and vᵀ from
 * the packed projection, whose rows, a head wide, are too short for numpy's transposing copy. Block b
 * of src starts at (b / n1)·s0 + (b % n1)·s1 and its rows are sr apart (layout: n1, n, d, s0, s1, sr,
 * in elements). dst is written 16 columns at a time, each row of them read from 16 src rows. */
#define TRANSPOSE_KERNEL(T, S)                                                                         \
void transpose_copy_##S(const T *restrict src, const long *layout, T scale, T *restrict dst,           \
                        long lo, long hi) {                                                            \
    long n1 = layout[0], n = layout[1], d = layout[2], sr = layout[5];                                 \
    for (long b = lo; b < hi; b++) {                                                                   \
        const T *a = src + (b / n1) * layout[3] + (b % n1) * layout[4]; T *o = dst + b * d * n;        \
        for (long c = 0; c < n; c += 16) {                                                             \
            long e = c + 16 < n ? c + 16 : n;                                                          \
            for (long j = 0; j < d; j++) {                                                             \
                _Pragma("omp simd") for (long t = c; t < e; t++) o[j * n + t] = a[t * sr + j] * scale; \
            }                                                                                          \
        }                                                                                              \
    }                                                                                                  \
}

TILE_KERNELS(float, f32, exp_f32, logf)
TILE_KERNELS(double, f64, exp_f64, log)
TRANSPOSE_KERNEL(float, f32)
TRANSPOSE_KERNEL(double, f64)
