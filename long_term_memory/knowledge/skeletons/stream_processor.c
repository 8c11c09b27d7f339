/*
 * LogicFuzz skeleton: stream_processor
 *
 * Pattern: a caller-owned stream context consumes input in chunks and produces output into
 * a caller buffer (pipe_decode(&strm, flush), pipe_encode, push_parser_feed).
 * - The context is recognised by its fields: an input pointer + available count and an output
 *   pointer + available count, advanced by each call.
 * - SETUP zeroes the context, calls its init (parameters mapped into their valid ranges, result
 *   checked) and allocates a bounded output window.
 * - CALL, inside the chunk loop, points the context at lf_chunk/lf_chunk_size and calls the
 *   target until the chunk is used up or the window stops filling; it breaks on the end code or
 *   an error, and a shared budget bounds the total work (decompression bombs).
 * - USE finishes the stream; CLEANUP calls the end function and frees the window.
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
  /* The largest piece fed per call. SETUP may lower it from an option byte (never to 0): small
     pieces reach the library's resume-in-the-middle code. */
  size_t lf_chunk_max = 4096;
  /* @LF:GUARD */
  /* @LF:SETUP */
  /* Feed the payload (data and size as SETUP left them) in pieces, at most 4096 rounds. CALL
     sees lf_chunk, lf_chunk_size and lf_is_last, and may `break` to stop early (end of stream,
     error, no progress). */
  for (size_t lf_off = 0, lf_round = 0; lf_round < 4096; lf_round++) {
    const uint8_t *lf_chunk = data + lf_off;
    size_t lf_chunk_size = size - lf_off < lf_chunk_max ? size - lf_off : lf_chunk_max;
    int lf_is_last = lf_off + lf_chunk_size >= size;
    (void)lf_chunk;
    (void)lf_is_last;
    /* @LF:CALL */
    lf_off += lf_chunk_size;
    if (lf_is_last) break;
  }
  /* @LF:USE */
  /* @LF:CLEANUP */
  return 0;
}
