"""Ranking of default fuzz targets: canonical types, setters of input data, score order."""

from __future__ import annotations

from fuzzkit.api import FunctionDecl, Param
from fuzzkit.param_kinds import archetype
from fuzzkit.select_functions import choose_functions, score


def _decl(name: str, ret: str, *params: tuple[str, str]) -> FunctionDecl:
    return FunctionDecl(name, ret, tuple(Param(n, t) for n, t in params))


# What fuzzkit.headers.canonical_types reports for a library's own typedefs.
CANONICAL = {
    "const lib_uint8_t *": "const unsigned char *",
    "lib_ssize_t": "long",
    "const lib_char *": "const unsigned char *",
    "lib_status": "enum lib_status_e",
    "lib_ctx *": "struct lib_ctx_s *",
    "lib_doc *": "struct lib_doc_s *",
}


def test_typedefd_bytes_and_lengths_are_a_buffer_by_canonical_type() -> None:
    decode = _decl("lib_decode", "int", ("data", "const lib_uint8_t *"), ("size", "lib_ssize_t"))
    assert archetype(decode) != "buffer"  # by spelling alone the typedefs hide it
    assert archetype(decode, CANONICAL) == "buffer"
    assert score(decode, CANONICAL) > score(decode)
    text = _decl("lib_read_text", "int", ("text", "const lib_char *"))
    assert archetype(text, CANONICAL) == "string"


def test_setter_of_input_data_is_not_penalised() -> None:
    set_buffer = _decl(
        "lib_set_buffer", "lib_status", ("ctx", "lib_ctx *"), ("data", "const char *"), ("len", "size_t")
    )
    set_flag = _decl("lib_set_flag", "int", ("ctx", "lib_ctx *"), ("flag", "int"))
    assert archetype(set_buffer) == "buffer"
    assert score(set_buffer, CANONICAL) >= 6 and score(set_flag, CANONICAL) < 0


def test_ranked_by_score_ties_in_header_order_and_cap_filled_by_score() -> None:
    # Header order: the library documents its API top-down, so ties keep that order.
    api = [
        _decl("lib_ctx_new", "lib_ctx *"),
        _decl(
            "lib_set_buffer", "lib_status", ("ctx", "lib_ctx *"), ("data", "const char *"), ("len", "size_t")
        ),
        _decl(
            "lib_parse", "lib_status", ("ctx", "lib_ctx *"), ("data", "const lib_uint8_t *"), ("n", "size_t")
        ),
        _decl(
            "lib_decode", "lib_status", ("ctx", "lib_ctx *"), ("data", "const lib_uint8_t *"), ("n", "size_t")
        ),
        _decl("lib_ctx_read", "lib_status", ("ctx", "lib_ctx *")),
        _decl("lib_aux_read", "int", ("aux", "struct aux *")),
        _decl("lib_version", "const char *"),
    ]
    chosen = [d.name for d in choose_functions(api, max_functions=8, canonical=CANONICAL)]
    assert chosen[:2] == ["lib_parse", "lib_decode"]  # equal scores: header order, not a-z
    assert "lib_set_buffer" in chosen and "lib_version" not in chosen
    # The object function on the parser's context outranks an unrelated one.
    assert chosen.index("lib_ctx_read") < chosen.index("lib_aux_read")
    two = [d.name for d in choose_functions(api, max_functions=2, canonical=CANONICAL)]
    assert two == ["lib_parse", "lib_decode"]


def test_a_function_driving_a_stream_struct_takes_data() -> None:
    from fuzzkit.header_facts import HeaderFacts, Record, Typedef, stream_types
    from fuzzkit.param_kinds import archetype

    facts = HeaderFacts(
        typedefs=[Typedef("acme_u8", "unsigned char", "unsigned char"),
                  Typedef("acme_pipe", "struct acme_pipe_s", "struct acme_pipe_s"),
                  Typedef("acme_pipe_p", "acme_pipe *", "struct acme_pipe_s *")],
        records=[Record("struct", "acme_pipe_s", ("acme_pipe",),
                        (("next_in", "acme_u8 *"), ("avail_in", "unsigned int"),
                         ("next_out", "acme_u8 *"), ("avail_out", "unsigned int")), False),
                 Record("struct", "acme_opts", (), (("level", "int"),), False)])
    streams = stream_types(facts)
    assert streams == {"acme_pipe_s", "acme_pipe"}
    drive = FunctionDecl("acme_run", "int", (Param("strm", "acme_pipe_p"), Param("mode", "int")))
    canon = {"acme_pipe_p": "struct acme_pipe_s *"}
    assert archetype(drive, canon, streams) == "buffer"
    assert archetype(drive, canon) == "object"


