/*
 * LogicFuzz skeleton: file_based
 *
 * Pattern: the library reads a file: a FILE *, a path or a descriptor (archive_open(path, mode),
 * archive_fdopen(fd, mode), doc_load_stream(FILE *)).
 * - The skeleton writes the input to a file of its own in $TMPDIR (lf_fd, named lf_path) and
 *   removes it at the end. A path must name a real file: a library may resolve the path it is
 *   given (realpath, readlink), and /proc/self/fd/N of an anonymous memfd resolves to a name
 *   that does not exist.
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
#include <stdlib.h>
/* @LF:INCLUDES */

/* The input as a file of its own in $TMPDIR, its name in path; the caller closes the
   descriptor and unlinks the path. */
static int lf_tmpfile(const uint8_t *data, size_t size, char *path, size_t cap) {
  const char *dir = getenv("TMPDIR");
  if (dir == NULL || dir[0] == '\0') dir = "/tmp";
  int len = snprintf(path, cap, "%s/lf_input_XXXXXX", dir);
  if (len < 0 || (size_t)len >= cap) return -1;
  int fd = mkstemp(path);
  if (fd < 0) return -1;
  for (size_t off = 0; off < size;) {
    ssize_t n = write(fd, data + off, size - off);
    if (n <= 0) {
      close(fd);
      unlink(path);
      return -1;
    }
    off += (size_t)n;
  }
  if (lseek(fd, 0, SEEK_SET) != 0) {
    close(fd);
    unlink(path);
    return -1;
  }
  return fd;
}

/* @LF:GLOBALS */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* @LF:GUARD */
  char lf_path[512];
  int lf_fd = lf_tmpfile(data, size, lf_path, sizeof lf_path);
  if (lf_fd < 0) return 0;
  /* @LF:SETUP */
  /* @LF:CALL */
  /* @LF:USE */
  /* @LF:CLEANUP */
  close(lf_fd);
  unlink(lf_path);
  return 0;
}
