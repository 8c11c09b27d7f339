"""The C library names a harness may use, each with the standard header that declares it.

The fixer adds the header when a compile error names one of them; the experience skill leaves
them out when it lists the library calls a harness makes.
"""

from __future__ import annotations

LIBC: dict[str, str] = {}
for _header, _names in {
    "<stdlib.h>": "malloc calloc realloc free abort exit atoi atol strtol strtoul strtod qsort "
    "getenv mkstemp rand srand abs labs EXIT_SUCCESS EXIT_FAILURE",
    "<string.h>": "memcpy memmove memset memcmp memchr strlen strcmp strncmp strcpy strncpy "
    "strcat strncat strchr strrchr strstr strdup strndup strtok strerror",
    "<stdio.h>": "printf fprintf sprintf snprintf vsnprintf fopen fclose fread fwrite fmemopen "
    "fdopen fflush fputs fgets puts tmpfile fileno fseek ftell rewind perror FILE EOF "
    "stdin stdout stderr SEEK_SET SEEK_CUR SEEK_END",
    "<unistd.h>": "close read write lseek dup dup2 unlink getpid access ftruncate syscall ssize_t",
    "<fcntl.h>": "open O_RDONLY O_WRONLY O_RDWR O_CREAT",
    "<sys/mman.h>": "mmap munmap memfd_create",
    "<sys/syscall.h>": "SYS_memfd_create",
    "<stdint.h>": "uint8_t uint16_t uint32_t uint64_t int8_t int16_t int32_t int64_t intptr_t "
    "uintptr_t SIZE_MAX UINT32_MAX INT32_MAX UINT8_MAX",
    "<stddef.h>": "size_t ptrdiff_t offsetof NULL",
    "<stdbool.h>": "bool true false",
    "<stdarg.h>": "va_list va_start va_end va_arg va_copy",
    "<assert.h>": "assert",
    "<limits.h>": "INT_MAX INT_MIN UINT_MAX LONG_MAX LONG_MIN CHAR_BIT",
    "<errno.h>": "errno",
    "<math.h>": "isnan isinf fabs floor ceil pow sqrt",
    "<ctype.h>": "isalpha isdigit isspace toupper tolower isprint isxdigit",
}.items():
    for _name in _names.split():
        LIBC[_name] = _header
