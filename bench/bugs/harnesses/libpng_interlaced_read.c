/* A harness of the simplified read API on interlaced 16-bit images: 5 control bytes (width, height,
 * colour type, format read, extra row stride), then the samples. The PNG is written interlaced
 * (Adam7) with libpng's own writer, then read back into the caller's buffer with a padded stride. */
#include "png_memio.h"

static const int colour_types[] = {PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA, PNG_COLOR_TYPE_RGB,
                                   PNG_COLOR_TYPE_RGB_ALPHA};

static int write_png(membuf *out, uint32_t width, uint32_t height, int colour, const uint8_t *samples,
                     size_t have) {
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
  png_infop info = png ? png_create_info_struct(png) : NULL;
  uint8_t *row = NULL;
  if (info == NULL || setjmp(png_jmpbuf(png))) { free(row); png_destroy_write_struct(&png, &info); return 0; }
  png_set_write_fn(png, out, membuf_put, membuf_flush);
  png_set_IHDR(png, info, width, height, 16, colour, PNG_INTERLACE_ADAM7, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  size_t row_bytes = png_get_rowbytes(png, info);
  row = calloc(1, row_bytes);
  int passes = png_set_interlace_handling(png);
  for (int pass = 0; row != NULL && pass < passes; pass++)
    for (uint32_t y = 0; y < height; y++) {
      size_t at = ((size_t)y * row_bytes) % (have ? have : 1);
      memcpy(row, samples + at, have - at < row_bytes ? have - at : row_bytes);
      png_write_row(png, row);
    }
  png_write_end(png, info);
  free(row);
  png_destroy_write_struct(&png, &info);
  return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 6) return 0;
  uint32_t width = 1 + data[0] % 32, height = 1 + data[1] % 32;
  membuf png = {NULL, 0, 0, 0};
  if (write_png(&png, width, height, colour_types[data[2] % 4], data + 5, size - 5)) {
    png_image image;
    memset(&image, 0, sizeof image);
    image.version = PNG_IMAGE_VERSION;
    if (png_image_begin_read_from_memory(&image, png.data, png.size)) {
      image.format = data[3] & ~PNG_FORMAT_FLAG_COLORMAP;
      png_int_32 stride = (png_int_32)PNG_IMAGE_ROW_STRIDE(image) + data[4] % 64;
      void *buffer = malloc(PNG_IMAGE_BUFFER_SIZE(image, stride));
      if (buffer != NULL) png_image_finish_read(&image, NULL, buffer, stride, NULL);
      free(buffer);
      png_image_free(&image);
    }
  }
  free(png.data);
  return 0;
}