def test_private_helpers_by_the_underscore_convention_rank_below_the_api() -> None:
    """An exported `_lib_memcmp(const void *, const void *, size_t)` looks like a buffer function."""
    helper = _decl("_lib_memcmp", "int", ("a", "const void *"), ("b", "const void *"), ("n", "size_t"))
    read = _decl("lib_read_strip", "int", ("doc", "lib_doc *"), ("buf", "void *"), ("n", "size_t"))
    assert score(helper, CANONICAL) < score(read, CANONICAL)
    chosen = choose_functions([helper, read], max_functions=2, canonical=CANONICAL)
    assert [d.name for d in chosen] == ["lib_read_strip"]


def _file_db_api() -> list[FunctionDecl]:
    """A database reader whose data comes only from a file it opens by name."""
    return [
        _decl("gdb_lib_version", "const char *"),
        _decl("gdb_open", "int", ("filename", "const char *const"), ("flags", "uint32_t"), ("db", "gdb_s *")),
        _decl("gdb_read_node", "int", ("db", "const gdb_s *"), ("node", "uint32_t"), ("out", "gdb_node_s *")),
        _decl("gdb_close", "void", ("db", "gdb_s *")),
        _decl("gdb_dump", "int", ("fp", "FILE *"), ("db", "const gdb_s *")),
    ]


def test_a_library_read_only_from_files_has_its_opener_chosen() -> None:
    chosen = [d.name for d in choose_functions(_file_db_api())]
    assert chosen[0] == "gdb_open"
    assert "gdb_close" not in chosen and "gdb_dump" not in chosen  # FILE * stays out


def test_the_file_opener_stays_out_when_data_goes_in_from_memory() -> None:
    api = [*_file_db_api(), _decl("gdb_load_buffer", "int", ("db", "gdb_s *"), ("data", "const uint8_t *"),
                                  ("size", "size_t"))]
    chosen = [d.name for d in choose_functions(api)]
    assert chosen[0] == "gdb_load_buffer" and "gdb_open" not in chosen


def test_opening_from_memory_is_parsing_and_a_camel_case_file_name_is_a_file_name() -> None:
    from_mem = _decl("clrOpenProfileFromMem", "void *", ("MemPtr", "const void *"),
                     ("dwSize", "unsigned int"))
    checksum_add = _decl("clrMD5add", "void", ("h", "void *"), ("buf", "const unsigned char *"),
                         ("len", "unsigned"))
    assert score(from_mem) > score(checksum_add) and score(from_mem) >= 8
    opener = _decl("GOpenFileName", "gfile_t *", ("GifFileName", "const char *"), ("Error", "int *"))
    chosen = [d.name for d in choose_functions([opener, _decl("GBitSize", "int", ("n", "int"))])]
    assert chosen == ["GOpenFileName"]


def test_a_socket_path_is_no_file_to_read_and_feeding_a_reader_takes_data() -> None:
    connect = _decl("rdConnectUnix", "rd_ctx *", ("path", "const char *"))
    feed = _decl("rdReaderFeed", "int", ("r", "rd_reader *"), ("buf", "const char *"), ("len", "size_t"))
    chosen = [d.name for d in choose_functions([connect, feed])]
    assert chosen == ["rdReaderFeed"]
    assert [d.name for d in choose_functions([connect])] == []


def test_a_function_shaped_as_a_callback_the_api_takes_is_not_a_target() -> None:
    """`cap_dump(u_char *user, hdr, bytes)` is a packet handler for `cap_loop`; its `user` is a dumper."""
    canonical = {"u_char *": "unsigned char *", "const u_char *": "const unsigned char *",
                 "cap_handler": "void (*)(unsigned char *, const struct cap_hdr *, const unsigned char *)"}
    dump = _decl("cap_dump", "void", ("", "u_char *"), ("", "const struct cap_hdr *"), ("", "const u_char *"))
    loop = _decl("cap_loop", "int", ("", "cap_t *"), ("", "int"), ("", "cap_handler"), ("", "u_char *"))
    parse = _decl("cap_parse_filter", "int", ("text", "const char *"), ("len", "size_t"))
    assert score(dump, canonical) >= 3  # a writer of bytes, by its words and types
    chosen = [d.name for d in choose_functions([dump, loop, parse], canonical=canonical)]
    assert "cap_dump" not in chosen and "cap_parse_filter" in chosen


