"""The code being generated, and the small C helpers harnesses share.

A :class:`Frag` holds declarations, option reads, setup, call, use and cleanup parts; the
helpers are the input cursor, option bytes and copies.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from agents.offline import type_table

C_KEYWORDS = {
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
    "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register",
    "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch", "typedef",
    "union", "unsigned", "void", "volatile", "while", "bool", "true", "false", "data", "size",
    "main", "free", "malloc", "index", "errno", "stdin", "stdout", "stderr", "NULL", "in", "out",
}  # fmt: skip

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
}


def helper_code(names: list[str], existing: str = "") -> tuple[str, list[str]]:
    """C code for the helpers ``names`` (dependencies first) and the headers they need.

    Helpers already defined in ``existing`` (a skeleton or a harness) are left out.
    """
    order: list[str] = []

    def visit(name: str) -> None:
        if name in order:
            return
        for dep in HELPERS[name][1]:
            visit(dep)
        order.append(name)

    for name in names:
        visit(name)
    chunks: list[str] = []
    headers: list[str] = []
    for name in order:
        code, _, heads = HELPERS[name]
        headers.extend(heads)
        if _defines(existing, code):
            continue
        chunks.append(code)
    return "\n\n".join(chunks), headers


def _defines(existing: str, code: str) -> bool:
    """Whether ``existing`` already defines the first function or typedef that ``code`` does."""
    func = re.search(r"^static [^\n(]*?\b(lf_\w+)\(", code, re.M)
    if func:
        return bool(re.search(rf"^static [^\n(]*?\b{func.group(1)}\(", existing, re.M))
    typedef = re.search(r"}\s*(lf_\w+);", code)
    return bool(typedef and re.search(rf"}}\s*{typedef.group(1)};", existing))


@dataclass
class Frag:
    """Generated C for one harness body or one self-contained block.

    Sections render in order: decls, opts (option values from the input cursor), setup,
    call, use, then the failure label and cleanup (in reverse order of acquisition).
    """

    cursor: str = "lf_in"
    label: str = "lf_cleanup"
    includes: list[str] = field(default_factory=list)
    helpers: list[str] = field(default_factory=list)
    globals: list[str] = field(default_factory=list)
    decls: list[str] = field(default_factory=list)
    opts: list[str] = field(default_factory=list)
    setup: list[str] = field(default_factory=list)
    call: list[str] = field(default_factory=list)
    use: list[str] = field(default_factory=list)
    cleanup: list[str] = field(default_factory=list)
    hoist: list[str] = field(default_factory=list)
    guards: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)
    taken: set[str] = field(default_factory=set)
    label_used: bool = False

    def name(self, base: str) -> str:
        """A fresh C identifier based on ``base``."""
        base = re.sub(r"\W", "_", base).strip("_") or "v"
        if base[0].isdigit():
            base = "v_" + base
        if base in C_KEYWORDS or base.startswith(("lf_", "LLVM")):
            base = base + "_v"
        table = type_table.active()  # a variable named like a type hides the type
        cand, n = base, 2
        while cand in self.taken or cand in table.typedefs or cand in table.records:
            cand, n = f"{base}{n}", n + 1
        self.taken.add(cand)
        return cand

    def need(self, *helpers: str) -> None:
        """Require helper functions in GLOBALS."""
        for h in helpers:
            if h not in self.helpers:
                self.helpers.append(h)

    def include(self, *headers: str) -> None:
        """Require headers (``<stdio.h>`` or ``"acme.h"``)."""
        for h in headers:
            if h not in self.includes:
                self.includes.append(h)

    def fail(self) -> str:
        """The statement that abandons this fragment (jumps to its cleanup)."""
        self.label_used = True
        return f"goto {self.label};"

    def take_int(self, choices: tuple[int, ...]) -> str:
        """An expression taking an option integer from the cursor."""
        if len(choices) == 1:
            return str(choices[0])
        if len(choices) == 2 and choices[0] <= choices[1]:
            self.need("take_int")
            return f"lf_take_int(&{self.cursor}, {choices[0]}, {choices[1]})"
        self.need("take_pick")
        table = self.name("lf_set")
        self.decls.append(f"static const int {table}[] = {{{', '.join(map(str, choices))}}};")
        return f"lf_take_pick(&{self.cursor}, {table}, sizeof {table} / sizeof {table}[0])"

    def body(self, indent: str = "  ") -> list[str]:
        """Every section as indented lines (the main harness splits them into slots instead)."""
        lines = [*self.decls, *self.opts, *self.setup, *self.call, *self.use]
        if self.label_used:
            lines.append(f"{self.label}: ;")
        lines.extend(reversed(self.cleanup))
        return [indent + ln if ln else ln for ln in _flatten(lines)]


def _flatten(lines: list[str]) -> list[str]:
    out: list[str] = []
    for ln in lines:
        out.extend(ln.split("\n"))
    return out


def indent(lines: list[str], pad: str) -> str:
    """Join lines with ``pad`` added to each non-empty one."""
    return "\n".join(pad + ln if ln.strip() else "" for ln in _flatten(lines))
