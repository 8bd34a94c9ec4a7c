import { randomBytes } from "node:crypto";

/** Returns a new id on each call. */
export type IdGenerator = () => string;

/**
 * Task ids: 128 bits from the CSPRNG, base64url (22 characters, URL-safe, no padding).
 * Random bytes are drawn 4 KiB at a time, because one `randomBytes` call per id costs
 * more than everything else a create does.
 */
export function createIdGenerator(bytesPerId = 16, poolSize = 4096): IdGenerator {
  if (!Number.isInteger(bytesPerId) || bytesPerId < 16) {
    throw new RangeError("ids need at least 16 random bytes (128 bits)");
  }
  const size = Math.max(poolSize - (poolSize % bytesPerId), bytesPerId);
  let pool = randomBytes(size);
  let offset = 0;
  return () => {
    if (offset + bytesPerId > size) {
      pool = randomBytes(size);
      offset = 0;
    }
    // Each byte range is handed out once; the pool is replaced, never rewound.
    const id = pool.toString("base64url", offset, offset + bytesPerId);
    offset += bytesPerId;
    return id;
  };
}
