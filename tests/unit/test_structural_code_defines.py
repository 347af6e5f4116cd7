"""``metadata["defines"]``: every function, method and type a code chunk holds, by its qualified name.

Issue 41, item 3: a Rust ``impl Basket`` chunk names ``Basket::new``, ``Basket::add`` and
``Basket::total``, not only ``Basket``; each language spells the name its own way
(:attr:`chunklab.chunkers.structural.code.languages.LanguageSpec.separators`), and PHP source
without ``<?php`` is parsed as PHP.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from chunklab.chunkers.structural import chunk_code, chunk_python
from chunklab.retrieval.lexical import BM25Index
from tests.support.programs import TEMPLATES, chunked_within_contract, in_every_language, program

#: language -> (a type ``Basket`` holding three methods, the names its one chunk defines)
BASKETS = {
    "rust": (
        "struct Basket { items: Vec<u32> }\n\nimpl Basket {\n"
        "    fn new() -> Self { Basket { items: vec![] } }\n"
        "    fn add(&mut self, x: u32) { self.items.push(x); }\n"
        "    fn total(&self) -> u32 { self.items.iter().sum() }\n}\n",
        ["Basket", "Basket::new", "Basket::add", "Basket::total"],
    ),
    "python": (
        "class Basket:\n    def __init__(self):\n        self.items = []\n\n    def add(self, x):\n"
        "        self.items.append(x)\n\n    def total(self):\n        return sum(self.items)\n",
        ["Basket", "Basket.__init__", "Basket.add", "Basket.total"],
    ),
    "javascript": (
        "class Basket {\n  constructor() { this.items = []; }\n  add(x) { this.items.push(x); }\n"
        "  total() { return this.items.length; }\n}\n",
        ["Basket", "Basket.constructor", "Basket.add", "Basket.total"],
    ),
    "typescript": (
        "export class Basket {\n  items: number[] = [];\n  constructor() {}\n"
        "  add(x: number): void { this.items.push(x); }\n  total(): number { return 0; }\n}\n",
        ["Basket", "Basket.constructor", "Basket.add", "Basket.total"],
    ),
    "tsx": (
        "class Basket {\n  constructor() {}\n  add(x: number) { return <b>{x}</b>; }\n"
        "  total(): number { return 0; }\n}\n",
        ["Basket", "Basket.constructor", "Basket.add", "Basket.total"],
    ),
    "java": (
        "class Basket {\n  Basket() {}\n  void add(int x) { items.add(x); }\n"
        "  int total() { return 0; }\n}\n",
        ["Basket", "Basket.Basket", "Basket.add", "Basket.total"],
    ),
    "csharp": (
        "namespace Shop {\n  class Basket {\n    public Basket() {}\n    public void Add(int x) {}\n"
        "    public int Total() { return 0; }\n  }\n}\n",
        ["Shop", "Shop.Basket", "Shop.Basket.Basket", "Shop.Basket.Add", "Shop.Basket.Total"],
    ),
    "go": (
        "type Basket struct{ items []int }\n\nfunc NewBasket() *Basket { return &Basket{} }\n\n"
        "func (b *Basket) Add(x int) { b.items = append(b.items, x) }\n\n"
        "func (b Basket) Total() int { return len(b.items) }\n",
        ["Basket", "NewBasket", "(*Basket).Add", "Basket.Total"],
    ),
    "cpp": (
        "namespace shop {\nclass Basket {\n public:\n  Basket() {}\n  void add(int x) { n += x; }\n"
        "  int total() const { return n; }\n  int n = 0;\n};\n}\n",
        ["shop", "shop::Basket", "shop::Basket::Basket", "shop::Basket::add", "shop::Basket::total"],
    ),
    "c": (
        "struct basket { int n; };\n\nvoid basket_init(struct basket *b) { b->n = 0; }\n"
        "void basket_add(struct basket *b, int x) { b->n += x; }\n"
        "int basket_total(const struct basket *b) { return b->n; }\n",
        ["basket", "basket_init", "basket_add", "basket_total"],
    ),
    "ruby": (
        "module Shop\n  class Basket\n    def initialize\n      @items = []\n    end\n\n"
        "    def add(x)\n      @items << x\n    end\n\n    def self.create\n      new\n    end\n  end\nend\n",
        ["Shop", "Shop::Basket", "Shop::Basket#initialize", "Shop::Basket#add", "Shop::Basket.create"],
    ),
    "php": (
        "<?php\nnamespace App\\Models;\n\nclass Basket {\n  public function __construct() { $this->n = 0; }\n"
        "  public function add($x) { $this->n += $x; }\n  public static function total() { return 0; }\n}\n",
        [
            "App\\Models",
            "App\\Models\\Basket",
            "App\\Models\\Basket::__construct",
            "App\\Models\\Basket::add",
            "App\\Models\\Basket::total",
        ],
    ),
    "bash": (
        'basket_new() {\n  items=()\n}\nbasket_add() {\n  items+=("$1")\n}\n'
        'basket_total() {\n  echo "${#items[@]}"\n}\n',
        ["basket_new", "basket_add", "basket_total"],
    ),
}
_LAST_PART = re.compile(r"[^.:#\\()*]+$")


def _engines(language: str) -> list[str]:
    return ["auto", "tree-sitter"] if language == "python" else ["tree-sitter"]


@pytest.mark.parametrize("language", sorted(BASKETS))
def test_a_type_with_three_methods_in_one_chunk_names_each_by_its_qualified_name(language):
    src, expected = BASKETS[language]
    for engine in _engines(language):
        chunks = chunk_code(src, language, 4000, engine=engine)
        assert len(chunks) == 1
        assert chunks[0].metadata["defines"] == expected, engine


@pytest.mark.parametrize("language", sorted(BASKETS))
def test_a_split_type_names_each_method_in_the_chunk_that_holds_its_start(language):
    src, expected = BASKETS[language]
    for engine in _engines(language):
        chunks = chunk_code(src, language, 60, engine=engine)
        assert len(chunks) > 1
        named = [n for c in chunks for n in c.metadata["defines"]]
        assert set(named) == set(expected), engine
        methods = [n for n in expected if _LAST_PART.search(n).group() != n]  # type: ignore[union-attr]
        assert all(named.count(n) == 1 for n in methods), (engine, named)  # in one chunk only
        for c in chunks:
            for name in c.metadata["defines"]:
                bare = _LAST_PART.search(name).group()  # type: ignore[union-attr]
                assert bare in c.text, (engine, name, c.text)


def test_the_rust_impl_chunk_names_its_methods_as_well_as_its_type():
    src, _ = BASKETS["rust"]
    impl = [c for c in chunk_code(src, "rust", 4000) if c.metadata["kind"] == "impl"]
    assert impl and {"Basket::new", "Basket::add", "Basket::total"} <= set(impl[0].metadata["defines"])
    assert impl[0].metadata["qualname"] == "Basket"  # the existing keys keep their meaning


def test_php_without_its_open_tag_is_parsed_as_php():
    tagged, expected = BASKETS["php"]
    bare = tagged.removeprefix("<?php\n")
    chunks = chunk_code(bare, "php", 4000)
    assert [c.metadata.get("fallback") for c in chunks] == [None]
    assert chunks[0].metadata["grammar"] == "php_only"
    assert chunks[0].metadata["kind"] == "class"
    assert chunks[0].metadata["defines"] == expected
    with_tag = chunk_code(tagged, "php", 4000)
    assert "grammar" not in with_tag[0].metadata and with_tag[0].metadata["defines"] == expected


def test_php_template_with_html_before_the_tag_keeps_the_tag_grammar():
    src = "<html><body>\n<?php function greet($n) { return 'hi ' . $n; } ?>\n</body></html>\n"
    chunks = chunk_code(src, "php", 4000)
    assert "grammar" not in chunks[0].metadata
    assert [n for c in chunks for n in c.metadata["defines"]] == ["greet"]


def test_nested_functions_are_qualified_alike_by_both_python_engines():
    src = "def outer():\n    def inner():\n        class Local:\n            pass\n    return inner\n"
    for engine in ("auto", "tree-sitter"):
        (chunk,) = chunk_code(src, "python", 4000, engine=engine)
        assert chunk.metadata["defines"] == ["outer", "outer.inner", "outer.inner.Local"], engine


@in_every_language
def test_every_definition_is_named_in_a_chunk_in_source_order_at_any_budget(language, data):
    src = data.draw(program(language))
    whole = chunk_code(src, language, 100_000, engine="tree-sitter")
    assume(
        len(whole) == 1 and not whole[0].metadata.get("parse_errors") and "fallback" not in whole[0].metadata
    )
    names = whole[0].metadata["defines"]
    bare = {_LAST_PART.search(n).group() for n in names}  # type: ignore[union-attr]
    drawn = set(re.findall(r"^[ \t]*(?:export )?(?:function|fn|def|func|class) (\w+)", src, re.M))
    assert drawn <= bare
    chunks = chunked_within_contract(src, language, data.draw(st.integers(15, 600)))
    split = [n for c in chunks for n in c.metadata["defines"]]
    assert list(dict.fromkeys(split)) == names  # each chunk lists a name once; a Rust struct and its impl


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_python_engines_name_the_same_definitions(data):
    src = data.draw(program("python"))
    budget = data.draw(st.integers(40, 600))
    by_ast = [n for c in chunk_python(src, budget, 0) for n in c.metadata["defines"]]
    by_tree = chunk_code(src, "python", budget, engine="tree-sitter")
    assume(not any(c.metadata.get("parse_errors") or c.metadata.get("fallback") for c in by_tree))
    assert sorted(by_ast) == sorted(n for c in by_tree for n in c.metadata["defines"])


def test_bm25_finds_the_impl_chunk_by_a_method_name():
    src, _ = BASKETS["rust"]
    others = [
        "fn parse(input: &str) -> Vec<String> { input.split(',').map(String::from).collect() }\n",
        "struct Ledger { rows: Vec<i64> }\nimpl Ledger { fn sum(&self) -> i64 { self.rows.iter().sum() } }\n",
    ]
    chunks = [c for i, s in enumerate([src, *others]) for c in chunk_code(s, "rust", 4000, doc_id=f"f{i}.rs")]
    index = BM25Index(chunks)
    for query in ("Basket.add", "Basket::add", "add"):
        best = index.search(query, k=1)[0][0]
        assert best.doc_id == "f0.rs" and "Basket::add" in best.metadata["defines"], query


def test_every_language_with_a_template_has_a_basket_here():
    assert set(TEMPLATES) == set(BASKETS)
