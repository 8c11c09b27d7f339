/*
 * LogicFuzz skeleton: buffer_codec
 *
 * Pattern: a one-shot transform from an input buffer into a caller buffer
 * (blk_pack(dst, &dst_len, src, src_len), blk_unpack, base64-style encode/decode).
 * - The payload is the source; the destination is a heap buffer whose size comes from the API's
 *   bound function (blk_pack_bound) or from the input, capped at 1 MiB, and its length variable
 *   starts at that capacity.
 * - USE runs the inverse transform on the output when the API has one (pack -> unpack).
 *
 * How to fill it: each slot marker below is replaced by code placed after it (the marker stays,
 * as a comment, so later passes can find the slot); a slot may stay empty.
 *   @LF:INCLUDES  the library's headers and the libc headers the code uses
 *   @LF:GLOBALS   static helpers and callbacks only: nothing may keep state between inputs
 *   @LF:GUARD     early `return 0;` for inputs the target cannot take (before anything is allocated)
 *   @LF:SETUP     declarations first (pointers = NULL, structs zeroed), then option values taken
 *                 from the END of the input, then the payload and the objects built from it;
 *                 on any failure `goto lf_cleanup;`
 *   @LF:CALL      the target call (its result kept for USE and CLEANUP)
 *   @LF:USE       follow-up calls on what the target produced, each in its own { } block
 *   @LF:CLEANUP   `lf_cleanup:` (when SETUP jumps there), then every release in reverse order
 *                 of acquisition: no leak on any path, no double free
 */
#include <stdint.h>
#include <stddef.h>
/* @LF:INCLUDES */

/* @LF:GLOBALS */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* @LF:GUARD */
  /* @LF:SETUP */
  /* @LF:CALL */
  /* @LF:USE */
  /* @LF:CLEANUP */
  return 0;
}
