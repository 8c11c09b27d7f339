/* A harness of the simplified write API: 4 control bytes (width, height, format, flags), then the
 * pixels, written to memory with png_image_write_to_memory. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <png.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 4) return 0;
  png_image image;
  memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  image.width = 1 + data[0] % 64;
  image.height = 1 + data[1] % 64;
  image.format = data[2] & ~PNG_FORMAT_FLAG_COLORMAP;  /* no colormap: the call below passes none */
  int convert_to_8bit = data[3] & 1;
  size_t need = PNG_IMAGE_SIZE(image);
  uint8_t *pixels = calloc(1, need);
  if (pixels == NULL) return 0;
  memcpy(pixels, data + 4, size - 4 < need ? size - 4 : need);
  png_alloc_size_t written = 0;
  if (png_image_write_to_memory(&image, NULL, &written, convert_to_8bit, pixels, 0, NULL) && written) {
    void *out = malloc(written);
    if (out != NULL) png_image_write_to_memory(&image, out, &written, convert_to_8bit, pixels, 0, NULL);
    free(out);
  }
  png_image_free(&image);
  free(pixels);
  return 0;
}
