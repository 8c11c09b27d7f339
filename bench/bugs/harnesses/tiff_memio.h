/* In-memory I/O for the libtiff harnesses here: TIFFClientOpen procedures on a growing buffer. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <tiffio.h>

typedef struct { uint8_t *data; toff_t size, cap, pos; } memfile;

static tsize_t mem_read(thandle_t h, tdata_t buf, tsize_t n) {
  memfile *m = (memfile *)h;
  if (m->pos >= m->size) return 0;
  if ((toff_t)n > m->size - m->pos) n = (tsize_t)(m->size - m->pos);
  memcpy(buf, m->data + m->pos, (size_t)n);
  m->pos += (toff_t)n;
  return n;
}

static tsize_t mem_write(thandle_t h, tdata_t buf, tsize_t n) {
  memfile *m = (memfile *)h;
  if (m->pos + (toff_t)n > m->cap) {
    toff_t cap = (m->pos + (toff_t)n) * 2;
    uint8_t *grown = realloc(m->data, (size_t)cap);
    if (grown == NULL) return -1;
    memset(grown + m->cap, 0, (size_t)(cap - m->cap));
    m->data = grown;
    m->cap = cap;
  }
  memcpy(m->data + m->pos, buf, (size_t)n);
  m->pos += (toff_t)n;
  if (m->pos > m->size) m->size = m->pos;
  return n;
}

static toff_t mem_seek(thandle_t h, toff_t off, int whence) {
  memfile *m = (memfile *)h;
  toff_t base = whence == SEEK_CUR ? m->pos : whence == SEEK_END ? m->size : 0;
  m->pos = base + off;
  return m->pos;
}

static int mem_close(thandle_t h) { (void)h; return 0; }
static toff_t mem_size(thandle_t h) { return ((memfile *)h)->size; }
static int no_map(thandle_t h, tdata_t *base, toff_t *size) { (void)h; (void)base; (void)size; return 0; }
static void no_unmap(thandle_t h, tdata_t base, toff_t size) { (void)h; (void)base; (void)size; }
static void quiet(const char *module, const char *fmt, va_list ap) { (void)module; (void)fmt; (void)ap; }

static TIFF *mem_open(memfile *m, const char *mode) {
  return TIFFClientOpen("mem", mode, (thandle_t)m, mem_read, mem_write, mem_seek, mem_close, mem_size,
                        no_map, no_unmap);
}
