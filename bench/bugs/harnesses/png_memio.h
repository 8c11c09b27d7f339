/* In-memory I/O for the libpng harnesses here: a growing buffer libpng writes to and reads from. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <png.h>

typedef struct { uint8_t *data; size_t size, cap, pos; } membuf;

static void membuf_put(png_structp png, png_bytep bytes, size_t n) {
  membuf *m = png_get_io_ptr(png);
  if (m->size + n > m->cap) {
    size_t cap = (m->size + n) * 2;
    uint8_t *grown = realloc(m->data, cap);
    if (grown == NULL) png_error(png, "out of memory");
    m->data = grown;
    m->cap = cap;
  }
  memcpy(m->data + m->size, bytes, n);
  m->size += n;
}

static void membuf_flush(png_structp png) { (void)png; }

static void membuf_get(png_structp png, png_bytep bytes, size_t n) {
  membuf *m = png_get_io_ptr(png);
  if (n > m->size - m->pos) png_error(png, "read past the end");
  memcpy(bytes, m->data + m->pos, n);
  m->pos += n;
}
