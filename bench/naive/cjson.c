/* Naive cJSON baseline: the input, NUL-terminated, goes to cJSON_Parse once. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "cJSON.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  cJSON_Delete(cJSON_Parse(text));
  free(text);
  return 0;
}
