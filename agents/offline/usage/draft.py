"""A first draft written the way the library's own code uses the target.

The prompt's usage block (:class:`fuzzkit.usage_models.TargetProtocol`) holds the calls around
the target in the shortest usage function that makes its objects itself: an opener writing a
handle through ``&h`` with its constants, an error manager set up before reading, a stream
given callbacks over a memory buffer, the exact function that releases each object. The draft
replays that sequence with the fuzz input in place of the usage's data: every argument the
usage code passes as data becomes a NUL-terminated heap copy of the input (cast to the
parameter's type), every size becomes ``size``, constants stay as written. Objects the sequence
makes are released at the end with the function the library's code releases them with, and
only if they were made (a failed make jumps to the cleanup).

The draft is used only when complete: every name it writes is a variable it declares, an API
function, a constant of the headers, a callback or type the usage file defines, or the C
library's. Otherwise the synthesizer writes the harness (with the protocols' releasers).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from agents.offline.libc import LIBC
from agents.offline.synth_usage_fields import field_lines
from agents.offline.type_table import active
from fuzzkit.api import FunctionDecl
from fuzzkit.usage_models import Arg, FieldValue, Step, TargetProtocol, UsageFacts, type_key
from fuzzkit.vocabulary import c_words, has_verb

MAX_INPUT = 1 << 20
LOOP_BOUND = 4096
_IDENT = re.compile(r"(?<![.\w>])(?<!->)([A-Za-z_]\w*)\b")
_C_WORDS = c_words() | {"NULL", "size_t", "uint8_t", "data", "size"}
# A text parameter that names a file (the synthesizer's path role reads names the same way).
PATH_PARAM = re.compile(r"(path|filename|file_name|fname|^file$)", re.I)
_BYTE_ELEMENT = re.compile(r"\b(char|uint8_t|int8_t|u_char|unsigned char)\b")


@dataclass
class UsageDraft:
    """One harness body replayed from a usage sequence (see the module doc)."""

    target: FunctionDecl
    protocol: TargetProtocol
    facts: UsageFacts
    api: dict[str, FunctionDecl]
    decls: list[str] = field(default_factory=list)
    setup: list[str] = field(default_factory=list)
    call: list[str] = field(default_factory=list)
    use: list[str] = field(default_factory=list)
    cleanup: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    _made: dict[str, str] = field(default_factory=dict)  # object variable -> its "made" flag
    _maker: dict[str, str] = field(default_factory=dict)  # object variable -> the call that made it
    _flags: set[str] = field(default_factory=set)
    _results: set[str] = field(default_factory=set)  # variables a call of the sequence stores into
    _kept: int = 0
    _data_vars: set[str] = field(default_factory=set)
    _size_vars: set[str] = field(default_factory=set)
    path: str = ""  # the skeleton's file holding the input (``lf_path``), if it makes one
    unusable: str = ""  # why the replay cannot be written (a file name with no file to give)

    # ----- arguments -----
    def _param_type(self, fn: str, i: int) -> str:
        decl = self.api.get(fn)
        return decl.params[i].type if decl and i < len(decl.params) else ""

    def arg_text(self, fn: str, i: int, arg: Arg) -> str:
        """The argument as the harness passes it: the input for data, ``size`` for a size."""
        if arg.var in self._results:
            return arg.text  # what an earlier call returned (a printed string), not the input
        decl = self.api.get(fn)
        if arg.kind == "data" and decl and i < len(decl.params) and PATH_PARAM.search(decl.params[i].name):
            # The library's code opens a file of that name: the harness gives the input's file.
            if not self.path:
                self.unusable = f"{fn} takes a file name and the skeleton writes no file"
            return self.path or arg.text
        if arg.kind == "data":
            self._data_vars.add(arg.var)
            ptype = self._param_type(fn, i) or "const char *"
            return f"({ptype})lf_buf"
        if arg.kind == "size":
            self._size_vars.add(arg.var)
            return "size"
        return self.substitute(arg.text)

    def substitute(self, text: str) -> str:
        """``text`` with the usage's data and size variables replaced by the input's."""

        def swap(m: re.Match[str]) -> str:
            name = m.group(1)
            if name in self._data_vars:
                return "lf_buf"
            if name in self._size_vars:
                return "size"
            return name

        return _IDENT.sub(swap, text)

    def call_text(self, step: Step) -> str:
        """``fn(args)`` as the harness writes it."""
        return f"{step.call}({', '.join(self.arg_text(step.call, i, a) for i, a in enumerate(step.args))})"

    # ----- the sequence -----
    def nested(self, steps: list[Step]) -> set[int]:
        """Steps whose call another step makes inside its arguments (``create(std_error(&e))``)."""
        out = set()
        for i, s in enumerate(steps):
            for later in steps[i + 1 :]:
                if any(re.search(rf"\b{re.escape(s.call)}\s*\(", a.text) for a in later.args):
                    out.add(i)
        return out

    def releases(self, steps: list[Step]) -> dict[int, str]:
        """The index of each object's final release among ``steps`` -> the object variable."""
        out: dict[int, str] = {}
        objects = {a.var for s in steps for a in s.args if a.kind == "object" and a.var}
        objects |= {s.result for s in steps if s.result in self.protocol.variables}
        for var in objects:
            on = [i for i, s in enumerate(steps) if any(a.var == var for a in s.args)]
            if (
                on
                and (has_verb(steps[on[-1]].call, "release") or steps[on[-1]].call == "free")
                and steps[on[-1]].call != self.target.name
            ):
                out[on[-1]] = var
        return out

    def write(self) -> None:
        """Fill the parts from the protocol's sequence."""
        steps = self.protocol.sequence
        skip = self.nested(steps)
        released = self.releases(steps)
        self._results = {s.result for s in steps if s.result in self.protocol.variables}
        for a in (a for s in steps for a in s.args):
            if a.var in self._results:
                continue
            if a.kind == "data":
                self._data_vars.add(a.var)
            elif a.kind == "size":
                self._size_vars.add(a.var)
        self.declare()
        phase = "setup"
        for i, step in enumerate(steps):
            if i in skip:
                continue
            if i in released:
                self.release(released[i], self.call_text(step))
                for a in step.args:  # `destroy(&p, &info)`: the other objects it takes go with it
                    if a.kind == "object" and a.address and a.var != released[i]:
                        self._made.pop(a.var, None)
                continue
            if self._early_release(steps, i):
                continue  # an error path's cleanup (`if (!ok) { free(obj); return 1; }`)
            if step.call == "setjmp":  # the library longjmps here on error: the harness cleans up
                jump = self.call_text(step)  # a second jump (from the cleanup) stops: never clean twice
                self.setup += ["volatile int lf_jumps = 0;",
                               f"if ({jump}) {{ if (lf_jumps++) return 0; goto lf_cleanup; }}"]
                continue
            if step.call == self.target.name and phase == "setup":
                phase = "call"
                self.emit(step, self.call, target=True)
                phase = "use"
                continue
            if phase == "use" and (small := self._unsized_array_write(step)):
                # `read_row(p, row, NULL)` into the usage's `row[1]`: sized for the usage's own
                # data, an overflow on the fuzzer's
                self.notes.append(f"{step.call} left out: it writes into {small}, sized for the usage's data")
                continue
            self.emit(step, self.setup if phase == "setup" else self.use)
        self.release_rest()

    def _unsized_array_write(self, step: Step) -> str:
        """The fixed-size array ``step`` writes into with no size given (``''`` if none)."""
        if any(a.kind == "size" for a in step.args):
            return ""
        decl = self.api.get(step.call)
        for i, a in enumerate(step.args):
            ctype = self.protocol.variables.get(a.var, "")
            ptype = decl.params[i].type if decl and i < len(decl.params) else ""
            if "[" in ctype and not a.address and ptype and not re.search(r"\bconst\b", ptype):
                return a.var
        return ""

    def _early_release(self, steps: list[Step], i: int) -> bool:
        """A release of an object the sequence still uses afterwards: an error path's, not the flow's."""
        step = steps[i]
        if not (has_verb(step.call, "release") or step.call == "free") or step.call == self.target.name:
            return False
        held = {a.var for a in step.args if a.var}
        return any(a.var in held for later in steps[i + 1:] for a in later.args)

    def declare(self) -> None:
        """Declarations of the sequence's variables (data and size ones become the input)."""
        # First, so that initializers naming the input (`struct mem m = { lf_buf, size }`) see it.
        self.decls += [
            "uint8_t *lf_buf = (uint8_t *)malloc(size + 1);",
            "if (lf_buf == NULL) return 0;",
            "if (size) memcpy(lf_buf, data, size);",
            "lf_buf[size] = 0;",
        ]
        self.cleanup.append("free(lf_buf);")
        self._input_variables()
        fills = self._stream_states()
        fields = self._record_fields()
        for var, ctype in self.protocol.variables.items():
            if var in self._data_vars or var in self._size_vars:
                continue
            init = self.protocol.inits.get(var, "")
            if init and re.search(r"\b\w+\s*\(", init) and not init.lstrip().startswith("{"):
                init = ""  # a call: the sequence makes it
            if not init and _FILE.fullmatch(ctype.strip()):
                self._null_stream(var)
                continue
            self.decls.append(declaration(ctype, var, self.substitute(init) if init else ""))
        self.decls += fills + fields

    def _null_stream(self, var: str) -> None:
        """A stream the library's code opened itself (a report file, stdout): one writing nowhere.

        Left zeroed, the first write through it crashed in the C library; the sequence's own
        ``fclose``, when it has one, closes it.
        """
        self.decls.append(f"FILE *{var} = {_NULL_STREAM};")
        if not any(s.call == "fclose" and any(a.var == var for a in s.args) for s in self.protocol.sequence):
            self.cleanup.append(f"if ({var} != NULL) fclose({var});")
        self.notes.append(f"{var}: a stream the library's code opens itself, here one writing nowhere")

    def _record_fields(self) -> list[str]:
        """The fields the library's code sets on each record the sequence passes, set so here.

        An input integer comes from an option byte taken off the input's end before the copy.
        """
        passed = {a.var for s in self.protocol.sequence for a in s.args if a.var}
        draws: list[str] = []

        def draw(f: FieldValue, _ftype: str) -> str:
            draws.append(f"{f.low} + (int)(lf_opt[{len(draws)}] % {min(f.high - f.low + 1, 256)}u)")
            return draws[-1]

        lines: list[str] = []
        for var, ctype in self.protocol.variables.items():
            found = self.facts.record(ctype) if "*" not in ctype and "[" not in ctype else None
            if found is None or var not in passed or var in self._data_vars:
                continue
            lines += field_lines(var, found, type_key(ctype), draw)
            self.notes.append(f"{var}: its fields are set before {found.call}, as the library's code does")
        if draws:
            self.decls[:0] = [f"uint8_t lf_opt[{len(draws)}] = {{0}};",
                              f"for (size_t lf_k = 0; lf_k < {len(draws)} && size > 0; lf_k++) "
                              "lf_opt[lf_k] = data[--size];"]
        return lines

    def _stream_states(self) -> list[str]:
        """Lines putting the input in the state a reader callback reads from (``mem_buf buf``).

        A variable of a record the usage file defines, given to a call beside a callback
        (``set_read_fn(p, &buf, mem_read)``), with one byte field (an array or a pointer) and a
        length field: the callback serves the bytes from it, so the input goes there.
        """
        lines: list[str] = []
        for step in self.protocol.sequence:
            if not any(a.kind == "callback" for a in step.args):
                continue
            for a in step.args:
                ctype = self.protocol.variables.get(a.var, "")
                if a.kind == "callback" or not ctype or "*" in ctype or a.var in self._data_vars:
                    continue
                fields = record_fields(self.protocol.types, ctype)
                lines += fill_stream(a.var, fields)
        if lines:
            self.notes.append("the input is put where the usage's reader callback reads from")
        return lines

    def _input_variables(self) -> None:
        """Bytes and their length only initializers use (``struct mem m = { data, size }``): the input."""
        in_calls = {a.var for s in self.protocol.sequence for a in s.args if a.var}
        inits = " ".join(self.protocol.inits.values())
        for var, ctype in self.protocol.variables.items():
            if (
                var in in_calls
                or var in self.protocol.inits
                or not re.search(rf"\b{re.escape(var)}\b", inits)
            ):
                continue
            if _BYTE_ELEMENT.search(ctype) and ("*" in ctype or "[" in ctype):
                self._data_vars.add(var)
            elif re.search(r"(?i)(len|size|count|bytes)", var) and "*" not in ctype:
                self._size_vars.add(var)

    def emit(self, step: Step, out: list[str], target: bool = False) -> None:
        """One call with its result and its check, the way the usage makes it."""
        text = self.call_text(step)
        if not step.result:
            step = self._keep_result(step)
        lhs = (
            f"{step.result} = "
            if step.result
            and step.result in self.protocol.variables
            or "." in step.result
            or "->" in step.result
            else ""
        )
        check = self.substitute(step.check) if step.check else ""
        inline = bool(check) and re.search(rf"\b{re.escape(step.call)}\s*\(", check) is not None
        if step.loop and check:
            body = check if inline else f"({lhs}{text}, {check})"
            out.append(
                f"for (int lf_i = 0; lf_i < {LOOP_BOUND} && ({self._inline(step, body)}); lf_i++) {{ }}"
            )
        elif inline and not target:
            out.append(f"if ({self._inline(step, check)}) goto lf_cleanup;")
        else:
            out.append(f"{lhs}{text};")
            if check and not target and self._failure_check(step, check):
                out.append(f"if ({check}) goto lf_cleanup;")
        self._mark_made(step, out)

    def _keep_result(self, step: Step) -> Step:
        """A dropped result the library's code releases elsewhere: kept, so the cleanup releases it."""
        decl = self.api.get(step.call)
        obj = self.facts.object(decl.return_type) if decl else None
        if decl is None or obj is None or not obj.release or "*" not in decl.return_type:
            return step
        self._kept += 1
        var = f"lf_result{self._kept}"
        self.protocol.variables[var] = obj.type
        self.decls.append(declaration(obj.type, var, "NULL"))
        return step.model_copy(update={"result": var})

    def _inline(self, step: Step, check: str) -> str:
        """A check that contains the call, with the call's arguments as the harness passes them."""
        original = f"{step.call}({', '.join(a.text for a in step.args)})"
        return (
            check.replace(self.substitute(original), self.call_text(step))
            if original in step.check
            else check
        )

    def _failure_check(self, step: Step, check: str) -> bool:
        """Whether ``check`` tests the result for failure (so the code leaves when it holds)."""
        return bool(step.result) and re.search(rf"\b{re.escape(step.result)}\b", check) is not None

    def _mark_made(self, step: Step, out: list[str]) -> None:
        made = [
            a.var
            for a in step.args
            if a.kind == "object"
            and a.address
            and a.var in self.protocol.variables
            and "*" not in self.protocol.variables[a.var]
            and self._is_handle(a.var)
        ]
        if step.result in self.protocol.variables and self._is_object(step.result):
            made.append(step.result)
        for var in made:
            self._maker[var] = step.call
            if var not in self._made:
                flag = f"lf_made_{var}"
                self._made[var] = flag
                self._flags.add(flag)
                self.decls.append(f"int {flag} = 0;")
                out.append(f"{flag} = 1;")

    def _is_object(self, var: str) -> bool:
        ctype = self.protocol.variables.get(var, "")
        return self.facts.object(ctype) is not None

    def _is_handle(self, var: str) -> bool:
        """A value the API makes through ``&var`` (an opener's handle), not a struct it fills."""
        ctype = self.protocol.variables.get(var, "")
        obj = self.facts.object(ctype)
        return obj is not None and bool(obj.release) and not ctype.startswith(("struct ", "union "))

    def release(self, var: str, text: str) -> None:
        """The release of ``var`` in the cleanup, only if the sequence made it."""
        flag = self._made.get(var)
        ptr = "*" in self.protocol.variables.get(var, "")
        cond = " && ".join([c for c in (flag, f"{var} != NULL" if ptr else "") if c])
        self.cleanup.insert(0, f"if ({cond}) {text};" if cond else f"{text};")
        self._made.pop(var, None)

    def release_rest(self) -> None:
        """Objects the sequence made and never released: the protocol's releaser."""
        for var in list(self._made):
            obj = self.facts.object(self.protocol.variables.get(var, ""))
            releaser = obj.release_after.get(self._maker.get(var, ""), obj.release) if obj else ""
            if releaser:
                self.release(var, f"{releaser}({var})")
                self.notes.append(f"{var} is released with {releaser}, as the library's own code does")

    # ----- completeness -----
    def unknown_names(self, text: str, callbacks: set[str], types: set[str]) -> set[str]:
        """Names in ``text`` that nothing the draft declares or includes defines."""
        known = set(self.protocol.variables) | set(self.api) | set(active().constants) | set(LIBC) | _C_WORDS
        known |= callbacks | types | {"lf_buf", "lf_i", "lf_cleanup", "lf_jumps", *self._flags}
        known |= {"lf_opt", "lf_k"}  # option bytes for the fields of a record (_record_fields)
        known |= {m for line in self.decls for m in re.findall(r"\b(lf_fill_\w+) =", line)}
        known |= {self.path} - {""}
        known |= set(active().typedefs) | {r for r in active().records}
        # The types the usage declares its variables with.
        known |= {w for t in self.protocol.variables.values() for w in _IDENT.findall(t)}
        code = text.replace(_NULL_STREAM, "")  # the replay's own stream names nothing it lacks
        names = {m.group(1) for m in _IDENT.finditer(code)}
        return {n for n in names if n not in known and not n.isupper()}


