"""KnowledgeRetriever over the shipped knowledge, with the real model and a real FAISS index."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from long_term_memory.embeddings import Embedder, get_embedder
from long_term_memory.knowledge_files import DEFAULT_KNOWLEDGE_DIR, KnowledgeFormatError
from long_term_memory.retrieval import (
    PITFALL_CATEGORIES,
    KnowledgeRetriever,
    MissingSkeletonError,
    RetrieverHandle,
    UnknownArchetypeError,
    get_retriever,
)
from long_term_memory.vector_index import VectorIndex

ARCHETYPES = {
    "stateless_parser",
    "object_lifecycle",
    "state_machine",
    "stream_processor",
    "round_trip",
    "file_based",
    "buffer_codec",
    "object_builder",
    "callback_driven",
    "incremental_digest",
}
SECTIONS = [
    "Description",
    "When it applies",
    "Call sequence",
    "How to derive arguments from the fuzz input",
    "What to exercise for coverage",
    "Pitfalls",
]


class CountingEmbedder:
    """The real embedder, counting how many texts each encode call receives."""

    def __init__(self, inner: Embedder, name: str | None = None) -> None:
        self.inner = inner
        self.name = name or inner.name
        self.dim = inner.dim
        self.calls: list[int] = []

    def encode(self, texts: list[str]) -> np.ndarray:
        self.calls.append(len(texts))
        return self.inner.encode(texts)


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    return get_embedder()


@pytest.fixture(scope="session")
def counting(embedder: Embedder) -> CountingEmbedder:
    return CountingEmbedder(embedder)


@pytest.fixture(scope="session")
def index_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("index")


@pytest.fixture(scope="session")
def retriever(counting: CountingEmbedder, index_dir: Path) -> KnowledgeRetriever:
    """The shipped knowledge, indexed once per session (the only full build in this file)."""
    built = KnowledgeRetriever(embedder=counting, cache_dir=index_dir)
    built.search("warm up", k=1)
    return built


def copy_knowledge(dest: Path, skeletons: bool = True) -> Path:
    shutil.copytree(DEFAULT_KNOWLEDGE_DIR / "archetypes", dest / "archetypes")
    shutil.copytree(DEFAULT_KNOWLEDGE_DIR / "pitfalls", dest / "pitfalls")
    (dest / "skeletons").mkdir()
    for archetype in ARCHETYPES:
        text = f"/* {archetype} */\nint LLVMFuzzerTestOneInput(const unsigned char *d, int n);\n"
        source = DEFAULT_KNOWLEDGE_DIR / "skeletons" / f"{archetype}.c"
        if skeletons:
            (dest / "skeletons" / f"{archetype}.c").write_text(
                source.read_text() if source.is_file() else text
            )
    return dest


def minimal_knowledge(dest: Path) -> Path:
    """A small knowledge directory (one archetype, one pitfall per category): cheap to embed."""
    (dest / "archetypes").mkdir(parents=True)
    (dest / "pitfalls").mkdir()
    (dest / "skeletons").mkdir()
    shutil.copy(DEFAULT_KNOWLEDGE_DIR / "archetypes" / "round_trip.md", dest / "archetypes")
    (dest / "skeletons" / "round_trip.c").write_text("int LLVMFuzzerTestOneInput(void);\n")
    for category in PITFALL_CATEGORIES:
        (dest / "pitfalls" / f"{category}.yaml").write_text(
            f"category: {category}\npitfalls:\n  - id: only_{category}\n"
            f"    title: The one {category} pitfall\n    archetypes: [all]\n"
            f"    description: Something about {category} that goes wrong.\n"
            "    fix: Do it right.\n"
        )
    return dest


# --- the knowledge files ---------------------------------------------------------------


def test_exactly_the_ten_archetypes(retriever: KnowledgeRetriever) -> None:
    assert set(retriever.list_archetypes()) == ARCHETYPES
    assert retriever.list_archetypes() == sorted(ARCHETYPES)


@pytest.mark.parametrize("archetype_id", sorted(ARCHETYPES))
def test_archetype_has_text_signals_examples_and_sections(
    retriever: KnowledgeRetriever, archetype_id: str
) -> None:
    arch = retriever.get_archetype(archetype_id)
    assert arch.id == archetype_id and arch.title
    assert len(arch.signals) >= 3 and all(isinstance(s, str) and s for s in arch.signals)
    assert len(arch.examples) >= 4 and all(re.fullmatch(r"\w+", e) for e in arch.examples)
    assert list(arch.sections) == SECTIONS
    assert all(len(body) > 80 for body in arch.sections.values())
    assert arch.text.startswith("## Description")


def test_every_archetype_has_a_skeleton_file(retriever: KnowledgeRetriever) -> None:
    missing = [
        str(retriever.skeleton_path(a))
        for a in sorted(ARCHETYPES)
        if not retriever.skeleton_path(a).is_file()
    ]
    assert not missing, f"skeleton files missing: {missing}"
    for archetype_id in ARCHETYPES:
        assert "LLVMFuzzerTestOneInput" in retriever.get_skeleton(archetype_id)


def test_pitfall_categories_have_at_least_five_complete_items(
    retriever: KnowledgeRetriever,
) -> None:
    ids = [p.id for p in retriever.list_pitfalls()]
    assert len(ids) == len(set(ids))
    for category in PITFALL_CATEGORIES:
        pitfalls = retriever.list_pitfalls(category)
        assert len(pitfalls) >= 5, category
        for pit in pitfalls:
            assert pit.category == category
            assert pit.title and len(pit.description) > 80 and len(pit.fix) > 40, pit.id
            assert pit.archetypes and set(pit.archetypes) <= ARCHETYPES | {"all"}, pit.id


@pytest.mark.parametrize("archetype_id", sorted(ARCHETYPES))
def test_every_archetype_has_pitfalls_in_each_category(
    retriever: KnowledgeRetriever, archetype_id: str
) -> None:
    pitfalls = retriever.get_pitfalls_for_archetype(archetype_id)
    assert {p.category for p in pitfalls} == set(PITFALL_CATEGORIES)
    # Beyond the generic "all" entries, each archetype is named by specific pitfalls.
    assert sum(archetype_id in p.archetypes for p in pitfalls) >= 3
    order = [PITFALL_CATEGORIES.index(p.category) for p in pitfalls]
    assert order == sorted(order)


@pytest.mark.parametrize("archetype_id", sorted(ARCHETYPES))
def test_pitfall_references_in_archetypes_resolve(retriever: KnowledgeRetriever, archetype_id: str) -> None:
    refs = re.findall(
        r"^- `(\w+)`:", retriever.get_archetype(archetype_id).sections["Pitfalls"], re.MULTILINE
    )
    applicable = {p.id for p in retriever.get_pitfalls_for_archetype(archetype_id)}
    assert len(refs) >= 5
    assert set(refs) <= applicable, set(refs) - applicable


def test_examples_are_invented_names(retriever: KnowledgeRetriever) -> None:
    # Real library names would hand a model the answer for a benchmark (test_knowledge_generic).
    examples = {e for a in ARCHETYPES for e in retriever.get_archetype(a).examples}
    wanted = {"acme_reply_parse", "pipe_decode", "lexer_next", "blk_pack", "sum32_update", "node_map_put"}
    assert wanted <= examples


# --- errors ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call", ["get_archetype", "get_skeleton", "get_pitfalls_for_archetype", "get_archetype_bundle"]
)
def test_unknown_id_raises_a_key_error_listing_valid_ids(retriever: KnowledgeRetriever, call: str) -> None:
    with pytest.raises(UnknownArchetypeError) as info:
        getattr(retriever, call)("stateful_decoder")
    assert isinstance(info.value, KeyError)
    assert "'stateful_decoder'" in str(info.value)
    assert all(a in str(info.value) for a in ARCHETYPES)


def test_missing_skeleton_names_the_file(tmp_path: Path) -> None:
    knowledge = copy_knowledge(tmp_path / "k", skeletons=False)
    retriever = KnowledgeRetriever(knowledge)
    with pytest.raises(MissingSkeletonError) as info:
        retriever.get_archetype_bundle("round_trip")
    assert isinstance(info.value, KeyError)
    assert str(knowledge / "skeletons" / "round_trip.c") in str(info.value)


def test_malformed_knowledge_is_rejected_with_the_file_named(tmp_path: Path) -> None:
    knowledge = copy_knowledge(tmp_path / "k")
    path = knowledge / "pitfalls" / "call_sequence.yaml"
    path.write_text(path.read_text().replace("[round_trip]", "[round_trips]", 1))
    with pytest.raises(KnowledgeFormatError, match="round_trips"):
        KnowledgeRetriever(knowledge)
    shutil.copy(DEFAULT_KNOWLEDGE_DIR / "pitfalls" / "call_sequence.yaml", path)
    arch = knowledge / "archetypes" / "file_based.md"
    arch.write_text(arch.read_text().replace("  - archive_read\n", "  - reads: archive_read\n", 1))
    with pytest.raises(KnowledgeFormatError, match=r"file_based\.md.*quote it"):
        KnowledgeRetriever(knowledge)


# --- bundle ------------------------------------------------------------------------------


def test_bundle_holds_archetype_skeleton_and_pitfalls(tmp_path: Path) -> None:
    retriever = KnowledgeRetriever(copy_knowledge(tmp_path / "k"))
    bundle = retriever.get_archetype_bundle("stream_processor")
    assert bundle.archetype == retriever.get_archetype("stream_processor")
    assert bundle.skeleton == retriever.get_skeleton("stream_processor")
    assert "LLVMFuzzerTestOneInput" in bundle.skeleton
    assert bundle.pitfalls == retriever.get_pitfalls_for_archetype("stream_processor")
    ids = {p.id for p in bundle.pitfalls}
    wanted = {"zero_struct_before_init", "finish_the_stream", "stream_fields_drive_loop",
              "leak_on_error_path"}
    assert wanted <= ids
    assert "path_from_input" not in ids
    assert json.loads(bundle.model_dump_json())["archetype"]["id"] == "stream_processor"


# --- semantic search ---------------------------------------------------------------------

RANKING = [
    ("z_stream inflate chunked input", "stream_processor"),
    ("parse JSON string into tree", "stateless_parser"),
    ("crc32 running checksum", "incremental_digest"),
    ("yaml event parser loop", "state_machine"),
    ("compress into destination buffer with destLen", "buffer_codec"),
    ("print then parse again and compare", "round_trip"),
    ("int yaml_parser_parse(yaml_parser_t * parser, yaml_event_t * event);", "state_machine"),
    (
        "int uncompress(Bytef * dest, uLongf * destLen, const Bytef * source, uLong sourceLen);",
        "buffer_codec",
    ),
    ("int gzread(gzFile file, voidp buf, unsigned int len);", "file_based"),
    ("uLong crc32_combine(uLong crc1, uLong crc2, z_off_t len2);", "incremental_digest"),
    ("int deflate(z_streamp strm, int flush);", "stream_processor"),
    ("yaml_parser_set_input with a custom read handler callback", "callback_driven"),
    ("cJSON_CreateObject then add and replace items chosen by the input", "object_builder"),
    ("create the parser context, configure it, run it, destroy it", "object_lifecycle"),
]


@pytest.mark.parametrize(("query", "expected"), RANKING)
def test_search_ranks_the_right_archetype_first(
    retriever: KnowledgeRetriever, query: str, expected: str
) -> None:
    suggestions = retriever.suggest_archetypes(query, k=3)
    assert suggestions[0][0] == expected, suggestions
    assert [s for _, s in suggestions] == sorted((s for _, s in suggestions), reverse=True)
    assert retriever.search(query, k=1, kinds={"archetype"})[0].id == expected


def test_search_finds_pitfalls_and_filters_kinds(retriever: KnowledgeRetriever) -> None:
    hits = retriever.search("forgot yaml_event_delete inside the parse loop, leak", k=3, kinds={"pitfall"})
    assert hits[0].id == "event_delete_in_loop" and hits[0].kind == "pitfall"
    assert hits[0].snippet and len(hits[0].snippet) <= 240
    hits = retriever.search(
        "heap overflow: cJSON_Parse reads past a buffer without a NUL", k=3, kinds={"pitfall"}
    )
    assert hits[0].id == "nul_termination"
    mixed = retriever.search("inflate chunked z_stream", k=8)
    assert len(mixed) == 8 and [h.score for h in mixed] == sorted((h.score for h in mixed), reverse=True)
    assert {h.kind for h in mixed} >= {"archetype", "pitfall"}
    assert retriever.search("anything", k=0) == []
    with pytest.raises(ValueError, match="examples"):
        retriever.search("anything", kinds={"examples"})


def test_vector_index_matches_numpy() -> None:
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(200, 32)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    query = vectors[3] + 0.1 * vectors[9]
    hits = VectorIndex(vectors).search(query, 5)
    expected = np.argsort(-(vectors @ query))[:5]
    assert [row for row, _ in hits] == list(expected)
    assert hits[0][1] == pytest.approx(float(vectors[expected[0]] @ query), abs=1e-5)


# --- the embedding cache -----------------------------------------------------------------


def test_cache_is_reused_by_a_second_retriever(
    retriever: KnowledgeRetriever, counting: CountingEmbedder, embedder: Embedder, index_dir: Path
) -> None:
    chunks = retriever.encoded_on_load
    assert chunks == 10 + len(retriever.list_pitfalls()) + 10  # archetypes, pitfalls, skeletons
    assert counting.calls[:2] == [chunks, 1]  # the knowledge once, then the query
    cache_dir = index_dir
    assert len(list(cache_dir.glob("*.npy"))) == 1 and len(list(cache_dir.glob("*.json"))) == 1

    second_embedder = CountingEmbedder(embedder)
    second = KnowledgeRetriever(embedder=second_embedder, cache_dir=cache_dir)
    query = "z_stream inflate chunked input"
    assert second.search(query, k=5) == retriever.search(query, k=5)
    assert second.encoded_on_load == 0
    assert second_embedder.calls == [1]  # the query only


def test_cache_is_rebuilt_when_knowledge_changes(embedder: Embedder, tmp_path: Path) -> None:
    knowledge = minimal_knowledge(tmp_path / "k")
    cache = tmp_path / "cache"
    first = KnowledgeRetriever(knowledge, CountingEmbedder(embedder), cache_dir=cache)
    first.search("anything", k=1)
    assert first.encoded_on_load == 1 + len(PITFALL_CATEGORIES) + 1
    (meta_path,) = cache.glob("*.json")
    old_meta = json.loads(meta_path.read_text())

    path = knowledge / "pitfalls" / "resource_management.yaml"
    marker = "A striped zebra telescope balloon orchestra."
    path.write_text(path.read_text().replace("Something about", f"{marker} Something about"))
    counting = CountingEmbedder(embedder)
    second = KnowledgeRetriever(knowledge, counting, cache_dir=cache)
    hits = second.search(marker, k=1)
    assert second.encoded_on_load == 1  # only the edited chunk is embedded again
    assert counting.calls == [1, 1]
    assert hits[0].id == "only_resource_management"
    new_meta = json.loads(meta_path.read_text())
    assert new_meta["content_hash"] != old_meta["content_hash"]
    assert not list(cache.glob("*.tmp"))
    third = KnowledgeRetriever(knowledge, CountingEmbedder(embedder), cache_dir=cache)
    assert third.search(marker, k=1) == hits and third.encoded_on_load == 0


def test_cache_is_rebuilt_when_the_model_changes(embedder: Embedder, tmp_path: Path) -> None:
    knowledge = minimal_knowledge(tmp_path / "k")
    # These two names share a cache slot, so only the metadata tells them apart.
    first = KnowledgeRetriever(
        knowledge, CountingEmbedder(embedder, "wrapped/minilm"), cache_dir=tmp_path / "cache"
    )
    first.search("anything", k=1)
    second = KnowledgeRetriever(
        knowledge, CountingEmbedder(embedder, "wrapped_minilm"), cache_dir=tmp_path / "cache"
    )
    second.search("anything", k=1)
    assert second.encoded_on_load == first.encoded_on_load > 0
    (meta_path,) = (tmp_path / "cache").glob("*.json")
    assert json.loads(meta_path.read_text())["model"] == "wrapped_minilm"


def test_a_damaged_cache_is_rebuilt(embedder: Embedder, tmp_path: Path) -> None:
    knowledge = minimal_knowledge(tmp_path / "k")
    first = KnowledgeRetriever(knowledge, embedder, cache_dir=tmp_path)
    first.search("anything", k=1)
    (npy,) = tmp_path.glob("*.npy")
    vectors = np.load(npy)
    np.save(npy, np.zeros_like(vectors))
    second = KnowledgeRetriever(knowledge, CountingEmbedder(embedder), cache_dir=tmp_path)
    second.search("anything", k=1)
    assert second.encoded_on_load == first.encoded_on_load
    np.testing.assert_allclose(np.load(npy), vectors, atol=1e-5)


# --- handle and process cache ------------------------------------------------------------


def test_handle_round_trips_through_json_and_resolves_to_one_instance(tmp_path: Path) -> None:
    handle = RetrieverHandle()
    as_dict = json.loads(json.dumps(handle.model_dump()))
    assert as_dict == {"knowledge_dir": None, "embedding_model": "all-MiniLM-L6-v2"}
    retriever = get_retriever(as_dict)
    assert get_retriever(handle) is retriever
    assert (
        get_retriever({"knowledge_dir": str(DEFAULT_KNOWLEDGE_DIR), "embedding_model": "all-MiniLM-L6-v2"})
        is retriever
    )
    assert retriever.handle() == handle

    other = RetrieverHandle(knowledge_dir=str(copy_knowledge(tmp_path / "k")))
    results: list[KnowledgeRetriever] = []
    threads = [
        threading.Thread(target=lambda: results.append(get_retriever(other.model_dump()))) for _ in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({id(r) for r in results}) == 1 and results[0] is not retriever
    assert RetrieverHandle.model_validate(results[0].handle().model_dump()) == other


def test_text_lookups_do_not_import_the_model_stack() -> None:
    code = (
        "import sys\n"
        "from long_term_memory.retrieval import get_retriever\n"
        "r = get_retriever({'knowledge_dir': None, 'embedding_model': 'all-MiniLM-L6-v2'})\n"
        "r.get_archetype('round_trip'); r.get_pitfalls_for_archetype('round_trip')\n"
        "print(sorted(m for m in ('torch', 'sentence_transformers', 'faiss') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == "[]"
