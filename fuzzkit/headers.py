"""Reading a library's public function prototypes from its header with libclang."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Sequence
from pathlib import Path
from typing import Any

from fuzzkit.api import FunctionDecl, Param
from fuzzkit.errors import ToolchainError
from fuzzkit.tools import resource_include_dir

_LIBCLANG_HINT = (
    "install the PyPI `libclang` wheel into this environment (`pip install libclang`); "
    "it bundles its own libclang shared library"
)


def cindex_module() -> Any:
    """The libclang bindings (``clang.cindex``); a :class:`ToolchainError` says how to get them."""
    try:
        from clang import cindex
    except ImportError as exc:
        raise ToolchainError("the libclang Python bindings are not installed", _LIBCLANG_HINT) from exc
    return cindex


def parse_header(
    header: Path, include_dirs: Sequence[str | Path] = (), defines: Iterable[str] = (),
    parts: bool = False, inline: bool = False, before: Sequence[str | Path] = (),
) -> list[FunctionDecl]:  # fmt: skip
    """The non-variadic, non-inline functions declared in ``header`` itself, in order.

    Declarations pulled in from other headers (siblings, system headers) are ignored; export
    macros such as ``ACME_PUBLIC(acme_t *)`` are expanded by the real preprocessor, so they come
    out as plain types. Types are spelled the way clang prints them (``const char *``).

    Args:
        header: The header to read.
        include_dirs: ``-I`` directories the header needs.
        defines: ``-D`` macros (``NAME`` or ``NAME=VALUE``) the library is built with.
        parts: An umbrella header's parts count as the header itself: a header that includes
            files from a directory below its own (``api/lib.h`` including ``api/lib/base.h``,
            parts that refuse to be included alone) declares what they declare, to be included
            as ``header``. :func:`parse_headers` asks for them only for names no header
            declares itself.
        before: The headers included ahead of it (see :func:`parse_translation_unit`).
        inline: Instead, the static inline functions the header defines itself
            (``static inline void x_result_init(x_result *r)``): no library symbol, but callable
            by a harness that includes the header.

    Raises:
        ToolchainError: libclang is unavailable or cannot read the header at all.
    """
    cindex = cindex_module()
    header = Path(header).resolve()
    tu = parse_translation_unit(cindex, header, include_dirs, defines, before=before)
    fatal = [d for d in tu.diagnostics if d.severity >= cindex.Diagnostic.Fatal]
    decls = _collect(cindex, tu, header, parts, inline)
    if fatal and not decls:
        raise ToolchainError(
            f"cannot parse {header.name}: {fatal[0].spelling}",
            "add the include_dirs and defines the header needs to the recipe's `build:` section",
        )
    return decls


def parse_translation_unit(
    cindex: Any, header: Path, include_dirs: Sequence[str | Path], defines: Iterable[str],
    detailed: bool = False, before: Sequence[str | Path] = (),
) -> Any:  # fmt: skip
    """``header`` parsed as C with the library's flags; ``detailed`` keeps macros and all comments.

    ``before``: the headers a harness includes ahead of this one. A header that uses types it
    does not declare (``pdu.h`` naming ``lib_pdu *``, declared in a sibling its umbrella
    includes first) parses alone with each unknown type silently read as ``int``, so it is
    parsed again after them when alone it names an unknown type.
    """
    tu = _parse(cindex, header, include_dirs, defines, detailed, ())
    others = [Path(h).resolve() for h in before if Path(h).resolve() != header.resolve()]
    if not others or not _unknown_types(tu):
        return tu
    after = _parse(cindex, header, include_dirs, defines, detailed, others)
    return after if _unknown_types(after) < _unknown_types(tu) else tu


def _unknown_types(tu: Any) -> int:
    return sum(1 for d in tu.diagnostics if d.spelling.startswith("unknown type name "))


def _parse(
    cindex: Any, header: Path, include_dirs: Sequence[str | Path], defines: Iterable[str],
    detailed: bool, before: Sequence[Path],
) -> Any:  # fmt: skip
    if not header.is_file():
        raise ToolchainError(f"header {header} does not exist", "check `headers:` in the recipe")
    args = ["-x", "c", "-std=gnu11", *(f"-I{d}" for d in include_dirs), *(f"-D{d}" for d in defines)]
    args += [a for h in before for a in ("-include", str(h))]
    builtin = resource_include_dir()
    if builtin:
        # Without the compiler's own headers, size_t and friends silently become int.
        args.append(f"-I{builtin}")
    try:
        index = cindex.Index.create()
        options = (cindex.TranslationUnit.PARSE_SKIP_FUNCTION_BODIES
                   | cindex.TranslationUnit.PARSE_INCOMPLETE)
        if detailed:
            options |= cindex.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD
            args.append("-fparse-all-comments")
        return index.parse(str(header), args=args, options=options)
    except cindex.LibclangError as exc:
        raise ToolchainError(f"libclang cannot be loaded: {exc}", _LIBCLANG_HINT) from exc
    except cindex.TranslationUnitLoadError as exc:
        raise ToolchainError(f"libclang could not parse {header}: {exc}", _LIBCLANG_HINT) from exc


# The whole comment is internal documentation: Doxygen's command comes first (`/*! \internal */`).
# One later in the text (`\internal Currently, the function also clears...`) only starts a note.
_INTERNAL = re.compile(r"^(?:/\*[*!]?|//[/!]?|[\s*<])*[\\@]internal\b")


def documented_internal(comment: str) -> bool:
    """Whether a documentation comment declares its function internal to the library."""
    return bool(_INTERNAL.match(comment))


def deprecated_functions(
    header: Path, include_dirs: Sequence[str | Path] = (), defines: Iterable[str] = ()
) -> set[str]:
    r"""Functions ``header`` marks deprecated or internal (Doxygen's ``\internal``, ``@internal``).

    Deprecated functions (``__attribute__((deprecated))``, ``[[deprecated]]``) are often deprecated
    for being unsafe on untrusted input (``acme_decode_fast``, which trusts its input length), so
    they make poor default fuzz targets;
    an internal helper trusts its caller (``utf16_to_utf8(out, in, maxlen)`` reads ``in`` up to a
    terminator and bounds only ``out``).
    """
    cindex = cindex_module()
    header = Path(header).resolve()
    tu = parse_translation_unit(cindex, header, include_dirs, defines)
    return {
        c.spelling
        for c in tu.cursor.get_children()
        if c.kind == cindex.CursorKind.FUNCTION_DECL
        and declared_by(c, header, parts=True)
        and (c.availability == cindex.AvailabilityKind.DEPRECATED or documented_internal(c.raw_comment or ""))
    }


def parse_headers(
    headers: Iterable[str | Path],
    include_dirs: Sequence[str | Path] = (),
    defines: Iterable[str] = (),
    skip_unparsable: bool = False,
) -> list[FunctionDecl]:
    """:func:`parse_header` over several headers, first declaration of each name winning.

    Then what umbrella headers' parts declare that no header declares itself, as the umbrella's.
    ``skip_unparsable``: a header libclang cannot read adds nothing instead of raising.
    """
    seen: dict[str, FunctionDecl] = {}
    defines, headers = list(defines), list(headers)
    for parts in (False, True):
        for i, header in enumerate(headers):
            try:
                decls = parse_header(Path(header), include_dirs, defines, parts, before=headers[:i])
            except ToolchainError:
                if skip_unparsable or parts:
                    continue
                raise
            for decl in decls:
                seen.setdefault(decl.name, decl)
    return list(seen.values())


def inline_functions(headers: Iterable[str | Path], include_dirs: Sequence[str | Path] = (),
                     defines: Iterable[str] = (), known: Collection[str] = ()) -> list[FunctionDecl]:
    """The static inline functions the headers define, but for ``known`` names (see :func:`parse_header`).

    ``static inline void x_result_destroy(x_result *r)`` is how a caller releases what
    ``x_next(&r, data, len)`` filled, though the library defines no such symbol.
    """
    seen: dict[str, FunctionDecl] = {}
    defines = list(defines)
    for header in headers:
        try:
            decls = parse_header(Path(header), include_dirs, defines, inline=True)
        except ToolchainError:
            continue
        for decl in decls:
            if decl.name not in known:
                seen.setdefault(decl.name, decl)
    return list(seen.values())


def canonical_types(
    headers: Iterable[str | Path],
    include_dirs: Sequence[str | Path] = (),
    defines: Iterable[str] = (),
) -> dict[str, str]:
    """Parameter and result types of the headers' functions, mapped to their canonical types.

    A library's own typedefs (``typedef unsigned char lib_uint8_t``) hide what a parameter
    is; the canonical type (libclang ``get_canonical()``: every typedef resolved,
    ``const lib_uint8_t *`` -> ``const unsigned char *``) shows bytes and lengths as such.
    Only types whose canonical spelling differs are listed. Unparsable headers are skipped.
    """
    cindex = cindex_module()
    found: dict[str, str] = {}
    defines = list(defines)
    headers = list(headers)
    for i, name in enumerate(headers):
        header = Path(name).resolve()
        try:
            tu = parse_translation_unit(cindex, header, include_dirs, defines, before=headers[:i])
        except ToolchainError:
            continue
        for cursor in tu.cursor.get_children():
            if cursor.kind != cindex.CursorKind.FUNCTION_DECL:
                continue
            for ctype in (cursor.result_type, *(a.type for a in cursor.get_arguments())):
                canonical = ctype.get_canonical().spelling
                if canonical != ctype.spelling:
                    found.setdefault(ctype.spelling, canonical)
    return found


def declared_by(cursor: Any, header: Path, parts: bool = False) -> bool:
    """Whether ``cursor`` is declared in ``header`` (or, with ``parts``, in a file below its directory)."""
    if cursor.location.file is None:
        return False
    path = Path(cursor.location.file.name).resolve()
    return path == header or (parts and path.parent != header.parent and path.is_relative_to(header.parent))


def _collect(cindex: Any, tu: Any, header: Path, parts: bool, inline: bool = False) -> list[FunctionDecl]:
    """The header's prototypes of the library's functions, or (``inline``) its static inline ones."""
    kinds = cindex.CursorKind
    found: dict[str, FunctionDecl] = {}
    for cursor in tu.cursor.get_children():
        if cursor.kind != kinds.FUNCTION_DECL or not declared_by(cursor, header, parts):
            continue
        static = cursor.storage_class == cindex.StorageClass.STATIC
        if inline:  # (bodies are skipped in parsing: a static function in a header is defined there)
            if not static or cursor.spelling in found or cursor.spelling.startswith("_"):
                continue  # the helpers a caller may use, defined in the header itself
        elif cursor.spelling in found or cursor.is_definition() or static:
            continue  # a definition in a header is a static/inline helper, not the library's
        ftype = cursor.type
        if ftype.kind == cindex.TypeKind.FUNCTIONPROTO and ftype.is_function_variadic():
            continue
        params = tuple(Param(name=arg.spelling, type=arg.type.spelling) for arg in cursor.get_arguments())
        found[cursor.spelling] = FunctionDecl(
            name=cursor.spelling,
            return_type=cursor.result_type.spelling,
            params=params,
            header=header.name,
        )
    return list(found.values())
