/* A harness of png_set_quantize: the input is the palette (RGB triples) after two control bytes. */
#include <stdint.h>
#include <string.h>
#include <png.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2 + 3 * 2) return 0;
  int num_palette = (int)((size - 2) / 3);
  if (num_palette > PNG_MAX_PALETTE_LENGTH) num_palette = PNG_MAX_PALETTE_LENGTH;
  png_color palette[PNG_MAX_PALETTE_LENGTH];
  memcpy(palette, data + 2, (size_t)num_palette * 3);
  png_uint_16 histogram[PNG_MAX_PALETTE_LENGTH];
  for (int i = 0; i < num_palette; i++) histogram[i] = (png_uint_16)(palette[i].red * 7 + palette[i].blue);
  int maximum_colors = 1 + data[0] % num_palette;
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
  if (png == NULL) return 0;
  if (setjmp(png_jmpbuf(png)) == 0)
    png_set_quantize(png, palette, num_palette, maximum_colors, (data[1] & 1) ? histogram : NULL,
                     (data[1] >> 1) & 1);
  png_destroy_read_struct(&png, NULL, NULL);
  return 0;
}
