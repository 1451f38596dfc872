/*
 * One argon2id hash at the gateway's default cost (19 MiB, 2 passes, one
 * lane), three ways, CPU time a hash on one thread:
 *   - libsodium's crypto_pwhash_str_verify, as the gateway calls it: it maps
 *     and zeroes fresh memory for every hash and unmaps it after;
 *   - the reference libargon2 with a buffer kept between hashes (its
 *     allocate/free callbacks), so no page is faulted in again;
 *   - the reference libargon2 allocating for every hash.
 * Says whether keeping the memory would pay for the gateway's logins
 * (docs/performance.md, "The four targets at the end of the day").
 *   cc -O2 Benchmarks/argon2/reused_buffer.c -o /tmp/reused_buffer -largon2 -lsodium && /tmp/reused_buffer
 * (needs libargon2-dev and libsodium-dev).
 */
#include <argon2.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { HASHES = 40, MEMORY_KIB = 19456, PASSES = 2 };

static uint8_t *kept;

static int reuse_buffer(uint8_t **memory, size_t bytes) {
    if (kept == NULL) {
        kept = malloc(bytes);
        if (kept == NULL) return ARGON2_MEMORY_ALLOCATION_ERROR;
        memset(kept, 0, bytes);
    }
    *memory = kept;
    return ARGON2_OK;
}

static void keep_buffer(uint8_t *memory, size_t bytes) {
    (void)memory;
    (void)bytes;
}

static double cpu_seconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
    return now.tv_sec + now.tv_nsec / 1e9;
}

static double libargon2_ms(argon2_context *context) {
    uint8_t out[32];
    context->out = out;
    if (argon2_ctx(context, Argon2_id) != ARGON2_OK) exit(3);
    double start = cpu_seconds();
    for (int i = 0; i < HASHES; i++) {
        if (argon2_ctx(context, Argon2_id) != ARGON2_OK) exit(3);
    }
    return (cpu_seconds() - start) / HASHES * 1000;
}

int main(void) {
    if (sodium_init() < 0) return 1;
    char stored[crypto_pwhash_STRBYTES];
    if (crypto_pwhash_str_alg(stored, "password", 8, PASSES, (size_t)MEMORY_KIB * 1024, crypto_pwhash_ALG_ARGON2ID13) != 0)
        return 1;
    double start = cpu_seconds();
    for (int i = 0; i < HASHES; i++) {
        if (crypto_pwhash_str_verify(stored, "password", 8) != 0) return 2;
    }
    double sodium = (cpu_seconds() - start) / HASHES * 1000;

    uint8_t salt[16] = {0};
    argon2_context context = {
        .outlen = 32, .pwd = (uint8_t *)"password", .pwdlen = 8, .salt = salt, .saltlen = sizeof salt,
        .t_cost = PASSES, .m_cost = MEMORY_KIB, .lanes = 1, .threads = 1, .version = ARGON2_VERSION_13,
        .allocate_cbk = reuse_buffer, .free_cbk = keep_buffer, .flags = ARGON2_DEFAULT_FLAGS,
    };
    double reused = libargon2_ms(&context);
    context.allocate_cbk = NULL;
    context.free_cbk = NULL;
    double fresh = libargon2_ms(&context);
    printf("CPU a hash: libsodium %.2f ms; libargon2, buffer kept %.2f ms; libargon2, allocating %.2f ms\n",
           sodium, reused, fresh);
    free(kept);
    return 0;
}
