/* A harness of libtiff's LogLuv (SGILOG) encoder: the input is XYZ float pixels of a small image,
 * written to an in-memory TIFF. The first byte picks the width and the encoding (SGILOG or SGILOG24). */
#include "tiff_memio.h"

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
  TIFF *tif = mem_open(&m, "w");
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