_FIELD = re.compile(r"([A-Za-z_][\w\s]*?[\w*])\s*(\**)\s*\b([A-Za-z_]\w*)\s*(\[[^\]]*\])?\s*;")
_LENGTH = re.compile(r"(?i)(len|length|size|count|avail|end|limit|total)")
_POSITION = re.compile(r"(?i)(pos|offset|off|cur|index|idx|used|consumed|done)")


def record_fields(types: list[str], ctype: str) -> list[tuple[str, str, bool]]:
    """``(type, name, array)`` of each field of the record ``ctype`` names among ``types``' texts."""
    name = re.sub(r"^(struct|union)\s+", "", ctype.strip())
    for text in types:
        if not re.search(rf"(\b(struct|union)\s+{re.escape(name)}\s*\{{|\}}\s*{re.escape(name)}\s*;)", text):
            continue
        body = text[text.find("{") + 1 : text.rfind("}")]
        return [(f"{m[1]} {m[2]}".strip(), m[3], bool(m[4])) for m in _FIELD.finditer(body)]
    return []


def fill_stream(var: str, fields: list[tuple[str, str, bool]]) -> list[str]:
    """Lines giving ``var``'s byte field the input and its length field the input's size."""
    data = next((f for f in fields if _byte_field(f)), None)
    length = next((n for t, n, array in fields if not array and "*" not in t and _LENGTH.search(n)
                   and not _POSITION.search(n)), None)
    if data is None or length is None:
        return []
    ftype, name, array = data
    if array:
        return [f"size_t lf_fill_{var} = size < sizeof {var}.{name} ? size : sizeof {var}.{name};",
                f"memcpy({var}.{name}, lf_buf, lf_fill_{var});", f"{var}.{length} = lf_fill_{var};"]
    return [f"{var}.{name} = ({ftype})lf_buf;", f"{var}.{length} = size;"]


