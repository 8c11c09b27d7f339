/* A harness of the schema parser: the input is an XML Schema document. */
#include <stdint.h>
#include <stddef.h>
#include <libxml/parser.h>
#include <libxml/xmlschemas.h>

static void quiet(void *ctx, const char *msg, ...) { (void)ctx; (void)msg; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  xmlSetGenericErrorFunc(NULL, quiet);
  xmlSchemaParserCtxtPtr ctxt = xmlSchemaNewMemParserCtxt((const char *)data, (int)size);
  if (ctxt == NULL) return 0;
  xmlSchemaFree(xmlSchemaParse(ctxt));
  xmlSchemaFreeParserCtxt(ctxt);
  return 0;
}
