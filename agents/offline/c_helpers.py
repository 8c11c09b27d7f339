"""The small C helpers harnesses share: the input cursor, option bytes, copies.

Each entry is C text, the helpers it needs and the headers it needs; :func:`synth_code.helper_code`
emits the ones a harness uses, dependencies first.
"""

from __future__ import annotations

import re

# name -> (C code, helpers it needs, headers it needs)
HELPERS: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "input": (
        """/* Cursor over the fuzz input. Option values are taken from its end so the payload keeps
   its first bytes; what is left is the payload. */
typedef struct {
  const uint8_t *data;
  size_t size;
} lf_input_t;

/* One option byte from the end of the input, 0 once the input is used up. */
static uint8_t lf_take_byte(lf_input_t *in) {
  if (in->size == 0) return 0;
  in->size--;
  return in->data[in->size];
}""",
        (),
        (),
    ),
    "take_int": (
        """/* An integer in [lo, hi] (hi - lo < 65536) from one or two option bytes. */
static int lf_take_int(lf_input_t *in, int lo, int hi) {
  unsigned span = (unsigned)(hi - lo) + 1u;
  unsigned v = lf_take_byte(in);
  if (span > 256u) v |= (unsigned)lf_take_byte(in) << 8;
  return lo + (int)(v % span);
}""",
        ("input",),
        (),
    ),
    "take_bits": (
        """/* An option word made of the flags in mask only (the bits documented for the function).
   A flag is set when its bit is set in both of two option bytes (eight flags per pair): most
   inputs carry a few flags, not half of them, so flags that exclude each other rarely meet. */
static uint32_t lf_take_bits(lf_input_t *in, uint32_t mask) {
  uint32_t out = 0, byte = 0;
  int left = 0;
  for (int bit = 0; bit < 32; bit++) {
    if (!(mask & (1u << bit))) continue;
    if (left == 0) {
      byte = lf_take_byte(in);
      byte &= lf_take_byte(in);
      left = 8;
    }
    if (byte & 1u) out |= 1u << bit;
    byte >>= 1;
    left--;
  }
  return out;
}""",
        ("input",),
        (),
    ),
    "take_pick": (
        """/* One of the n values in set (a documented valid set, e.g. a codec's window sizes). */
static int lf_take_pick(lf_input_t *in, const int *set, size_t n) {
  return set[lf_take_byte(in) % n];
}""",
        ("input",),
        (),
    ),
    "take_double": (
        """/* A double from four option bytes, in a range where every value is finite. */
static double lf_take_double(lf_input_t *in) {
  uint32_t v = 0;
  for (int i = 0; i < 4; i++) v = (v << 8) | lf_take_byte(in);
  return (double)(int32_t)v / 256.0;
}""",
        ("input",),
        (),
    ),
    "strndup": (
        """/* A NUL-terminated heap copy of n bytes: the library may read up to the terminator, and
   ASan sees any read past it. */
static char *lf_strndup(const uint8_t *p, size_t n) {
  char *s = (char *)malloc(n + 1);
  if (s == NULL) return NULL;
  if (n) memcpy(s, p, n);
  s[n] = '\\0';
  return s;
}""",
        (),
        ("<stdlib.h>", "<string.h>"),
    ),
    "wstrndup": (
        """/* A heap copy of n bytes ended by four zero bytes: text of 16- or 32-bit units (UTF-16
   behind a `const void *`) is read up to a zero unit, which one zero byte does not make. */
static char *lf_wstrndup(const uint8_t *p, size_t n) {
  char *s = (char *)malloc(n + 4);
  if (s == NULL) return NULL;
  if (n) memcpy(s, p, n);
  memset(s + n, 0, 4);
  return s;
}""",
        (),
        ("<stdlib.h>", "<string.h>"),
    ),
    "take_str": (
        """/* A short string (at most max bytes, length from one option byte) from the input's end. */
static char *lf_take_str(lf_input_t *in, size_t max) {
  size_t n = lf_take_byte(in) % (max + 1);
  if (n > in->size) n = in->size;
  in->size -= n;
  return lf_strndup(in->data + in->size, n);
}""",
        ("input", "strndup"),
        (),
    ),
    "take_part": (
        """/* A string of a share of what is left of the input (one option byte says how much, up
   to all of it), from its end: a second input as long as the payload can be. */
static char *lf_take_part(lf_input_t *in) {
  size_t n = lf_take_byte(in);
  n = in->size * n / 255u;
  in->size -= n;
  return lf_strndup(in->data + in->size, n);
}""",
        ("input", "strndup"),
        (),
    ),
    "memdup": (
        """/* A heap copy of n bytes (at least one byte is allocated, so it is never NULL for n == 0
   unless malloc fails). */
static uint8_t *lf_memdup(const uint8_t *p, size_t n) {
  uint8_t *m = (uint8_t *)malloc(n ? n : 1);
  if (m != NULL && n) memcpy(m, p, n);
  return m;
}""",
        (),
        ("<stdlib.h>", "<string.h>"),
    ),
    "is_zero": (
        """/* Whether n bytes are all zero: a library that has nothing more to report leaves its
   output struct zeroed. */
static int lf_is_zero(const void *p, size_t n) {
  const unsigned char *b = (const unsigned char *)p;
  for (size_t i = 0; i < n; i++)
    if (b[i]) return 0;
  return 1;
}""",
        (),
        (),
    ),
    "tmpfile": (
        """/* The input as a file of its own in $TMPDIR (the run directory), its name in path: a
   library may resolve the path it is given (realpath, readlink), so it must name a real file,
   not /proc/self/fd/N. The caller closes the descriptor and unlinks the path. */
static int lf_tmpfile(const uint8_t *data, size_t size, char *path, size_t cap) {
  const char *dir = getenv("TMPDIR");
  if (dir == NULL || dir[0] == '\\0') dir = "/tmp";
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
}""",
        (),
        ("<stdio.h>", "<stdlib.h>", "<unistd.h>"),
    ),
    "utf8_ok": (
        """/* Whether s[0..n) is well-formed UTF-8 (no overlong forms, surrogates or values past
   U+10FFFF): text a function documents as UTF-8 is checked before it is passed. */
static int lf_utf8_ok(const char *s, size_t n) {
  const unsigned char *p = (const unsigned char *)s;
  size_t i = 0;
  while (i < n) {
    unsigned c = p[i], need, min, cp;
    if (c < 0x80u) { i++; continue; }
    if (c >= 0xC2u && c <= 0xDFu) { need = 1; min = 0x80u; cp = c & 0x1Fu; }
    else if (c >= 0xE0u && c <= 0xEFu) { need = 2; min = 0x800u; cp = c & 0x0Fu; }
    else if (c >= 0xF0u && c <= 0xF4u) { need = 3; min = 0x10000u; cp = c & 0x07u; }
    else return 0;
    if (n - i <= need) return 0;
    for (unsigned k = 1; k <= need; k++) {
      if ((p[i + k] & 0xC0u) != 0x80u) return 0;
      cp = (cp << 6) | (p[i + k] & 0x3Fu);
    }
    if (cp < min || cp > 0x10FFFFu || (cp >= 0xD800u && cp <= 0xDFFFu)) return 0;
    i += need + 1;
  }
  return 1;
}""",
        (),
        ("<stddef.h>", "<string.h>"),
    ),
}


def with_helper(code: str, name: str) -> str:
    """``code`` with the helper ``name`` (of :data:`HELPERS`) before its entry point, and its headers.

    A harness that already defines it is returned as it is.
    """
    text, _needs, headers = HELPERS[name]
    signature = text.split("{", 1)[0].strip().splitlines()[-1]
    if signature in code:
        return code
    entry = re.search(r"^\s*int\s+LLVMFuzzerTestOneInput\b", code, re.M)
    at = entry.start() if entry else 0
    code = code[:at] + "\n" + text + "\n" + code[at:]
    for head in headers:
        if f"#include {head}" not in code:
            code = f"#include {head}\n" + code
    return code