def _byte_field(field_: tuple[str, str, bool]) -> bool:
    ftype, _name, array = field_
    element = ftype if array else ftype.rstrip("* ").strip() if ftype.count("*") == 1 else ""
    element = re.sub(r"\bconst\b", "", element).strip()
    canon = active().canonical.get(element, "") or active().typedefs.get(element, "")
    return bool(element) and bool(_BYTE_ELEMENT.search(f"{element} {canon}"))


_FILE = re.compile(r"(?:const\s+)?FILE\s*\*")
_NULL_STREAM = 'fopen("/dev/null", "w+")'


def declaration(ctype: str, var: str, init: str) -> str:
    """``ctype var = init;`` (arrays keep their size; values without an initializer are zeroed)."""
    base, _, dims = ctype.partition("[")
    name = f"{var}[{dims}" if dims else var
    # A top-level const (`void *const buf`) would refuse the assignment the sequence makes.
    base = re.sub(r"\*\s*const\b", "*", base).strip()
    if not init and "*" not in base:
        base = re.sub(r"^const\s+", "", base)
    sep = "" if base.endswith("*") else " "
    if init:
        return f"{base}{sep}{name} = {init};"
    if dims or not ("*" in base or _is_scalar(base)):
        return (
            f"{base}{sep}{name}; memset(&{var}, 0, sizeof {var});"
            if not dims
            else f"{base}{sep}{name}; memset({var}, 0, sizeof {var});"
        )
    return f"{base}{sep}{name} = 0;"


def _is_scalar(ctype: str) -> bool:
    table = active()
    canon = table.canonical.get(type_key(ctype), "")
    words = set(f"{ctype} {canon}".split())
    numbers = {"size_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t", "int8_t", "int16_t", "int32_t",
               "int64_t"}
    return bool(words & (c_words("type", "sign") - {"void"} | {"enum"} | numbers))
