/*
 * LogicFuzz skeleton: file_based
 *
 * Pattern: the library reads a file: a FILE *, a path or a descriptor (archive_open(path, mode),
 * archive_fdopen(fd, mode), doc_load_stream(FILE *)).
 * - The skeleton turns the input into an anonymous memfd (lf_fd) with a path (lf_path,
 *   /proc/self/fd/N): no temporary file is left behind.
 * - A FILE * comes from fdopen(dup(lf_fd), mode) after lseek(lf_fd, 0, SEEK_SET); a function
 *   that takes ownership of a descriptor gets dup(lf_fd).
 * - Reading calls repeat a bounded number of times; CLEANUP closes what SETUP opened.
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
#include <stdio.h>
#include <unistd.h>
#include <sys/syscall.h>
/* @LF:INCLUDES */

/* The input as an anonymous in-memory file (memfd): nothing is left on disk. */
static int lf_memfd(const uint8_t *data, size_t size) {
  int fd = (int)syscall(SYS_memfd_create, "lf_input", 0);
  if (fd < 0) return -1;
  for (size_t off = 0; off < size;) {
    ssize_t n = write(fd, data + off, size - off);
    if (n <= 0) {
      close(fd);
      return -1;
    }
    off += (size_t)n;
  }
  if (lseek(fd, 0, SEEK_SET) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

/* @LF:GLOBALS */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* @LF:GUARD */
  int lf_fd = lf_memfd(data, size);
  if (lf_fd < 0) return 0;
  char lf_path[64];
  snprintf(lf_path, sizeof lf_path, "/proc/self/fd/%d", lf_fd);
  (void)lf_path;
  /* @LF:SETUP */
  /* @LF:CALL */
  /* @LF:USE */
  /* @LF:CLEANUP */
  close(lf_fd);
  return 0;
}
