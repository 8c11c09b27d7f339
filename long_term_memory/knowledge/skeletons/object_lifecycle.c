/*
 * LogicFuzz skeleton: object_lifecycle
 *
 * Pattern: build an object from the input with the API's constructor or parser, call the
 * target on it, release it (node_clone(tree), node_map_get(tree, key), session_init(&s)).
 * - SETUP creates the object (parser fed with the payload, or a zeroed struct set up by the
 *   API's init function, whose result is checked) and registers its destructor in CLEANUP.
 * - Option arguments (flags, indexes, keys) come from the end of the input.
 * - When the target is itself the initializer, USE drives the object a bounded number of steps.
 * - When the target is the destructor, the CALL releases the object and CLEANUP must not.
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
