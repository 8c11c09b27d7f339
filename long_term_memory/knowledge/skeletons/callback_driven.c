/*
 * LogicFuzz skeleton: callback_driven
 *
 * Pattern: the library calls back into caller-supplied handlers to read input or write output
 * (reader_set_source(r, read_cb, &ctx), writer_set_sink(w, write_cb, &ctx)).
 * - GLOBALS defines the handler with exactly the typedef's signature (never a cast of a
 *   mismatched function); it reads from an lf_input_t context (never more than asked, always
 *   reporting how much it gave) or drops output, and keeps no pointer it was given once it
 *   returns.
 * - SETUP initializes the object; CALL registers the handler with a per-input context on the
 *   stack; USE drives the object (a bounded parse loop) so the handler is really called.
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
