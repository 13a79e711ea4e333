/* The squared norm of a gradient, Σ a², in double, in numpy's own order, for fast/grad_norm.py (clip_grad_norm).

   nn/optim.py's plain squares_sums computes float(np.sum(np.square(a, dtype=np.float64))): every square rounded
   to double (a float's square is exact in double), then numpy's pairwise sum over the C-ordered squares, which
   adds fewer than 8 numbers in sequence; up to 128 (PW_BLOCKSIZE) in 8 interleaved sums r[0..7], combined as
   ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7)), then the rest of the block in sequence; more, split at half
   the length rounded down to a multiple of 8, each half summed so and the two added. The code below is that
   recursion with the square taken as each number is read: one pass, no array of squares. The 8 interleaved sums
   are independent lanes, so the compiler may put them in vector registers without changing any sum; built with
   -ffp-contract=off so that no square and add are fused into one rounding (tests compare the bits with numpy's). */

#define BLOCK 128

#define SQUARES_SUM(NAME, T)                                                                        \
    double NAME(const T *a, long n) {                                                               \
        if (n < 8) {                                                                                \
            double res = 0.;                                                                        \
            for (long i = 0; i < n; i++) {                                                          \
                double v = (double)a[i];                                                            \
                res += v * v;                                                                       \
            }                                                                                       \
            return res;                                                                             \
        }                                                                                           \
        if (n <= BLOCK) {                                                                           \
            double r[8];                                                                            \
            for (int k = 0; k < 8; k++) {                                                           \
                double v = (double)a[k];                                                            \
                r[k] = v * v;                                                                       \
            }                                                                                       \
            long i = 8;                                                                             \
            for (; i < n - n % 8; i += 8)                                                           \
                for (int k = 0; k < 8; k++) {                                                       \
                    double v = (double)a[i + k];                                                    \
                    r[k] += v * v;                                                                  \
                }                                                                                   \
            double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));          \
            for (; i < n; i++) {                                                                    \
                double v = (double)a[i];                                                            \
                res += v * v;                                                                       \
            }                                                                                       \
            return res;                                                                             \
        }                                                                                           \
        long half = n / 2;                                                                          \
        half -= half % 8;                                                                           \
        return NAME(a, half) + NAME(a + half, n - half);                                            \
    }

SQUARES_SUM(squares_sum_f32, float)
SQUARES_SUM(squares_sum_f64, double)
