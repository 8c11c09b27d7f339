/* A harness of libtiff's RGBA readers (whole image, oriented, strips, tiles) on an in-memory file.
 * The last input byte picks the orientation and how many raster rows the caller gives. */
#include "tiff_memio.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2) return 0;
  TIFFSetErrorHandler(quiet);
  TIFFSetWarningHandler(quiet);
  uint8_t knob = data[size - 1];
  memfile m = {(uint8_t *)data, size - 1, 0, 0};  /* read only: never written */
  TIFF *tif = mem_open(&m, "rm");
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
