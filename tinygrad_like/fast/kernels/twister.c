/* The Mersenne Twister MT19937 in C, for fast/streams.py: PyTorch's bernoulli draw (dropout's mask) from the
   twister's state in one pass, with the words never written out.

   Each draw takes two words of the stream, the first one high, and keeps its 53-bit integer
   k = (first & (2^21 - 1)) * 2^32 + second, kept when k < threshold (pytorch_streams/generator.py's
   keep_below and bernoulli_threshold). Here a block's state words are tempered, paired and compared in one
   loop, which writes only the result: the mask (one byte a draw) or dropout's noise (scale where kept,
   else 0, in float32 or float64).

   The two words of a pair sit side by side in the state, so the loop reads them as one 64-bit integer
   (little-endian: the first word in the low half) and tempers both halves at once, masking what a 64-bit
   shift carries across the halves; the twist and this loop are plain loops that the compiler turns into
   vector instructions (built with -O3 -march=native, fast/streams.py). A pair whose first word is the
   last of a block and whose second is the first of the next one is drawn by itself, between the twists.

   The state is numpy's MT19937's own, as numpy lays it out (its 624 words, then the index of the next word,
   624 meaning "twist before the next one"), read and changed in place; fast/streams.py checks that layout
   against numpy's public copy of the state before it hands this code numpy's address. */
#include <stdint.h>
#include <string.h>

#define WORDS 624
#define SHIFT 397

typedef struct {
    uint32_t key[WORDS];
    int position;
} state_t;

static inline uint32_t mix(uint32_t word, uint32_t following, uint32_t far) {
    /* one word of the twist: word's top bit above following's low 31, shifted right once, XORed with
       `far` and, when the bit shifted out is 1, with the matrix constant */
    uint32_t y = (word & 0x80000000u) | (following & 0x7FFFFFFFu);
    return far ^ (y >> 1) ^ ((0u - (y & 1u)) & 0x9908B0DFu);
}

static void twist(uint32_t *restrict key) {
    /* the next 624 words in place: word i from words i, i + 1 and i + 397 (mod 624), in three loops so that
       no index needs the modulo; the second reads words the first wrote, 227 places back */
    for (int i = 0; i < WORDS - SHIFT; i++)
        key[i] = mix(key[i], key[i + 1], key[i + SHIFT]);
    for (int i = WORDS - SHIFT; i < WORDS - 1; i++)
        key[i] = mix(key[i], key[i + 1], key[i + SHIFT - WORDS]);
    key[WORDS - 1] = mix(key[WORDS - 1], key[0], key[SHIFT - 1]);
}

static inline uint32_t temper(uint32_t y) {
    y ^= y >> 11;
    y ^= (y << 7) & 0x9D2C5680u;
    y ^= (y << 15) & 0xEFC60000u;
    return y ^ (y >> 18);
}

static inline uint64_t temper_pair(uint64_t y) {
    /* temper on both 32-bit halves of y: a right shift's bits that cross into the lower half are masked
       off; a left shift's that cross into the upper half land on zeros of the temper's masks */
    y ^= (y >> 11) & 0x001FFFFF001FFFFFull;
    y ^= (y << 7) & 0x9D2C56809D2C5680ull;
    y ^= (y << 15) & 0xEFC60000EFC60000ull;
    return y ^ ((y >> 18) & 0x00003FFF00003FFFull);
}

static inline uint64_t draw_of(uint64_t pair) {
    /* the 53-bit integer of a tempered pair held little-endian: the first word (low half)'s low 21 bits
       above the second (high half) */
    return ((pair & 0x1FFFFFull) << 32) | (pair >> 32);
}

/* The body shared by the three results: `WRITE(i, kept)` stores draw i's result. */
#define DRAWS(WRITE)                                                                         \
    uint32_t *key = state->key;                                                              \
    long position = state->position, done = 0;                                               \
    while (done < n) {                                                                       \
        if (position == WORDS) {                                                             \
            twist(key);                                                                      \
            position = 0;                                                                    \
        }                                                                                    \
        if (position == WORDS - 1) {                 /* a pair across the twist */           \
            uint64_t first = temper(key[WORDS - 1]);                                         \
            twist(key);                                                                      \
            uint64_t k = ((first & 0x1FFFFFull) << 32) | temper(key[0]);                     \
            WRITE(done, k < threshold);                                                      \
            done++;                                                                          \
            position = 1;                                                                    \
            continue;                                                                        \
        }                                                                                    \
        long count = (WORDS - position) / 2;                                                 \
        if (count > n - done)                                                                \
            count = n - done;                                                                \
        const unsigned char *words = (const unsigned char *)(key + position);                \
        for (long j = 0; j < count; j++) {                                                   \
            uint64_t pair;                                                                   \
            memcpy(&pair, words + 8 * j, 8);       /* 4-byte aligned when position is odd */ \
            WRITE(done + j, draw_of(temper_pair(pair)) < threshold);                         \
        }                                                                                    \
        done += count;                                                                       \
        position += 2 * count;                                                               \
    }                                                                                        \
    state->position = (int)position;

#define WRITE_MASK(i, kept) (out[i] = (kept))
#define WRITE_NOISE(i, kept) (out[i] = (kept) ? scale : 0)

void twister_keep_below(state_t *restrict state, uint64_t threshold, uint8_t *restrict out, long n) {
    /* out[i] = 1 when draw i's k < threshold, else 0: bernoulli's mask */
    DRAWS(WRITE_MASK)
}

void twister_noise_f32(state_t *restrict state, uint64_t threshold, float scale, float *restrict out, long n) {
    /* out[i] = scale when draw i's k < threshold, else 0: dropout's noise */
    DRAWS(WRITE_NOISE)
}

void twister_noise_f64(state_t *restrict state, uint64_t threshold, double scale, double *restrict out, long n) {
    DRAWS(WRITE_NOISE)
}

void twister_words(state_t *restrict state, uint32_t *restrict out, long n) {
    /* the next n words of the stream, tempered (for the tests: the twist and temper by themselves) */
    uint32_t *key = state->key;
    long position = state->position;
    for (long done = 0; done < n; done++) {
        if (position == WORDS) {
            twist(key);
            position = 0;
        }
        out[done] = temper(key[position++]);
    }
    state->position = (int)position;
}
