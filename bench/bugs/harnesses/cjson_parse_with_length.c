#include <stdint.h>
#include <stddef.h>
#include "cJSON.h"
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  cJSON_Delete(cJSON_ParseWithLength((const char *)data, size));
  return 0;
}
