"""The offline model's compile-error fixer: clang diagnostics in, an edited harness out.

:func:`fix_harness` reads clang and linker messages (``file:line:col: error: ...``,
``undefined reference to 'x'``) and applies one deterministic edit per problem it understands:
missing includes, misspelled API names, pointer casts, argument counts rebuilt from the
prototype, missing returns, redeclarations, unlinked calls. Clang's own fix-its go first; the
fixer's repairs then handle what they left. Every applied fix is described in one line a person
would record as a known fix; the ones a later draft should repeat (an include, a rename, a call
the library does not link) also come back as :class:`fuzzkit.guidance_facts.Rule` data.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from agents.offline.fixer_clang import add_tag, apply_fixits, tag_kinds
from agents.offline.fixer_core import FixerBase
from agents.offline.fixer_diag import Diag, parse_diagnostics
from agents.offline.fixer_edit import (
    arg_index,
    call_at,
    default_arg,
    expression_end,
    offset,
    split_args,
    statement_span,
)
from agents.offline.fixer_names import (
    missing_header,
    undeclared_function,
    undeclared_identifier,
    unknown_type,
    unlinked,
)
from agents.offline.fixer_types import address_of, opaque_variable
from fuzzkit.api import FunctionDecl
from fuzzkit.guidance_facts import Rule, unique
from fuzzkit.vocabulary import c_words

_FUZZ_SIGNATURE = "int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)"


@dataclass
class FixResult:
    """The edited harness, what was fixed (one line each) and what was not understood."""

    code: str
    fixes: list[str] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)
    rules: list[Rule] = field(default_factory=list)  # the fixes a later draft repeats, as data


def fix_harness(
    code: str,
    diagnostics: str,
    api: list[FunctionDecl],
    headers: list[str],
    known_fixes: list[Rule] | tuple[Rule, ...] = (),
) -> FixResult:
    """Fix what the diagnostics point at; the same input always gives the same output."""
    fixer = _Fixer(code, api, headers)
    fixer.apply_known(list(known_fixes))
    diags, links = parse_diagnostics(diagnostics)
    fixer.tags = tag_kinds(diags, api)
    # Clang's fix-its first: their edits win over any overlapping repair of the fixer's own.
    rest = [d for d in diags if not apply_fixits(fixer, d)]
    for d in rest:
        fixer.handle(d)
    for name in links:
        unlinked(fixer, name)
    fixer.finish()
    if not diags and not links and not fixer.fixes and diagnostics.strip():
        fixer.unresolved.append("no compiler error or linker message recognized in the output")
    return FixResult(fixer.code, list(dict.fromkeys(fixer.fixes)), list(dict.fromkeys(fixer.unresolved)),
                     unique(fixer.rules))


class _Fixer(FixerBase):
    """One handler per kind of diagnostic the fixer understands."""

    def handle(self, d: Diag) -> None:
        msg = d.message
        quoted = re.findall(r"'([^']*)'", msg)
        pos = offset(self.code, d.line, d.col)
        if m := re.search(r"must use '(struct|enum|union)' tag to refer to type '(\w+)'", msg):
            kind, name = m.group(1), m.group(2)
            if not add_tag(self, kind, name, pos, d.line):
                self.unresolved.append(f"line {d.line}: {name} must be written {kind} {name}")
        elif quoted and quoted[0] in self.tags and self.used_as_type(quoted[0], msg, pos):
            add_tag(self, self.tags[quoted[0]], quoted[0], pos, d.line)
        elif msg == "expected expression" and d.line in self.tagged_lines:
            pass  # clang's follow-up of a type name it did not know as a type: the tag fixes both
        elif m := re.search(r"variable has incomplete type '([^']+)'", msg):
            opaque_variable(self, m.group(1), pos)
        elif "file not found" in msg and quoted:
            missing_header(self, quoted[0])
        elif (
            re.search(r"implicit(ly)? declar|call to undeclared function|undeclared function", msg) and quoted
        ):
            undeclared_function(self, quoted[0])
        elif msg.startswith("unknown type name") and quoted:
            unknown_type(self, quoted[0], pos)
        elif re.search(r"use of undeclared identifier|undeclared \(first use", msg) and quoted:
            undeclared_identifier(self, quoted[0], msg, pos)
        elif re.search(
            r"(incompatible pointer|incompatible integer to pointer|incompatible "
            r"pointer to integer|discards qualifiers).*passing|^passing .* converts between",
            msg,
        ):
            self.cast_argument(msg, pos)
        elif re.search(
            r"(initializing|assigning to|returning) '[^']*'(?: \(aka '[^']*'\))? "
            r"(with an expression of type|from) '",
            msg,
        ) and re.search(r"incompatible|discards", msg):
            wanted = re.search(r"(?:initializing|assigning to|returning) '([^']*)'", msg)
            self.cast_expression(wanted.group(1) if wanted else quoted[0], pos)
        elif re.search(r"too (few|many) arguments to function call", msg):
            self.argument_count(msg, pos)
        elif "does not return a value" in msg or "control reaches end of non-void" in msg:
            self.missing_return(pos)
        elif msg.startswith("conflicting types for") and quoted:
            self.conflicting(quoted[0], d.line)
        elif re.search(r"expected ';' (after|at end of)", msg):
            self.edit(pos, pos, ";", f"add the missing ';' at line {d.line}")
        elif "use of undeclared label" in msg and quoted:
            self.missing_label(quoted[0])
        elif re.search(
            r"label at end of compound statement|a label can only be part of a "
            r"statement",
            msg,
        ):
            end = self.code.find(":", pos)
            if end >= 0:
                self.edit(end + 1, end + 1, " ;", f"put an empty statement after the label at line {d.line}")
        elif re.search(r"no member named '(\w+)' in", msg):
            self.drop_statement(pos, f"drop the statement using the unknown member {quoted[0]}")
        else:
            self.unresolved.append(f"line {d.line}: {msg}")

    def used_as_type(self, name: str, msg: str, pos: int) -> bool:
        """Whether the tag's name at ``pos`` stands where a type goes.

        In an expression clang reports a tag-only type as an undeclared identifier; only a
        cast or ``sizeof`` (the name followed by ``)`` or ``*``) is a type use there, not a
        call of a function that happens to share the tag's name.
        """
        if msg.startswith("unknown type name"):
            return bool(re.match(rf"{re.escape(name)}\b", self.code[pos:]))
        return "use of undeclared identifier" in msg and bool(
            re.match(rf"{re.escape(name)}\s*[)*]", self.code[pos:])
        )

    def cast_argument(self, msg: str, pos: int) -> None:
        if address_of(self, msg, pos):
            return  # a T * for a T ** wants the address, never a cast
        target = re.search(r"to parameter of type '([^']+)'", msg)
        if not target:
            self.unresolved.append(msg)
            return
        ctype = target.group(1)
        call = call_at(self.code, pos)
        where = f"at line {self.code.count(chr(10), 0, pos) + 1}"
        if call:
            where = f"{arg_index(self.code, call[1], pos) + 1} of {call[0]}"
        self.cast_at(pos, ctype, f"cast argument {where} to ({ctype})")

    def cast_expression(self, ctype: str, pos: int) -> None:
        line = self.code.count("\n", 0, pos) + 1
        # clang points at the declarator or the '=': the value starts after the '='.
        end = self.code.find(";", pos)
        eq = self.code.find("=", pos, end if end >= 0 else len(self.code))
        if eq >= 0 and self.code[eq + 1 : eq + 2] != "=":
            pos = eq + 1
        elif self.code.startswith("return", pos):
            pos += len("return")
        while pos < len(self.code) and self.code[pos] in " \t":
            pos += 1
        self.cast_at(pos, ctype, f"cast the value at line {line} to ({ctype})")

    def cast_at(self, pos: int, ctype: str, fix: str) -> None:
        end = expression_end(self.code, pos)
        expr = self.code[pos:end].strip()
        if not expr:
            self.unresolved.append(fix)
            return
        self.edit(pos, pos + len(self.code[pos:end].rstrip()), f"({ctype})({expr})", fix)

    def argument_count(self, msg: str, pos: int) -> None:
        call = call_at(self.code, pos)
        if call is None or call[0] not in self.api:
            self.unresolved.append(msg)
            return
        name, open_pos, close_pos = call
        fn = self.api[name]
        args = split_args(self.code[open_pos + 1 : close_pos])
        rebuilt = args[: len(fn.params)]
        for i in range(len(rebuilt), len(fn.params)):
            rebuilt.append(default_arg(fn, i, rebuilt))
        self.edit(
            open_pos + 1,
            close_pos,
            ", ".join(rebuilt),
            f"call {name} with its {len(fn.params)} declared arguments: {fn.prototype()}",
        )

    def missing_return(self, pos: int) -> None:
        brace = self.code.rfind("}", 0, pos + 1)
        if brace < 0:
            self.unresolved.append("non-void function without a return")
            return
        heads = re.findall(r"^[A-Za-z_][\w \t*]*?\b(\w+)\s*\([^;{}]*\)\s*\{", self.code[:brace], re.M)
        heads = [h for h in heads if h not in c_words("statement")]
        func = heads[-1] if heads else "the function"
        self.edit(brace, brace, "  return 0;\n", f"add return 0 at the end of {func}")

    def conflicting(self, name: str, line: int) -> None:
        lines = self.code.split("\n")
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        start = offset(self.code, line, 1)
        if name == "LLVMFuzzerTestOneInput":
            m = re.search(r"[^;{]*LLVMFuzzerTestOneInput\s*\([^)]*\)", self.code)
            if m:
                self.edit(
                    m.start(),
                    m.end(),
                    _FUZZ_SIGNATURE,
                    "declare LLVMFuzzerTestOneInput as int (const uint8_t *, size_t)",
                )
        elif name in self.api and text.rstrip().endswith(";") and "(" in text:
            self.edit(
                start, start + len(text), "", f"remove the redeclaration of {name} (the header declares it)"
            )
        elif name in self.api:
            self.rename(name, f"lf_{name}", "the harness's own function clashed with the API")
        else:
            self.unresolved.append(f"conflicting types for {name}")

    def missing_label(self, label: str) -> None:
        m = list(re.finditer(r"\n(\s*)return 0;\s*\n\}\s*$", self.code))
        if m:
            at = m[-1].start() + 1
            self.edit(
                at, at, f"{m[-1].group(1)}{label}: ;\n", f"add the {label} label before the final return"
            )
        else:
            self.unresolved.append(f"label {label} is used but never defined")

    def drop_statement(self, pos: int, fix: str) -> None:
        start, end = statement_span(self.code, pos)
        stmt = self.code[start:end]
        if "{" in stmt or "}" in stmt or re.match(r"\s*(if|for|while|switch)\b", stmt):
            self.unresolved.append(fix)
            return
        self.edit(start, end, f" /* {stmt.strip().replace('*/', '* /')} */", fix)
