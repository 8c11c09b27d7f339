/*
 * LogicFuzz skeleton: stateless_parser
 *
 * Pattern: one call turns the fuzz input (text or bytes) into a result; nothing persists
 * between calls (acme_reply_parse(text), acme_reply_parse_len(buf, len), an in-place
 * acme_text_squeeze(char *)).
 * - A `const char *` without a length gets a NUL-terminated heap copy of the payload.
 * - A pointer followed by its length gets data/size as they are (ASan then sees over-reads).
 * - An owned result is released with the API's destructor (acme_reply_free), a printed string
 *   with the library's free if it has one. A result written through a `T **out` parameter is
 *   owned by the harness too: release it after USE (plain free only when the docs say so).
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
