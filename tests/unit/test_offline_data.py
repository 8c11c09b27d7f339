# ruff: noqa: E501
"""Real public APIs (clang-rendered prototypes) shared by the offline-engine unit tests.

The prototypes are what ``fuzzkit.headers.parse_header`` + ``FunctionDecl.prototype()`` give for
cJSON 1.7.15, zlib 1.2.13 and libyaml 0.2.5 headers.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from agents.offline import type_table
from agents.offline.cdecl import parse_prototypes
from agents.offline.type_table import read_types
from fuzzkit.api import FunctionDecl

CJSON = """\
const char *cJSON_Version(void);
void cJSON_InitHooks(cJSON_Hooks *hooks);
cJSON *cJSON_Parse(const char *value);
cJSON *cJSON_ParseWithLength(const char *value, size_t buffer_length);
cJSON *cJSON_ParseWithOpts(const char *value, const char **return_parse_end, cJSON_bool require_null_terminated);
cJSON *cJSON_ParseWithLengthOpts(const char *value, size_t buffer_length, const char **return_parse_end, cJSON_bool require_null_terminated);
char *cJSON_Print(const cJSON *item);
char *cJSON_PrintUnformatted(const cJSON *item);
char *cJSON_PrintBuffered(const cJSON *item, int prebuffer, cJSON_bool fmt);
cJSON_bool cJSON_PrintPreallocated(cJSON *item, char *buffer, const int length, const cJSON_bool format);
void cJSON_Delete(cJSON *item);
int cJSON_GetArraySize(const cJSON *array);
cJSON *cJSON_GetArrayItem(const cJSON *array, int index);
cJSON *cJSON_GetObjectItem(const cJSON *const object, const char *const string);
cJSON *cJSON_GetObjectItemCaseSensitive(const cJSON *const object, const char *const string);
cJSON_bool cJSON_HasObjectItem(const cJSON *object, const char *string);
const char *cJSON_GetErrorPtr(void);
char *cJSON_GetStringValue(const cJSON *const item);
double cJSON_GetNumberValue(const cJSON *const item);
cJSON_bool cJSON_IsInvalid(const cJSON *const item);
cJSON_bool cJSON_IsFalse(const cJSON *const item);
cJSON_bool cJSON_IsTrue(const cJSON *const item);
cJSON_bool cJSON_IsBool(const cJSON *const item);
cJSON_bool cJSON_IsNull(const cJSON *const item);
cJSON_bool cJSON_IsNumber(const cJSON *const item);
cJSON_bool cJSON_IsString(const cJSON *const item);
cJSON_bool cJSON_IsArray(const cJSON *const item);
cJSON_bool cJSON_IsObject(const cJSON *const item);
cJSON_bool cJSON_IsRaw(const cJSON *const item);
cJSON *cJSON_CreateNull(void);
cJSON *cJSON_CreateTrue(void);
cJSON *cJSON_CreateFalse(void);
cJSON *cJSON_CreateBool(cJSON_bool boolean);
cJSON *cJSON_CreateNumber(double num);
cJSON *cJSON_CreateString(const char *string);
cJSON *cJSON_CreateRaw(const char *raw);
cJSON *cJSON_CreateArray(void);
cJSON *cJSON_CreateObject(void);
cJSON *cJSON_CreateStringReference(const char *string);
cJSON *cJSON_CreateObjectReference(const cJSON *child);
cJSON *cJSON_CreateArrayReference(const cJSON *child);
cJSON *cJSON_CreateIntArray(const int *numbers, int count);
cJSON *cJSON_CreateFloatArray(const float *numbers, int count);
cJSON *cJSON_CreateDoubleArray(const double *numbers, int count);
cJSON *cJSON_CreateStringArray(const char *const *strings, int count);
cJSON_bool cJSON_AddItemToArray(cJSON *array, cJSON *item);
cJSON_bool cJSON_AddItemToObject(cJSON *object, const char *string, cJSON *item);
cJSON_bool cJSON_AddItemToObjectCS(cJSON *object, const char *string, cJSON *item);
cJSON_bool cJSON_AddItemReferenceToArray(cJSON *array, cJSON *item);
cJSON_bool cJSON_AddItemReferenceToObject(cJSON *object, const char *string, cJSON *item);
cJSON *cJSON_DetachItemViaPointer(cJSON *parent, cJSON *const item);
cJSON *cJSON_DetachItemFromArray(cJSON *array, int which);
void cJSON_DeleteItemFromArray(cJSON *array, int which);
cJSON *cJSON_DetachItemFromObject(cJSON *object, const char *string);
cJSON *cJSON_DetachItemFromObjectCaseSensitive(cJSON *object, const char *string);
void cJSON_DeleteItemFromObject(cJSON *object, const char *string);
void cJSON_DeleteItemFromObjectCaseSensitive(cJSON *object, const char *string);
cJSON_bool cJSON_InsertItemInArray(cJSON *array, int which, cJSON *newitem);
cJSON_bool cJSON_ReplaceItemViaPointer(cJSON *const parent, cJSON *const item, cJSON *replacement);
cJSON_bool cJSON_ReplaceItemInArray(cJSON *array, int which, cJSON *newitem);
cJSON_bool cJSON_ReplaceItemInObject(cJSON *object, const char *string, cJSON *newitem);
cJSON_bool cJSON_ReplaceItemInObjectCaseSensitive(cJSON *object, const char *string, cJSON *newitem);
cJSON *cJSON_Duplicate(const cJSON *item, cJSON_bool recurse);
cJSON_bool cJSON_Compare(const cJSON *const a, const cJSON *const b, const cJSON_bool case_sensitive);
void cJSON_Minify(char *json);
cJSON *cJSON_AddNullToObject(cJSON *const object, const char *const name);
cJSON *cJSON_AddTrueToObject(cJSON *const object, const char *const name);
cJSON *cJSON_AddFalseToObject(cJSON *const object, const char *const name);
cJSON *cJSON_AddBoolToObject(cJSON *const object, const char *const name, const cJSON_bool boolean);
cJSON *cJSON_AddNumberToObject(cJSON *const object, const char *const name, const double number);
cJSON *cJSON_AddStringToObject(cJSON *const object, const char *const name, const char *const string);
cJSON *cJSON_AddRawToObject(cJSON *const object, const char *const name, const char *const raw);
cJSON *cJSON_AddObjectToObject(cJSON *const object, const char *const name);
cJSON *cJSON_AddArrayToObject(cJSON *const object, const char *const name);
double cJSON_SetNumberHelper(cJSON *object, double number);
char *cJSON_SetValuestring(cJSON *object, const char *valuestring);
void *cJSON_malloc(size_t size);
void cJSON_free(void *object);
"""

ZLIB = """\
const char *zlibVersion(void);
int deflate(z_streamp strm, int flush);
int deflateEnd(z_streamp strm);
int inflate(z_streamp strm, int flush);
int inflateEnd(z_streamp strm);
int deflateSetDictionary(z_streamp strm, const Bytef *dictionary, uInt dictLength);
int deflateGetDictionary(z_streamp strm, Bytef *dictionary, uInt *dictLength);
int deflateCopy(z_streamp dest, z_streamp source);
int deflateReset(z_streamp strm);
int deflateParams(z_streamp strm, int level, int strategy);
int deflateTune(z_streamp strm, int good_length, int max_lazy, int nice_length, int max_chain);
uLong deflateBound(z_streamp strm, uLong sourceLen);
int deflatePending(z_streamp strm, unsigned int *pending, int *bits);
int deflatePrime(z_streamp strm, int bits, int value);
int deflateSetHeader(z_streamp strm, gz_headerp head);
int inflateSetDictionary(z_streamp strm, const Bytef *dictionary, uInt dictLength);
int inflateGetDictionary(z_streamp strm, Bytef *dictionary, uInt *dictLength);
int inflateSync(z_streamp strm);
int inflateCopy(z_streamp dest, z_streamp source);
int inflateReset(z_streamp strm);
int inflateReset2(z_streamp strm, int windowBits);
int inflatePrime(z_streamp strm, int bits, int value);
long inflateMark(z_streamp strm);
int inflateGetHeader(z_streamp strm, gz_headerp head);
int inflateBack(z_streamp strm, in_func in, void *in_desc, out_func out, void *out_desc);
int inflateBackEnd(z_streamp strm);
uLong zlibCompileFlags(void);
int compress(Bytef *dest, uLongf *destLen, const Bytef *source, uLong sourceLen);
int compress2(Bytef *dest, uLongf *destLen, const Bytef *source, uLong sourceLen, int level);
uLong compressBound(uLong sourceLen);
int uncompress(Bytef *dest, uLongf *destLen, const Bytef *source, uLong sourceLen);
int uncompress2(Bytef *dest, uLongf *destLen, const Bytef *source, uLong *sourceLen);
gzFile gzdopen(int fd, const char *mode);
int gzbuffer(gzFile file, unsigned int size);
int gzsetparams(gzFile file, int level, int strategy);
int gzread(gzFile file, voidp buf, unsigned int len);
z_size_t gzfread(voidp buf, z_size_t size, z_size_t nitems, gzFile file);
int gzwrite(gzFile file, voidpc buf, unsigned int len);
z_size_t gzfwrite(voidpc buf, z_size_t size, z_size_t nitems, gzFile file);
int gzprintf(gzFile file, const char *format);
int gzputs(gzFile file, const char *s);
char *gzgets(gzFile file, char *buf, int len);
int gzputc(gzFile file, int c);
int gzgetc(gzFile file);
int gzungetc(int c, gzFile file);
int gzflush(gzFile file, int flush);
int gzrewind(gzFile file);
int gzeof(gzFile file);
int gzdirect(gzFile file);
int gzclose(gzFile file);
int gzclose_r(gzFile file);
int gzclose_w(gzFile file);
const char *gzerror(gzFile file, int *errnum);
void gzclearerr(gzFile file);
uLong adler32(uLong adler, const Bytef *buf, uInt len);
uLong adler32_z(uLong adler, const Bytef *buf, z_size_t len);
uLong crc32(uLong crc, const Bytef *buf, uInt len);
uLong crc32_z(uLong crc, const Bytef *buf, z_size_t len);
uLong crc32_combine_op(uLong crc1, uLong crc2, uLong op);
int deflateInit_(z_streamp strm, int level, const char *version, int stream_size);
int inflateInit_(z_streamp strm, const char *version, int stream_size);
int deflateInit2_(z_streamp strm, int level, int method, int windowBits, int memLevel, int strategy, const char *version, int stream_size);
int inflateInit2_(z_streamp strm, int windowBits, const char *version, int stream_size);
int inflateBackInit_(z_streamp strm, int windowBits, unsigned char *window, const char *version, int stream_size);
int gzgetc_(gzFile file);
gzFile gzopen(const char *, const char *);
long gzseek(gzFile, long, int);
long gztell(gzFile);
long gzoffset(gzFile);
uLong adler32_combine(uLong, uLong, long);
uLong crc32_combine(uLong, uLong, long);
uLong crc32_combine_gen(long);
const char *zError(int);
int inflateSyncPoint(z_streamp);
const z_crc_t *get_crc_table(void);
int inflateUndermine(z_streamp, int);
int inflateValidate(z_streamp, int);
unsigned long inflateCodesUsed(z_streamp);
int inflateResetKeep(z_streamp);
int deflateResetKeep(z_streamp);
int gzvprintf(gzFile file, const char *format, va_list va);
"""

YAML = """\
const char *yaml_get_version_string(void);
void yaml_get_version(int *major, int *minor, int *patch);
void yaml_token_delete(yaml_token_t *token);
int yaml_stream_start_event_initialize(yaml_event_t *event, yaml_encoding_t encoding);
int yaml_stream_end_event_initialize(yaml_event_t *event);
int yaml_document_start_event_initialize(yaml_event_t *event, yaml_version_directive_t *version_directive, yaml_tag_directive_t *tag_directives_start, yaml_tag_directive_t *tag_directives_end, int implicit);
int yaml_document_end_event_initialize(yaml_event_t *event, int implicit);
int yaml_alias_event_initialize(yaml_event_t *event, const yaml_char_t *anchor);
int yaml_scalar_event_initialize(yaml_event_t *event, const yaml_char_t *anchor, const yaml_char_t *tag, const yaml_char_t *value, int length, int plain_implicit, int quoted_implicit, yaml_scalar_style_t style);
int yaml_sequence_start_event_initialize(yaml_event_t *event, const yaml_char_t *anchor, const yaml_char_t *tag, int implicit, yaml_sequence_style_t style);
int yaml_sequence_end_event_initialize(yaml_event_t *event);
int yaml_mapping_start_event_initialize(yaml_event_t *event, const yaml_char_t *anchor, const yaml_char_t *tag, int implicit, yaml_mapping_style_t style);
int yaml_mapping_end_event_initialize(yaml_event_t *event);
void yaml_event_delete(yaml_event_t *event);
int yaml_document_initialize(yaml_document_t *document, yaml_version_directive_t *version_directive, yaml_tag_directive_t *tag_directives_start, yaml_tag_directive_t *tag_directives_end, int start_implicit, int end_implicit);
void yaml_document_delete(yaml_document_t *document);
yaml_node_t *yaml_document_get_node(yaml_document_t *document, int index);
yaml_node_t *yaml_document_get_root_node(yaml_document_t *document);
int yaml_document_add_scalar(yaml_document_t *document, const yaml_char_t *tag, const yaml_char_t *value, int length, yaml_scalar_style_t style);
int yaml_document_add_sequence(yaml_document_t *document, const yaml_char_t *tag, yaml_sequence_style_t style);
int yaml_document_add_mapping(yaml_document_t *document, const yaml_char_t *tag, yaml_mapping_style_t style);
int yaml_document_append_sequence_item(yaml_document_t *document, int sequence, int item);
int yaml_document_append_mapping_pair(yaml_document_t *document, int mapping, int key, int value);
int yaml_parser_initialize(yaml_parser_t *parser);
void yaml_parser_delete(yaml_parser_t *parser);
void yaml_parser_set_input_string(yaml_parser_t *parser, const unsigned char *input, size_t size);
void yaml_parser_set_input_file(yaml_parser_t *parser, FILE *file);
void yaml_parser_set_input(yaml_parser_t *parser, yaml_read_handler_t *handler, void *data);
void yaml_parser_set_encoding(yaml_parser_t *parser, yaml_encoding_t encoding);
int yaml_parser_scan(yaml_parser_t *parser, yaml_token_t *token);
int yaml_parser_parse(yaml_parser_t *parser, yaml_event_t *event);
int yaml_parser_load(yaml_parser_t *parser, yaml_document_t *document);
int yaml_emitter_initialize(yaml_emitter_t *emitter);
void yaml_emitter_delete(yaml_emitter_t *emitter);
void yaml_emitter_set_output_string(yaml_emitter_t *emitter, unsigned char *output, size_t size, size_t *size_written);
void yaml_emitter_set_output_file(yaml_emitter_t *emitter, FILE *file);
void yaml_emitter_set_output(yaml_emitter_t *emitter, yaml_write_handler_t *handler, void *data);
void yaml_emitter_set_encoding(yaml_emitter_t *emitter, yaml_encoding_t encoding);
void yaml_emitter_set_canonical(yaml_emitter_t *emitter, int canonical);
void yaml_emitter_set_indent(yaml_emitter_t *emitter, int indent);
void yaml_emitter_set_width(yaml_emitter_t *emitter, int width);
void yaml_emitter_set_unicode(yaml_emitter_t *emitter, int unicode);
void yaml_emitter_set_break(yaml_emitter_t *emitter, yaml_break_t line_break);
int yaml_emitter_emit(yaml_emitter_t *emitter, yaml_event_t *event);
int yaml_emitter_open(yaml_emitter_t *emitter);
int yaml_emitter_close(yaml_emitter_t *emitter);
int yaml_emitter_dump(yaml_emitter_t *emitter, yaml_document_t *document);
int yaml_emitter_flush(yaml_emitter_t *emitter);
"""


DATA = Path(__file__).parent / "data"
_TYPES_FILE = {"cjson": "cjson", "zlib": "zlib", "yaml": "libyaml"}


@cache
def types_text(name: str) -> str:
    """The ``## Types`` section prepare renders for that library's headers (same versions)."""
    return (DATA / f"{_TYPES_FILE[name]}.types.md").read_text()


def activate(name: str) -> None:
    """Make the library's Types table the active one, as the offline model does per prompt.

    Unit tests call the engine directly, without a prompt; ``tests/unit/conftest.py`` resets
    the table after each test.
    """
    type_table._ACTIVE.set(read_types(types_text(name)))


@cache
def _api(name: str) -> tuple[FunctionDecl, ...]:
    return tuple(parse_prototypes({"cjson": CJSON, "zlib": ZLIB, "yaml": YAML}[name]))


def api(name: str) -> tuple[FunctionDecl, ...]:
    """The parsed API of ``cjson``, ``zlib`` or ``yaml``, with its Types table made active."""
    activate(name)
    return _api(name)


def fn(lib: str, name: str) -> FunctionDecl:
    """One function of a library's API (its Types table made active)."""
    return next(f for f in api(lib) if f.name == name)


def test_the_shared_apis_parse_completely() -> None:
    assert [len(api(n)) for n in ("cjson", "zlib", "yaml")] == [78, 81, 48]
