/* A harness of the pattern compiler: the input is a pattern, matched against a small tree. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <libxml/pattern.h>
#include <libxml/tree.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (text == NULL) return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  xmlPatternPtr pattern = xmlPatterncompile((const xmlChar *)text, NULL, XML_PATTERN_DEFAULT, NULL);
  if (pattern != NULL) {
    xmlDocPtr doc = xmlNewDoc((const xmlChar *)"1.0");
    xmlNodePtr root = xmlNewDocNode(doc, NULL, (const xmlChar *)"a", NULL);
    xmlDocSetRootElement(doc, root);
    xmlNodePtr child = xmlNewChild(root, NULL, (const xmlChar *)"b", NULL);
    xmlPatternMatch(pattern, root);
    xmlPatternMatch(pattern, child);
    xmlStreamCtxtPtr stream = xmlPatternGetStreamCtxt(pattern);
    if (stream != NULL) {
      xmlStreamPush(stream, (const xmlChar *)"a", NULL);
      xmlStreamPush(stream, (const xmlChar *)"b", NULL);
      xmlStreamPop(stream);
      xmlFreeStreamCtxt(stream);
    }
    xmlFreeDoc(doc);
    xmlFreePattern(pattern);
  }
  free(text);
  return 0;
}
