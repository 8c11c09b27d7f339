/* A harness of reading a palette PNG: 4 control bytes (width, palette size, colours kept, flags),
 * the palette (RGB triples), then 8-bit pixel indices. The PNG is written with libpng's own writer
 * (with a tRNS chunk of the palette's reds; like a file from elsewhere it may hold indices past the
 * palette) and read back row by row, quantized when fewer colours are kept. Flags: 1 gives the
 * palette and transparency the getters return back to their setters, as an editing program does;
 * 2 frees the info's palette (png_free_data) before the rows are read; 4 expands the palette to RGB. */
#include "png_memio.h"

static int write_png(membuf *out, uint32_t width, uint32_t height, png_colorp palette, int entries,
                     const uint8_t *pixels) {
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
  png_infop info = png ? png_create_info_struct(png) : NULL;
  if (info == NULL || setjmp(png_jmpbuf(png))) { png_destroy_write_struct(&png, &info); return 0; }
  png_set_write_fn(png, out, membuf_put, membuf_flush);
  png_set_IHDR(png, info, width, height, 8, PNG_COLOR_TYPE_PALETTE, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_set_PLTE(png, info, palette, entries);
  png_byte alpha[256];
  for (int i = 0; i < entries; i++) alpha[i] = palette[i].red;
  png_set_tRNS(png, info, alpha, entries, NULL);
  png_write_info(png, info);
  for (uint32_t y = 0; y < height; y++) png_write_row(png, pixels + (size_t)y * width);
  png_write_end(png, info);
  png_destroy_write_struct(&png, &info);
  return 1;
}

static void reset_from_getters(png_structp png, png_infop info) {
  png_colorp palette = NULL;
  int entries = 0;
  if (png_get_PLTE(png, info, &palette, &entries)) png_set_PLTE(png, info, palette, entries);
  png_bytep alpha = NULL;
  int count = 0;
  png_color_16p colour = NULL;
  if (png_get_tRNS(png, info, &alpha, &count, &colour)) png_set_tRNS(png, info, alpha, count, colour);
}

static void read_back(membuf *in, int keep, int flags) {
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
  png_infop info = png ? png_create_info_struct(png) : NULL;
  png_bytep row = NULL;
  if (info == NULL || setjmp(png_jmpbuf(png))) { free(row); png_destroy_read_struct(&png, &info, NULL); return; }
  png_set_read_fn(png, in, membuf_get);
  png_read_info(png, info);
  if (flags & 1) reset_from_getters(png, info);
  if (flags & 2) png_free_data(png, info, PNG_FREE_PLTE, -1);
  if (flags & 4) png_set_expand(png);
  png_colorp palette = NULL;
  int entries = 0;
  if (png_get_PLTE(png, info, &palette, &entries) && keep < entries)
    png_set_quantize(png, palette, entries, keep, NULL, 0);
  png_read_update_info(png, info);
  row = malloc(png_get_rowbytes(png, info));
  for (uint32_t y = 0; row != NULL && y < png_get_image_height(png, info); y++) png_read_row(png, row, NULL);
  free(row);
  png_destroy_read_struct(&png, &info, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 4) return 0;
  uint32_t width = 1 + data[0] % 32;
  int entries = 1 + data[1] % 256, keep = 1 + data[2] % entries;
  if (size < 4 + (size_t)entries * 3 + width) return 0;
  png_color palette[256];
  memcpy(palette, data + 4, (size_t)entries * 3);
  const uint8_t *pixels = data + 4 + entries * 3;
  uint32_t height = (uint32_t)((size - 4 - (size_t)entries * 3) / width);
  if (height > 64) height = 64;
  membuf png = {NULL, 0, 0, 0};
  if (write_png(&png, width, height, palette, entries, pixels)) read_back(&png, keep, data[3]);
  free(png.data);
  return 0;
}
