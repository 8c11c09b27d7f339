/* A harness of the simplified API, write then read: 6 control bytes (width, height, format written,
 * format read, flags, background grey), then the pixels; a colormapped image takes its 256
 * colormap entries from the pixels' bytes. The PNG the write gives is read back with
 * png_image_finish_read. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <png.h>

static void read_back(const void *png, png_alloc_size_t png_size, const uint8_t *control) {
  png_image image;
  memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&image, png, png_size)) return;
  image.format = control[3];
  png_color background = {control[5], control[5], control[5]};
  size_t need = PNG_IMAGE_SIZE(image);
  void *buffer = malloc(need);
  void *colormap = malloc(PNG_IMAGE_COLORMAP_SIZE(image) + 1);
  if (buffer != NULL && colormap != NULL)
    png_image_finish_read(&image, (control[4] & 2) ? &background : NULL, buffer, 0, colormap);
  png_image_free(&image);
  free(buffer);
  free(colormap);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 6) return 0;
  png_image image;
  memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  image.width = 1 + data[0] % 32;
  image.height = 1 + data[1] % 32;
  image.format = data[2];
  image.colormap_entries = 256;
  size_t need = PNG_IMAGE_SIZE(image), have = size - 6;
  uint8_t *pixels = calloc(1, need);
  uint8_t colormap[256 * 4 * 2] = {0};  /* up to 4 channels of 16 bits */
  if (pixels == NULL) return 0;
  memcpy(pixels, data + 6, have < need ? have : need);
  memcpy(colormap, data + 6, have < sizeof colormap ? have : sizeof colormap);
  png_alloc_size_t written = 0;
  int convert = data[4] & 1;
  if (png_image_write_to_memory(&image, NULL, &written, convert, pixels, 0, colormap) && written) {
    void *out = malloc(written);
    if (out != NULL && png_image_write_to_memory(&image, out, &written, convert, pixels, 0, colormap))
      read_back(out, written, data);
    free(out);
  }
  png_image_free(&image);
  free(pixels);
  return 0;
}
