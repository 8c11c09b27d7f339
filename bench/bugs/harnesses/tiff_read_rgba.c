/* A harness of libtiff's RGBA readers (whole image, oriented, strips, tiles) on an in-memory file.
 * The last input byte picks the orientation and how many raster rows the caller gives. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <tiffio.h>

typedef struct { const uint8_t *data; toff_t size, pos; } memfile;

static tsize_t mem_read(thandle_t h, tdata_t buf, tsize_t n) {
  memfile *m = (memfile *)h;
  if (m->pos >= m->size) return 0;
  if ((toff_t)n > m->size - m->pos) n = (tsize_t)(m->size - m->pos);
  memcpy(buf, m->data + m->pos, (size_t)n);
  m->pos += (toff_t)n;
  return n;
}
static tsize_t mem_write(thandle_t h, tdata_t buf, tsize_t n) { (void)h; (void)buf; (void)n; return -1; }
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
  if (size < 2) return 0;
  TIFFSetErrorHandler(quiet);
  TIFFSetWarningHandler(quiet);
  uint8_t knob = data[size - 1];
  memfile m = {data, size - 1, 0};
  TIFF *tif = TIFFClientOpen("mem", "rm", (thandle_t)&m, mem_read, mem_write, mem_seek, mem_close,
                             mem_size, no_map, no_unmap);
  if (tif == NULL) return 0;
  uint32_t w = 0, h = 0;
  TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &w);
  TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &h);
  if (w == 0 || h == 0 || (uint64_t)w * h > (1u << 20)) { TIFFClose(tif); return 0; }
  uint32_t rows = h - (uint32_t)((uint64_t)h * (knob & 3) / 4);  /* a raster of fewer rows, as allowed */
  uint32_t *raster = malloc((size_t)w * h * sizeof(uint32_t));
  if (raster != NULL) {
    TIFFReadRGBAImageOriented(tif, w, rows, raster, ORIENTATION_TOPLEFT + (knob >> 2) % 8, 0);
    uint32_t tw = 0, th = 0, rps = 0;
    if (TIFFIsTiled(tif) && TIFFGetField(tif, TIFFTAG_TILEWIDTH, &tw) && TIFFGetField(tif, TIFFTAG_TILELENGTH, &th)
        && tw && th && (uint64_t)tw * th <= (uint64_t)w * h) {
      for (uint32_t row = 0; row < h; row += th)
        for (uint32_t col = 0; col < w; col += tw) TIFFReadRGBATile(tif, col, row, raster);
    } else if (!TIFFIsTiled(tif) && TIFFGetFieldDefaulted(tif, TIFFTAG_ROWSPERSTRIP, &rps) && rps) {
      for (uint32_t row = 0; row < h && (uint64_t)rps * w <= (uint64_t)w * h; row += rps)
        TIFFReadRGBAStrip(tif, row, raster);
    }
    free(raster);
  }
  TIFFClose(tif);
  return 0;
}
