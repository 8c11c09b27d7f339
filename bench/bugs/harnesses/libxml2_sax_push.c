/* A harness of the push parser with the caller's own SAX callbacks: the first 4 input bytes are the
 * parser options (xmlCtxtUseOptions), the rest the document. */
#include <stdint.h>
#include <string.h>
#include <libxml/parser.h>

typedef struct { unsigned elements, chars; } counts;

static void on_start(void *user, const xmlChar *name, const xmlChar **atts) {
  (void)name; (void)atts;
  ((counts *)user)->elements++;
}
static void on_end(void *user, const xmlChar *name) { (void)name; ((counts *)user)->elements--; }
static void on_chars(void *user, const xmlChar *text, int len) { (void)text; ((counts *)user)->chars += (unsigned)len; }
static void quiet(void *ctx, const char *msg, ...) { (void)ctx; (void)msg; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 4) return 0;
  xmlSetGenericErrorFunc(NULL, quiet);
  int options = (int)((uint32_t)data[0] | (uint32_t)data[1] << 8 | (uint32_t)data[2] << 16);
  options &= ~(XML_PARSE_XINCLUDE | XML_PARSE_DTDLOAD);  /* no files from outside the input */
  xmlSAXHandler sax;
  memset(&sax, 0, sizeof sax);
  sax.startElement = on_start;
  sax.endElement = on_end;
  sax.characters = on_chars;
  counts user = {0, 0};
  xmlParserCtxtPtr ctxt = xmlCreatePushParserCtxt(&sax, &user, NULL, 0, NULL);
  if (ctxt == NULL) return 0;
  xmlCtxtUseOptions(ctxt, options);
  xmlParseChunk(ctxt, (const char *)data + 4, (int)(size - 4), 1);
  xmlFreeParserCtxt(ctxt);
  return 0;
}
