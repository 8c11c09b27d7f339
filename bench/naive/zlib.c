/* Naive zlib baseline: the input goes to the main entry point, uncompress(), once. */
#include <stddef.h>
#include <stdint.h>
#include "zlib.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static Bytef out[1 << 16];
  uLongf out_len = sizeof(out);
  uncompress(out, &out_len, data, (uLong)size);
  return 0;
}
