/* A harness of libtiff's LogLuv (SGILOG) encoder: the input is XYZ float pixels of a small image,
 * written to an in-memory TIFF. The first byte picks the width and the encoding (SGILOG or SGILOG24). */
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1 + 12) return 0;
  TIFFSetErrorHandler(quiet);
  TIFFSetWarningHandler(quiet);
  uint32_t width = 1 + data[0] % 16;
  int compression = (data[0] & 0x80) ? COMPRESSION_SGILOG24 : COMPRESSION_SGILOG;
  size_t row_bytes = (size_t)width * 3 * sizeof(float);
  uint32_t height = (uint32_t)((size - 1) / row_bytes);
  if (height == 0) return 0;
  memfile m = {NULL, 0, 0, 0};
  TIFF *tif = TIFFClientOpen("mem", "w", (thandle_t)&m, mem_read, mem_write, mem_seek, mem_close,
                             mem_size, no_map, no_unmap);
  if (tif == NULL) return 0;
  TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, width);
  TIFFSetField(tif, TIFFTAG_IMAGELENGTH, height);
  TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL, 3);
  TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, 32);
  TIFFSetField(tif, TIFFTAG_SAMPLEFORMAT, SAMPLEFORMAT_IEEEFP);
  TIFFSetField(tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
  TIFFSetField(tif, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_LOGLUV);
  TIFFSetField(tif, TIFFTAG_COMPRESSION, compression);
  TIFFSetField(tif, TIFFTAG_SGILOGDATAFMT, SGILOGDATAFMT_FLOAT);
  TIFFSetField(tif, TIFFTAG_ROWSPERSTRIP, 1);
  float *row = malloc(row_bytes);
  for (uint32_t y = 0; row != NULL && y < height; y++) {
    memcpy(row, data + 1 + y * row_bytes, row_bytes);
    if (TIFFWriteScanline(tif, row, y, 0) < 0) break;
  }
  free(row);
  TIFFClose(tif);
  free(m.data);
  return 0;
}
