#include "build.h"

#include "sha256.h"

void sr_sha256_init(struct sr_sha256 *c)
{
  sha256_init(&c->ctx);
}

void sr_sha256_update(struct sr_sha256 *c, const void *data, size_t len)
{
  sha256_update(&c->ctx, len, data);
}

void sr_sha256_final(struct sr_sha256 *c, uint8_t digest[SR_SHA256_LEN])
{
  sha256_digest(&c->ctx, SR_SHA256_LEN, digest);
}

void sr_sha256(const void *data, size_t len, uint8_t digest[SR_SHA256_LEN])
{
  struct sr_sha256 c;
  sr_sha256_init(&c);
  sr_sha256_update(&c, data, len);
  sr_sha256_final(&c, digest);
}
