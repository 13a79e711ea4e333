/* A pool of worker threads for BLAS products and compiled kernels that hands work over without Python,
 * without the GIL and, between jobs close together, without waking a sleeping core: for
 * tinygrad_like/fast/spin_pool.py.
 *
 * A job is a product (GEMM_JOB) or runs of a compiled kernel (KERNEL_JOB, see run_kernel below). A product
 * is one call of numpy's own OpenBLAS gemm (cblas sgemm/dgemm, ILP64: 64-bit integers), row-major,
 * C (m, n) = op(A) (m, k) · op(B) (k, n), plus an optional bias row added to every row of C after, written
 * as int64 numbers: the kind, dtype (4 or 8 bytes), transa, transb (0 or 1), m, n, k, A, lda, B, ldb, C, ldc,
 * bias (addresses as integers, 0 for no bias).
 *
 * Each worker has one slot. The caller (one ctypes call, which lets go of the GIL for its whole
 * duration) posts a job in each worker's slot, runs its own job, then for each slot either takes the
 * job back (a worker not yet awake: the caller runs it, no wait) or spins until the worker is done.
 * After a job a worker spins on its slot (pause instruction, sched_yield now and then, so that on a
 * loaded machine the core goes to whoever else wants it) for spin_ns nanoseconds, then sleeps on a
 * futex until the next post. The spin trades a core kept busy for a while after each product (power,
 * and a core another process could use) against the cost of waking a halted core and a sleeping
 * thread at the next product; with a worker count of 0 there is no thread at all.
 *
 * A second caller while one has the pool (another Python thread) runs its jobs inline. After fork the
 * child has no workers (threads do not survive fork): they are made again at its first product. */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

typedef int64_t blasint;
typedef void (*sgemm_fn)(int, int, int, blasint, blasint, blasint, float, const float *, blasint,
                         const float *, blasint, float, float *, blasint);
typedef void (*dgemm_fn)(int, int, int, blasint, blasint, blasint, double, const double *, blasint,
                         const double *, blasint, double, double *, blasint);

enum { ROW_MAJOR = 101, NO_TRANS = 111, TRANS = 112 };
enum { IDLE, POSTED, TAKEN, DONE, STOP };
enum { GEMM_JOB, KERNEL_JOB };
enum { KIND, DTYPE, TA, TB, M, N, K, A, LDA, B, LDB, C, LDC, BIAS,
       LO, HI, INNER, SA0, SA1, SB0, SB1, SC0, SC1,                /* a stack's entries lo..hi, see run_job */
       NEXT, STEP, JOB_LEN };                                      /* entries taken in turn, see run_gemms */
#define MAX_WORKERS 63
/* Pauses between two sched_yield calls of a spinning thread (a pause is tens of cycles, a yield a system
 * call): a thread of the Python pool or another process waiting for this core (run at the same real-time
 * priority, where the scheduler does not take the core from a spinning thread) gets it within a few
 * microseconds. */
#define YIELD_EVERY 128

typedef struct {
    _Alignas(64) _Atomic int state;                               /* IDLE, POSTED, TAKEN, DONE or STOP */
    _Atomic int sleeping;                                         /* 1 while on the futex */
    int64_t job[JOB_LEN];
    pthread_t thread;
} slot_t;

static slot_t slots[MAX_WORKERS];
static int alive;                                                 /* workers running */
static int wanted;                                                /* workers to have */
static int64_t spin_ns;
static sgemm_fn sgemm;
static dgemm_fn dgemm;
static atomic_flag busy = ATOMIC_FLAG_INIT;                       /* held by the caller that has the pool */
static _Atomic int parked;                                        /* 1: spinning workers go to sleep now (spin_park) */

static inline void pause_once(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ volatile("yield");
#endif
}

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void futex_wait(_Atomic int *word, int value) {
    syscall(SYS_futex, (int *)word, FUTEX_WAIT_PRIVATE, value, NULL, NULL, 0);
}