def test_an_interpreter_runs_its_source_string_and_its_allocator_hook_reads_nothing() -> None:
    """`ac_newstate(ac_Alloc alloc, void *actx, int flags)`: the hook is `realloc`-shaped, no reader.

    `ac_dostring(S, source)` fuses its verb and its input into one word, and shares nothing with
    the constructor but the library's prefix, so choosing one does not mark the other a variant.
    """
    canonical = {"ac_Alloc": "void *(*)(void *, void *, int)", "ac_State *": "struct ac_State *"}
    new = _decl("ac_newstate", "ac_State *", ("alloc", "ac_Alloc"), ("actx", "void *"), ("flags", "int"))
    run = _decl("ac_dostring", "int", ("S", "ac_State *"), ("source", "const char *"))
    api = [new, run, *(_decl(f"ac_push{n}", "void", ("S", "ac_State *")) for n in ("nil", "null", "true"))]
    assert score(run, canonical) > score(new, canonical)
    chosen = [d.name for d in choose_functions(api, canonical=canonical)]
    assert chosen[0] == "ac_dostring", chosen
    assert "ac_newstate" not in chosen, chosen


def test_a_function_with_a_checked_twin_is_left_for_the_twin() -> None:
    """`zz_unpack` trusts its input (its header says so); `zz_unpack_safe` checks for overruns."""
    params = (("src", "const unsigned char *"), ("src_len", "size_t"), ("dst", "unsigned char *"),
              ("dst_len", "size_t *"))
    fast, safe = _decl("zz_unpack", "int", *params), _decl("zz_unpack_safe", "int", *params)
    assert [d.name for d in choose_functions([fast, safe])] == ["zz_unpack_safe"]
    assert [d.name for d in choose_functions([fast])] == ["zz_unpack"]  # no twin: the one there is


def test_a_function_addressing_a_slot_of_its_object_by_index_is_plumbing() -> None:
    """`ac_defprop(S, idx, name)` works on a value the state holds at `idx`, not on new data."""
    canonical = {"ac_State *": "struct ac_State *"}
    state = ("S", "ac_State *")
    slot = _decl("ac_defprop", "void", state, ("idx", "int"), ("name", "const char *"))
    named = _decl("ac_defglobal", "void", state, ("name", "const char *"), ("atts", "int"))
    assert score(slot, canonical) < score(named, canonical)


def test_a_function_that_ends_the_process_is_no_target() -> None:
    """``acme_fatal(ctx, msg)`` takes a string, but all it does is call the fatal handler (abort):
    every input crashes its harness, and a harness that avoids it fuzzes nothing."""
    ctx = ("ctx", "lib_ctx *")
    enders = [_decl(n, "void", ctx, ("msg", "const char *"))
              for n in ("acme_fatal_raw", "acme_panic", "acme_abort_with", "acme_throw_msg", "acme_exit_msg")]
    parse = _decl("acme_parse_text", "int", ctx, ("text", "const char *"))
    chosen = [d.name for d in choose_functions([*enders, parse], 3, CANONICAL)]
    assert chosen == ["acme_parse_text"]
    assert all(score(d, CANONICAL) < 0 for d in enders)


def test_an_integer_named_fmt_is_a_pixel_format_not_a_printf_format() -> None:
    """``decode_image(ctx, out, len, int fmt, int flags)`` ranks with its row-wise twin, not below it.

    Before, the name ``fmt`` cost it the penalty for a format string, so an invented image
    library's whole-image decoder ranked under the row decoder and was never chosen.
    """
    whole = _decl("pq_decode_image", "int", ("ctx", "pq_ctx *"), ("out", "void *"), ("len", "size_t"),
                  ("fmt", "int"), ("flags", "int"))
    row = _decl("pq_decode_row", "int", ("ctx", "pq_ctx *"), ("out", "void *"), ("len", "size_t"))
    feed = _decl("pq_set_png_buffer", "int", ("ctx", "pq_ctx *"), ("buf", "const void *"), ("size", "size_t"))
    printf = _decl("pq_log_printf", "int", ("ctx", "pq_ctx *"), ("fmt", "const char *"),
                   ("data", "const char *"), ("n", "size_t"))
    assert score(whole) == score(row)
    assert score(printf) < score(_decl("pq_log_text", "int", ("ctx", "pq_ctx *"), ("data", "const char *"),
                                       ("n", "size_t")))
    chosen = [d.name for d in choose_functions([feed, whole, row])]
    assert chosen.index("pq_decode_image") < chosen.index("pq_decode_row")  # header order breaks the tie
