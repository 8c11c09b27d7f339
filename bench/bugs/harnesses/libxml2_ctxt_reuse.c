/* A harness of parser-context reuse: two documents read with one context (xmlCtxtReadMemory resets
 * it in between), as a program parsing many documents does. The input is split at the first NUL. */
#include <stdint.h>
#include <string.h>
#include <libxml/parser.h>

static void quiet(void *ctx, const char *msg, ...) { (void)ctx; (void)msg; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  xmlSetGenericErrorFunc(NULL, quiet);
  const uint8_t *cut = memchr(data, 0, size);
  size_t first = cut ? (size_t)(cut - data) : size;
  xmlParserCtxtPtr ctxt = xmlNewParserCtxt();
  if (ctxt == NULL) return 0;
  int options = XML_PARSE_NONET | XML_PARSE_RECOVER;
  xmlFreeDoc(xmlCtxtReadMemory(ctxt, (const char *)data, (int)first, NULL, NULL, options));
  if (cut)
    xmlFreeDoc(xmlCtxtReadMemory(ctxt, (const char *)cut + 1, (int)(size - first - 1), NULL, NULL, options));
  xmlFreeParserCtxt(ctxt);
  return 0;
}
