/* SHA-256 (nettle's): the seccomp cache's keys and entries, the config digest. */
#ifndef SEERUN_SHA256_H
#define SEERUN_SHA256_H

#include <nettle/sha2.h>
#include <stddef.h>
#include <stdint.h>

#define SR_SHA256_LEN SHA256_DIGEST_SIZE

struct sr_sha256 {
  struct sha256_ctx ctx;
};

void sr_sha256_init(struct sr_sha256 *c);
void sr_sha256_update(struct sr_sha256 *c, const void *data, size_t len);
void sr_sha256_final(struct sr_sha256 *c, uint8_t digest[SR_SHA256_LEN]);
void sr_sha256(const void *data, size_t len, uint8_t digest[SR_SHA256_LEN]);

#endif
