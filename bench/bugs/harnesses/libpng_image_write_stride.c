/* A harness of the simplified write API with the caller's row stride: 5 control bytes (width,
 * height, format, flags, extra stride), then the pixels; a negative stride writes bottom-up. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <png.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 5) return 0;
  png_image image;
  memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  image.width = 1 + data[0] % 64;
  image.height = 1 + data[1] % 64;
  image.format = data[2] & ~PNG_FORMAT_FLAG_COLORMAP;
  int convert_to_8bit = data[3] & 1;
  png_int_32 stride = (png_int_32)PNG_IMAGE_ROW_STRIDE(image) + (data[4] & 0x7f);
  if (data[3] & 2) stride = -stride;  /* bottom-up, as the API documents */
  size_t need = PNG_IMAGE_BUFFER_SIZE(image, stride < 0 ? -stride : stride);
  uint8_t *pixels = calloc(1, need);
  if (pixels == NULL) return 0;
  memcpy(pixels, data + 5, size - 5 < need ? size - 5 : need);
  png_alloc_size_t written = 0;
  if (png_image_write_to_memory(&image, NULL, &written, convert_to_8bit, pixels, stride, NULL) && written) {
    void *out = malloc(written);
    if (out != NULL) png_image_write_to_memory(&image, out, &written, convert_to_8bit, pixels, stride, NULL);
    free(out);
  }
  png_image_free(&image);
  free(pixels);
  return 0;
}