static void futex_wake(_Atomic int *word) {
    syscall(SYS_futex, (int *)word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* One gemm, then the bias added to each row of C (one rounding, as numpy's add). */
static void gemm_once(const int64_t *j, const char *a, const char *b, char *c_) {
    int ta = j[TA] ? TRANS : NO_TRANS, tb = j[TB] ? TRANS : NO_TRANS;
    if (j[M] == 0 || j[N] == 0)
        return;
    if (j[DTYPE] == 4) {
        float *c = (float *)c_;
        sgemm(ROW_MAJOR, ta, tb, j[M], j[N], j[K], 1.0f, (const float *)a, j[LDA], (const float *)b, j[LDB], 0.0f,
              c, j[LDC]);
        const float *bias = (const float *)j[BIAS];
        if (bias)
            for (int64_t r = 0; r < j[M]; r++)
                for (int64_t i = 0; i < j[N]; i++) c[r * j[LDC] + i] += bias[i];
    } else {
        double *c = (double *)c_;
        dgemm(ROW_MAJOR, ta, tb, j[M], j[N], j[K], 1.0, (const double *)a, j[LDA], (const double *)b, j[LDB], 0.0,
              c, j[LDC]);
        const double *bias = (const double *)j[BIAS];
        if (bias)
            for (int64_t r = 0; r < j[M]; r++)
                for (int64_t i = 0; i < j[N]; i++) c[r * j[LDC] + i] += bias[i];
    }
}

static void run_kernel(const int64_t *j);

/* A gemm for each entry e in lo..hi of a stack with two batch axes (INNER entries along the second), entry
 * e = (e / INNER, e % INNER) at A + SA0·(e / INNER) + SA1·(e % INNER) bytes, likewise B and C; a product
 * that is no stack is the one entry 0 of 1. */
static void run_gemms(const int64_t *j, int64_t lo, int64_t hi) {
    for (int64_t e = lo; e < hi; e++) {
        int64_t outer = e / j[INNER], inner = e % j[INNER];
        gemm_once(j, (const char *)j[A] + j[SA0] * outer + j[SA1] * inner,
                  (const char *)j[B] + j[SB0] * outer + j[SB1] * inner, (char *)j[C] + j[SC0] * outer + j[SC1] * inner);
    }
}

/* One product job: entries LO..HI (run_gemms), or, when NEXT points to a counter shared by every thread
 * that has the job, STEP entries at a time from that counter until it passes HI: a thread that gets its
 * core late (the machine loaded) then takes fewer, and nobody waits for more than the STEP entries a
 * late thread is on. Each entry is one gemm, whoever makes it: the same bits. */
static void run_job(const int64_t *j) {
    if (j[KIND] == KERNEL_JOB) {
        run_kernel(j);
        return;
    }
    if (!j[NEXT]) {
        run_gemms(j, j[LO], j[HI]);
        return;
    }
    for (int64_t e; (e = atomic_fetch_add((_Atomic int64_t *)j[NEXT], j[STEP])) < j[HI];)
        run_gemms(j, e, e + j[STEP] < j[HI] ? e + j[STEP] : j[HI]);
}

/* Until the slot holds a job (POSTED) or STOP: spin for spin_ns, yielding the core now and then, then
 * sleep on the futex; spin again after each wake-up. */
static int wait_for_work(slot_t *s) {
    int64_t start = now_ns();
    for (unsigned spins = 1;; spins++) {
        int st = atomic_load_explicit(&s->state, memory_order_acquire);
        if (st == POSTED || st == STOP)
            return st;
        pause_once();
        if (spins % 16)
            continue;
        if (now_ns() - start < spin_ns && !atomic_load_explicit(&parked, memory_order_relaxed)) {
            if (spins % YIELD_EVERY == 0)
                sched_yield();
            continue;
        }
        atomic_store(&s->sleeping, 1);                            /* then look once more: a post in between */
        st = atomic_load(&s->state);                              /* sees sleeping == 1 and wakes us */
        if (st != POSTED && st != STOP)
            futex_wait(&s->state, st);
        atomic_store(&s->sleeping, 0);
        start = now_ns();
    }
}

static void *worker(void *arg) {
    slot_t *s = arg;
    for (;;) {
        if (wait_for_work(s) == STOP)
            return NULL;
        int expected = POSTED;
        if (atomic_compare_exchange_strong(&s->state, &expected, TAKEN)) {  /* else the caller took it back */
            run_job(s->job);
            atomic_store_explicit(&s->state, DONE, memory_order_release);
        }
    }
}

static void post(slot_t *s, int state) {
    atomic_store(&s->state, state);
    if (atomic_load(&s->sleeping))
        futex_wake(&s->state);
}

static void stop_workers(void) {
    for (int i = 0; i < alive; i++)
        post(&slots[i], STOP);
    for (int i = 0; i < alive; i++)
        pthread_join(slots[i].thread, NULL);
    alive = 0;
}

static int start_workers(void) {
    while (alive < wanted) {
        slot_t *s = &slots[alive];
        atomic_store(&s->state, IDLE);
        atomic_store(&s->sleeping, 0);
        if (pthread_create(&s->thread, NULL, worker, s))
            break;                                                /* fewer workers: the rest runs inline */
        alive++;
    }
    return alive;
}

static void forget_workers(void) {                                /* in a forked child: no threads came along */
    alive = 0;
    atomic_flag_clear(&busy);
}

__attribute__((constructor)) static void on_load(void) { pthread_atfork(NULL, NULL, forget_workers); }

/* Use `workers` threads beside the caller's (0: none, every job inline), each spinning `spin` ns after
 * a job before it sleeps, calling these gemms. Workers of another count are stopped; new ones are made
 * at the next run. */
void spin_configure(int64_t workers, int64_t spin, void *s, void *d) {
    while (atomic_flag_test_and_set(&busy))
        sched_yield();
    if (workers != wanted || spin != spin_ns)
        stop_workers();
    wanted = workers < 0 ? 0 : workers > MAX_WORKERS ? MAX_WORKERS : (int)workers;
    spin_ns = spin;
    sgemm = (sgemm_fn)s;
    dgemm = (dgemm_fn)d;
    atomic_flag_clear(&busy);
}

/* Run `count` jobs (count * JOB_LEN numbers): the first on the caller, the next ones on the workers
 * (one each), any left over on the caller; back when all are done. Returns the number of jobs the
 * workers ran. */
int64_t spin_run(const int64_t *jobs, int64_t count) {
    if (count < 2 || atomic_flag_test_and_set(&busy)) {
        for (int64_t i = 0; i < count; i++) run_job(jobs + i * JOB_LEN);
        return 0;
    }
    atomic_store_explicit(&parked, 0, memory_order_relaxed);
    int posted = 0, helped = 0;
    for (int64_t i = 1; i < count && posted < start_workers(); i++, posted++) {
        memcpy(slots[posted].job, jobs + i * JOB_LEN, sizeof(int64_t) * JOB_LEN);
        post(&slots[posted], POSTED);
    }
    run_job(jobs);
    for (int64_t i = 1 + posted; i < count; i++) run_job(jobs + i * JOB_LEN);
    for (int i = 0; i < posted; i++) {
        slot_t *s = &slots[i];
        int expected = POSTED;
        if (atomic_compare_exchange_strong(&s->state, &expected, IDLE)) {   /* not started: ours */
            run_job(s->job);
            continue;
        }
        for (unsigned spins = 1; atomic_load_explicit(&s->state, memory_order_acquire) != DONE; spins++) {
            pause_once();
            if (spins % YIELD_EVERY == 0)
                sched_yield();
        }
        atomic_store(&s->state, IDLE);
        helped++;
    }
    atomic_flag_clear(&busy);
    return helped;
}

/* The head of a numpy array as numpy's C API lays it out (PyArrayObject_fields, in ndarraytypes.h, which
 * compiled extensions read through PyArray_DATA and friends, so numpy keeps it): the Python object's
 * header, then the data pointer, the number of axes, the shape and the strides in bytes.
 * spin_pool.py checks it on a probe array before it uses this file (spin_layout_ok). */
typedef struct {
    intptr_t refcount;
    void *type;
    char *data;
    int nd;
    intptr_t *dims, *strides;
} array_head;

int64_t spin_layout_ok(const array_head *x, int64_t data, int64_t nd, int64_t rows, int64_t row_stride) {
    return (int64_t)x->data == data && x->nd == nd && x->dims[0] == rows && x->strides[0] == row_stride;
}

/* Whether the 2-D array x is laid out for BLAS, as numpy's matmul decides: unit steps along its rows
 * (transposed: 0, leading dimension = row stride) or along its columns (transposed: 1), in units of
 * `size` bytes, the leading dimension at least the other axis's length. */
static int operand(const array_head *x, int64_t size, int64_t *trans, int64_t *ld) {
    intptr_t rows = x->dims[0], cols = x->dims[1], s0 = x->strides[0], s1 = x->strides[1];
    if (s1 == size && s0 % size == 0 && s0 / size >= (cols > 1 ? cols : 1)) {
        *trans = 0, *ld = s0 / size;
        return 1;
    }
    if (s0 == size && s1 % size == 0 && s1 / size >= (rows > 1 ? rows : 1)) {
        *trans = 1, *ld = s1 / size;
        return 1;
    }
    return 0;
}

/* The job out = a @ b (+ bias), or 0 when an operand is not laid out for BLAS, or a and b are one
 * buffer (numpy's matmul takes syrk for a @ aᵀ: other bits). out is C-contiguous (m, n), bias (n,). */
static int make_job(int64_t *job, const array_head *a, const array_head *b, const array_head *out,
                    const array_head *bias, int64_t size) {
    if (a->data == b->data || !operand(a, size, &job[TA], &job[LDA]) || !operand(b, size, &job[TB], &job[LDB]))
        return 0;
    job[KIND] = GEMM_JOB, job[DTYPE] = size, job[M] = a->dims[0], job[K] = a->dims[1], job[N] = b->dims[1];
    job[A] = (int64_t)a->data, job[B] = (int64_t)b->data, job[C] = (int64_t)out->data, job[LDC] = job[N];
    job[BIAS] = bias ? (int64_t)bias->data : 0;
    job[LO] = 0, job[HI] = job[INNER] = 1;
    job[SA0] = job[SA1] = job[SB0] = job[SB1] = job[SC0] = job[SC1] = 0;
    job[NEXT] = 0, job[STEP] = 1;
    return 1;
}

/* out = a @ b (+ bias) for 2-D arrays of `size`-byte floats, the rows of a cut into (workers + 1)
 * runs of neighbours of at least 2 rows each (OpenBLAS may hand a one-row gemm to gemv: other bits).
 * Returns -1 (nothing done) when make_job says no, else the number of runs the workers ran. */
int64_t spin_matmul(const array_head *a, const array_head *b, const array_head *out, const array_head *bias,
                    int64_t size) {
    int64_t job[JOB_LEN], cut[MAX_WORKERS + 1][JOB_LEN];
    if (!make_job(job, a, b, out, bias, size))
        return -1;
    int64_t m = job[M], parts = wanted + 1 < m / 2 ? wanted + 1 : m / 2;
    if (parts < 1)
        parts = 1;
    for (int64_t p = 0; p < parts; p++) {
        int64_t lo = m * p / parts, hi = m * (p + 1) / parts;
        memcpy(cut[p], job, sizeof job);
        cut[p][M] = hi - lo;
        cut[p][A] = job[A] + size * (job[TA] ? lo : lo * job[LDA]);  /* row lo of op(A) */
        cut[p][C] = job[C] + size * lo * job[LDC];
    }
    return spin_run(cut[0], parts);
}

/* The last two axes of x (an array of nd >= 2 axes): the matrix of each entry of a stack. */
static array_head matrix_of(const array_head *x) {
    array_head m = *x;
    m.dims += x->nd - 2, m.strides += x->nd - 2, m.nd = 2;
    return m;
}

/* Steps of entries per thread a stack's product is cut into (run_job): enough that a thread slowed down
 * leaves most of its share to the others, few enough that the counter is seldom touched. */
#define STEPS_PER_THREAD 4

/* out = a @ b for stacks a (s0, s1, m, k) or (s1, m, k), b of a's batch axes or 2-D (k, n) (the same
 * matrix for every entry), out of a's batch axes with unit steps along its rows (a view of a wider
 * array, such as attention's gradients written into their packed layout, will do): one gemm per entry,
 * as numpy's matmul makes them (the same calls, so the same bits), the entries taken in steps of
 * neighbours by the caller and the workers in turn (run_job). -1 (nothing done) when make_job says no to the entries' matrices, out's rows are
 * not laid out so, or there are more than two batch axes. */
int64_t spin_matmul_stacked(const array_head *a, const array_head *b, const array_head *out, int64_t size) {
    int64_t job[JOB_LEN], cut[MAX_WORKERS + 1][JOB_LEN];
    int batch = a->nd - 2;
    if (batch < 1 || batch > 2 || out->nd != a->nd || (b->nd != a->nd && b->nd != 2))
        return -1;
    array_head ma = matrix_of(a), mb = matrix_of(b), mo = matrix_of(out);
    if (!make_job(job, &ma, &mb, &mo, NULL, size) || mo.strides[1] != size || mo.strides[0] % size ||
        mo.strides[0] / size < job[N])
        return -1;
    job[LDC] = mo.strides[0] / size;
    int stacked_b = b->nd == a->nd;
    job[INNER] = a->dims[batch - 1];
    job[SA1] = a->strides[batch - 1], job[SB1] = stacked_b ? b->strides[batch - 1] : 0;
    job[SC1] = out->strides[batch - 1];
    if (batch == 2)
        job[SA0] = a->strides[0], job[SB0] = stacked_b ? b->strides[0] : 0, job[SC0] = out->strides[0];
    int64_t entries = (batch == 2 ? a->dims[0] : 1) * job[INNER], parts = wanted + 1 < entries ? wanted + 1 : entries;
    if (parts < 1)
        parts = 1;
    _Atomic int64_t next = 0;
    job[NEXT] = (int64_t)&next, job[HI] = entries;
    job[STEP] = entries / (parts * STEPS_PER_THREAD) > 1 ? entries / (parts * STEPS_PER_THREAD) : 1;
    for (int64_t p = 0; p < parts; p++) memcpy(cut[p], job, sizeof job);
    return spin_run(cut[0], parts);
}

/* out1 = a1 @ b1 on the caller and out2 = a2 @ b2 on a worker, at once (a backward pass's dx and dW).
 * -1 (nothing done) when make_job says no to either, else the number of jobs the worker ran. */
int64_t spin_matmul_pair(const array_head *a1, const array_head *b1, const array_head *out1, const array_head *a2,
                         const array_head *b2, const array_head *out2, int64_t size) {
    int64_t jobs[2][JOB_LEN];
    if (!make_job(jobs[0], a1, b1, out1, NULL, size) || !make_job(jobs[1], a2, b2, out2, NULL, size))
        return -1;
    return spin_run(jobs[0], 2);
}

/* Compiled kernels of the form kernel(arguments..., lo, hi), which do their work on rows (or elements)
 * lo..hi of arrays they are given (rows.c's and attention.c's, in another library: spin_pool.py hands
 * over their addresses). A kernel job cuts a range into `runs` runs and every thread that has the job,
 * the caller and each worker, takes the next run from one shared counter until none is left: a thread
 * slowed down (another process on its core, a worker still waking) takes fewer, and a job the caller
 * takes back from a worker not yet awake finds nothing left. Cuts fall on multiples of `unit` (counted
 * from 0): an elementwise kernel's vector loop then meets every element at the same place of a vector
 * as in one call over the whole range, which gives the same bits (its remainder loop may not).
 *
 * The arguments before lo, hi are words (a pointer, or a long) and scalars (float or double, the job's
 * dtype), in the order of one of SIGNATURES: 'p' a pointer, 'l' a long, 's' a scalar. The kernel is
 * called through a function pointer of exactly that type (call_float, call_double), so that each argument
 * goes where the C ABI puts it. */
#define MAX_WORDS 8
#define MAX_SCALARS 3
enum { K_FN = KIND + 1, K_SIG, K_DTYPE, K_LO, K_HI, K_UNIT, K_RUNS, K_NEXT, K_WORDS,
       K_SCALARS = K_WORDS + MAX_WORDS, K_LEN = K_SCALARS + MAX_SCALARS };
_Static_assert((int)K_LEN <= (int)JOB_LEN, "a kernel job fits in a slot");

static const char *const SIGNATURES[] = {
    "pp", "ppp", "ppl", "pppl",   /* silu, silu's backward, (log-)softmax and swiglu, their backwards */
    "ppllpppl", "ppsp",           /* the attention tile's softmax backward, transpose_copy */
    "psssp", "ppsssp", "pssp",    /* gelu, the backwards of both GELUs, gelu_erf */
    "ppssppl", "ppllspl",         /* cross-entropy forward and backward, the attention tile's softmax */
};
enum { SIGNATURE_COUNT = sizeof SIGNATURES / sizeof SIGNATURES[0] };

/* The index of a kernel's signature in SIGNATURES (spin_pool.py asks once per kernel), -1 when it has none. */
int64_t spin_signature(const char *kinds) {
    for (int i = 0; i < SIGNATURE_COUNT; i++)
        if (!strcmp(kinds, SIGNATURES[i]))
            return i;
    return -1;
}

#define P(i) ((void *)w[i])
#define L(i) ((long)w[i])
#define CALLS(T)                                                                                       \
static void call_##T(void *fn, int64_t sig, const int64_t *w, const double *d, long lo, long hi) {     \
    T s0 = (T)d[0], s1 = (T)d[1], s2 = (T)d[2];                                                        \
    typedef void *p;                                                                                   \
    switch (sig) {                                                                                     \
    case 0: ((void (*)(p, p, long, long))fn)(P(0), P(1), lo, hi); break;                               \
    case 1: ((void (*)(p, p, p, long, long))fn)(P(0), P(1), P(2), lo, hi); break;                      \
    case 2: ((void (*)(p, p, long, long, long))fn)(P(0), P(1), L(2), lo, hi); break;                   \
    case 3: ((void (*)(p, p, p, long, long, long))fn)(P(0), P(1), P(2), L(3), lo, hi); break;          \
    case 4: ((void (*)(p, p, long, long, p, p, p, long, long, long))fn)(P(0), P(1), L(2), L(3), P(4),  \
                                                                        P(5), P(6), L(7), lo, hi); break; \
    case 5: ((void (*)(p, p, T, p, long, long))fn)(P(0), P(1), s0, P(2), lo, hi); break;               \
    case 6: ((void (*)(p, T, T, T, p, long, long))fn)(P(0), s0, s1, s2, P(1), lo, hi); break;          \
    case 7: ((void (*)(p, p, T, T, T, p, long, long))fn)(P(0), P(1), s0, s1, s2, P(2), lo, hi); break; \
    case 8: ((void (*)(p, T, T, p, long, long))fn)(P(0), s0, s1, P(1), lo, hi); break;                 \
    case 9: ((void (*)(p, p, T, T, p, p, long, long, long))fn)(P(0), P(1), s0, s1, P(2), P(3), L(4),   \
                                                               lo, hi); break;                        \
    case 10: ((void (*)(p, p, long, long, T, p, long, long, long))fn)(P(0), P(1), L(2), L(3), s0, P(4), \
                                                                      L(5), lo, hi); break;           \
    }                                                                                                  \
}
CALLS(float)
CALLS(double)

/* Where run r of a kernel job starts: lo + its share of the range, down to a multiple of the unit. */
static int64_t cut_at(const int64_t *j, int64_t r) {
    if (r >= j[K_RUNS])
        return j[K_HI];
    int64_t length = j[K_HI] - j[K_LO];
    return j[K_LO] + length * r / j[K_RUNS] / j[K_UNIT] * j[K_UNIT];
}

static void run_kernel(const int64_t *j) {
    _Atomic int64_t *next = (_Atomic int64_t *)j[K_NEXT];
    double scalars[MAX_SCALARS];
    memcpy(scalars, j + K_SCALARS, sizeof scalars);
    for (int64_t r; (r = atomic_fetch_add(next, 1)) < j[K_RUNS];) {
        int64_t lo = cut_at(j, r), hi = cut_at(j, r + 1);
        if (lo == hi)
            continue;
        if (j[K_DTYPE] == 4)
            call_float((void *)j[K_FN], j[K_SIG], j + K_WORDS, scalars, lo, hi);
        else
            call_double((void *)j[K_FN], j[K_SIG], j + K_WORDS, scalars, lo, hi);
    }
}

/* fn(words and scalars in the order of SIGNATURES[sig], lo, hi) over rows lo..hi cut into `runs` runs at
 * multiples of `unit` (run_kernel), on the caller and the workers; `size` is the scalars' type (4:
 * float, 8: double). Returns the number of workers that took part, or -1 (nothing done) for a signature
 * or size it does not know. */
int64_t spin_kernel(void *fn, int64_t sig, int64_t size, const int64_t *words, const double *scalars, int64_t lo,
                    int64_t hi, int64_t unit, int64_t runs) {
    if (sig < 0 || sig >= SIGNATURE_COUNT || (size != 4 && size != 8) || unit < 1 || runs < 1)
        return -1;
    _Atomic int64_t next = 0;
    int64_t jobs[MAX_WORKERS + 1][JOB_LEN] = {{0}};
    jobs[0][KIND] = KERNEL_JOB, jobs[0][K_FN] = (int64_t)fn, jobs[0][K_SIG] = sig, jobs[0][K_DTYPE] = size;
    jobs[0][K_LO] = lo, jobs[0][K_HI] = hi, jobs[0][K_UNIT] = unit, jobs[0][K_RUNS] = runs;
    jobs[0][K_NEXT] = (int64_t)&next;
    memcpy(jobs[0] + K_WORDS, words, sizeof(int64_t) * MAX_WORDS);
    memcpy(jobs[0] + K_SCALARS, scalars, sizeof(double) * MAX_SCALARS);
    int64_t copies = wanted + 1 < runs ? wanted + 1 : runs;
    for (int64_t i = 1; i < copies; i++) memcpy(jobs[i], jobs[0], sizeof jobs[0]);
    return spin_run(jobs[0], copies);
}

/* Spinning workers stop spinning and sleep until the next product: the Python pool calls this before its
 * threads start, so that they do not find the second core taken by a worker waiting for a product. */
void spin_park(void) { atomic_store_explicit(&parked, 1, memory_order_relaxed); }

/* How many workers are asleep on their futex now (for tests: the spin is bounded). */
int64_t spin_sleeping(void) {
    int64_t n = 0;
    for (int i = 0; i < alive; i++) n += atomic_load(&slots[i].sleeping);
    return n;
}

int64_t spin_alive(void) { return alive; }
