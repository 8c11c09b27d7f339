/*
 * LogicFuzz skeleton: state_machine
 *
 * Pattern: an object that reports one event or token per call until an end state
 * (lexer_next(&lx, &tok), reader_next_event(r, &ev), loader_next_doc(l, &doc)).
 * - SETUP initializes the machine (zeroed struct + init, result checked) and gives it the payload
 *   through its data-taking setter (lexer_set_buffer(&lx, data, size)): without it nothing is read.
 * - Each round of the bounded loop zeroes the output struct, makes one step, tests for an error
 *   or the end event, releases the output struct (lexer_token_release) and breaks when done.
 * - CLEANUP deletes the machine.
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
  /* One step per round, at most 65536 rounds. CALL makes one step and must `break` on an error
     or when the machine reports its end. */
  for (int lf_step = 0; lf_step < 65536; lf_step++) {
    /* @LF:CALL */
  }
  /* @LF:USE */
  /* @LF:CLEANUP */
  return 0;
}
